import type { Db } from './index.ts';

/**
 * The passages of an agent's knowledge (`page_chunks`), as retrieval reads them: always in the
 * index generation served now, from the agent's own site and from the knowledge bases attached
 * to it. Each passage's words are stemmed by its page's language's configuration (`english`, Snowball's
 * Porter2, the stemmer retrieval uses on its side, or `french`), and a question's words are read in
 * each passage's own.
 */

export interface ChunkRow { id: string; text: string; section: string | null; url: string; title: string | null; ord: number; rank: number }

const sources = (db: Db, agentId: string) => db`
  select s.id, s.generation, s.passages_embedding from sites s where s.agent_id = ${agentId}
  union
  select s.id, s.generation, s.passages_embedding from sites s join agent_knowledge_bases k on k.kb_id = s.kb_id where k.agent_id = ${agentId}`;

/**
 * Words made safe for `websearch_to_tsquery`: letters, digits and inner hyphens only, without their accents, as
 * passages are indexed (migration 056).
 */
const clean = (words: string[]) => [...new Set(words.map((w) => w.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase()
  .replace(/[^\p{L}\p{N}-]+/gu, '').replace(/^-+|-+$/g, '')).filter(Boolean))];

/**
 * The passages holding any of `words` (a stemmed OR query over each passage's section and
 * text), or a stem beginning with one of `prefixes` (letters only: "allerg" finds "allergens"),
 * best first by `ts_rank_cd`, at most `limit`.
 */
export async function findChunksWithAnyWord(db: Db, agentId: string, words: string[], limit: number, prefixes: string[] = []): Promise<ChunkRow[]> {
  const list = clean(words);
  if (!list.length) return [];
  const starts = [...new Set(prefixes.filter((p) => /^[a-z]+$/.test(p)))].map((p) => `${p}:*`);
  const prefixed = (config: 'english' | 'french') => (starts.length
    ? db`websearch_to_tsquery(${config}::regconfig, ${list.join(' or ')}) || to_tsquery('simple', ${starts.join(' | ')})`
    : db`websearch_to_tsquery(${config}::regconfig, ${list.join(' or ')})`);
  // Each passage is matched in its own language: the question's words stemmed as English for English passages, as French for French ones.
  // `q` is materialized so that each query is parsed once (issue 39): inlined, a prepared statement's generic plan parsed
  // both again for every passage, in the filter and in the rank (96 of 115 ms for 40 words, a site of 144 passages).
  const rows = await db<ChunkRow[]>`
    with src as (${sources(db, agentId)}), q as materialized (select ${prefixed('english')} as en, ${prefixed('french')} as fr)
    select c.id::text as id, c.text, c.section, c.ord, p.url, p.title,
      ts_rank_cd(c.tsv, case when c.language = 'french'::regconfig then q.fr else q.en end) as rank
    from q, src
    join page_chunks c on c.site_id = src.id and c.generation = src.generation
    join site_pages p on p.id = c.page_id
    where (c.language <> 'french'::regconfig and c.tsv @@ q.en) or (c.language = 'french'::regconfig and c.tsv @@ q.fr)
    order by rank desc, p.url, c.ord
    limit ${limit}`;
  return rows.map((r) => ({ ...r, rank: Number(r.rank) }));
}

/**
 * How many passages the agent's knowledge holds in all, and how many hold each word (its
 * document frequency, for inverse document frequency weights). Words PostgreSQL reads as stop
 * words count 0.
 */
export async function countChunksWithWords(db: Db, agentId: string, words: string[]): Promise<{ total: number; df: Map<string, number> }> {
  const list = clean(words);
  const [totals, counts] = await Promise.all([
    db<{ n: number }[]>`
      with src as (${sources(db, agentId)})
      select count(*)::int as n from src join page_chunks c on c.site_id = src.id and c.generation = src.generation`,
    // Each word's query is parsed once per language of the passages (`q`, materialized), not once per passage and word: the
    // same counts, 5,760 parses (and as many notices for a stop word) fewer for 40 words and 144 passages (issue 39).
    list.length
      ? db<{ word: string; n: number }[]>`
        with src as (${sources(db, agentId)}), chunks as materialized (
          select c.tsv, c.language from src join page_chunks c on c.site_id = src.id and c.generation = src.generation
        ), q as materialized (
          select w.word, l.language, plainto_tsquery(l.language, w.word) as query
          from unnest(${list}::text[]) as w(word), (select distinct language from chunks) as l
        )
        select w.word, count(c.language)::int as n
        from unnest(${list}::text[]) with ordinality as w(word, at)
        left join q on q.word = w.word
        left join chunks c on c.language = q.language and c.tsv @@ q.query
        group by w.word, w.at order by w.at`
      : Promise.resolve([]),
  ]);
  return { total: totals[0]?.n ?? 0, df: new Map(counts.map((r) => [r.word, r.n])) };
}

/**
 * The index generations an agent's knowledge is served from: its own site's and its knowledge bases', each with how
 * many of its passages still wait for their vector.
 */
export async function knowledgeSources(db: Db, agentId: string): Promise<{ id: string; generation: number; embedding: number }[]> {
  const rows = await db<{ id: string; generation: number; passages_embedding: number }[]>`${sources(db, agentId)}`;
  return rows.map((r) => ({ id: r.id, generation: r.generation, embedding: r.passages_embedding }));
}

/** The vectors of one generation's passages that have one. */
export async function vectorsOfGeneration(db: Db, siteId: string, generation: number): Promise<{ id: string; embedding: Uint8Array }[]> {
  return db<{ id: string; embedding: Uint8Array }[]>`
    select id::text as id, embedding from page_chunks
    where site_id = ${siteId} and generation = ${generation} and embedding is not null order by page_chunks.id`;
}

/** Every passage of one site's generation, with its page and its vector (null when stored without one). */
export async function chunksOfGeneration(db: Db, siteId: string, generation: number):
  Promise<{ id: string; text: string; section: string | null; url: string; title: string | null; embedding: Uint8Array | null }[]> {
  return db<{ id: string; text: string; section: string | null; url: string; title: string | null; embedding: Uint8Array | null }[]>`
    select c.id::text as id, c.text, c.section, p.url, p.title, c.embedding
    from page_chunks c join site_pages p on p.id = c.page_id
    where c.site_id = ${siteId} and c.generation = ${generation} order by c.id`;
}

/**
 * The passages standing within `span` places of each of `ids` on its page (the passage itself left out), each with the
 * id of the passage it stands near (`near`): the window a passage is widened to for a model (`retrievePassages`).
 */
export async function chunksNear(db: Db, ids: string[], span: number): Promise<(ChunkRow & { near: string })[]> {
  if (!ids.length) return [];
  return db<(ChunkRow & { near: string })[]>`
    select n.id::text as id, n.text, n.section, n.ord, p.url, p.title, 0::float8 as rank, a.id::text as near
    from page_chunks a
    join page_chunks n on n.page_id = a.page_id and n.ord between a.ord - ${span}::int and a.ord + ${span}::int and n.id <> a.id
    join site_pages p on p.id = a.page_id
    where a.id = any(${ids}::bigint[])`;
}

/** Passages by id, with their page. */
export async function chunksByIds(db: Db, ids: string[]): Promise<ChunkRow[]> {
  if (!ids.length) return [];
  return db<ChunkRow[]>`
    select c.id::text as id, c.text, c.section, c.ord, p.url, p.title, 0::float8 as rank
    from page_chunks c join site_pages p on p.id = c.page_id where c.id = any(${ids}::bigint[])`;
}

