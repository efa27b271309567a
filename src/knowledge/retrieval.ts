import type postgres from 'postgres';
import type { Db } from '../db/index.ts';

export interface Passage {
  text: string;
  url: string;
  title: string | null;
  /** ts_rank_cd of the passage for the query: higher is better; comparable within one answer only. */
  score: number;
}

/**
 * The passages of an agent's knowledge that best answer `query`, best first: from its own site
 * and from the knowledge bases attached to it, always in the index generation served now (a
 * re-crawl in progress is invisible until it swaps in). Every term of the query is required
 * first; when that finds nothing, any term will do, ranked by how many and how close.
 */
export async function searchKnowledge(db: Db, agentId: string, query: string, opts: { limit?: number } = {}): Promise<Passage[]> {
  const limit = Math.min(Math.max(opts.limit ?? 5, 1), 50);
  const text = query.slice(0, 1000);
  if (!text.trim()) return [];
  const all = await passages(db, agentId, db`websearch_to_tsquery('english', ${text})`, limit);
  if (all.length) return all;
  // Any of the query's words (stemmed, stop words dropped), OR-ed.
  const anyTerm = db`(select to_tsquery('english', string_agg(quote_literal(lexeme), ' | '))
    from unnest(tsvector_to_array(to_tsvector('english', ${text}))) as lexeme)`;
  return passages(db, agentId, anyTerm, limit);
}

async function passages(db: Db, agentId: string, tsquery: postgres.PendingQuery<postgres.Row[]>, limit: number): Promise<Passage[]> {
  const rows = await db<{ text: string; url: string; title: string | null; score: number }[]>`
    with sources as (
      select s.id, s.generation from sites s where s.agent_id = ${agentId}
      union
      select s.id, s.generation from sites s join agent_knowledge_bases k on k.kb_id = s.kb_id where k.agent_id = ${agentId}
    ), q as (select ${tsquery} as query)
    select c.text, p.url, p.title, ts_rank_cd(c.tsv, q.query) as score
    from q, sources src
    join page_chunks c on c.site_id = src.id and c.generation = src.generation
    join site_pages p on p.id = c.page_id
    where q.query is not null and c.tsv @@ q.query
    order by score desc, p.url, c.ord
    limit ${limit}`;
  return rows.map((r) => ({ text: r.text, url: r.url, title: r.title, score: Number(r.score) }));
}
