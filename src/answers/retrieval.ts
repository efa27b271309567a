import type { ChunkRow } from '../db/page-chunks.ts';
import type { KnowledgeStore } from './store.ts';
import { analyzeQuestion, BRANCH, isEnglishWord, PAYMENT_WORDS, stem, type Question, type QueryTerm } from './analysis.ts';
import { vocabularyOf, withSiteSpelling, type Vocabulary } from './spelling.ts';
import { languageOfQuestion, languageOfWords, type Lang } from './phrases.ts';
import { answerByMeaning, dot, embedQuestion, sentenceCosines, sentenceEncoderOn, vectorOf } from './meaning.ts';
import { ANSWER_THRESHOLD, kindredPrefixes, rankSentences, readAhead, VAGUE_VERB, type CorpusStats, type FaqEntry, type RankedSentence } from './rank.ts';
import { isPost, READER_MODEL_THRESHOLD, readerProbabilities, type ReaderInput } from './reader.ts';
import { entitiesAsked, entityMatch, preferAsked, siteEntities, type SiteEntities } from './entities.ts';
import { opensQuestion, questionParts } from './parts.ts';

export interface Passage {
  /** The answering sentence with its neighbours (or, from other sources, any passage text). */
  text: string;
  url: string;
  title: string | null;
  /**
   * Calibrated 0 to 1 for passages from `searchKnowledge` (see rank.ts); other sources may use any scale. A sentence
   * found by its meaning (meaning.ts) keeps its lexical score, below ANSWER_THRESHOLD.
   */
  score: number;
  /** "Page title › Heading" of the passage. */
  section?: string | null;
  /** The one sentence that answers, when retrieval found it. */
  answer?: string;
  /** Names of the question the site never mentions with its subject. */
  missing?: string[];
  /** Those of them the site does not mention at all. */
  absent?: string[];
  /** The FAQ entry the answering sentence stands in (`faqEntryOf`, rank.ts). */
  entry?: FaqEntry;
  /** The question as retrieval read it: its shorthand written out and its slips mended against the site's words. */
  asked?: string;
  /** The site's entities (locations, products…) the question names, or, naming none, the whole message it is a part of. */
  named?: string[];
}

/** Candidate passages read from the database per question, before sentence ranking; as many sentences are read by meaning. */
const CANDIDATES = 40;
/**
 * As many for the passages a model is given (`retrievePassages`): the sentence ranking's fused place counts for twice
 * the others', and it only places what full text fetched. Dev sites' recall@5: 260 of 269 at 40, 262 from 50 to 120.
 */
const MODEL_CANDIDATES = 80;

/**
 * The sentences of an agent's knowledge that answer `query`, best first, each with its
 * neighbours, page and section: from its own site and from the knowledge bases attached to it,
 * always in the index generation served now. The question's chat shorthand is written out and
 * its slips mended against the site's words first (`spelling.ts`). Candidates are the passages holding any of the
 * question's words or their synonyms (PostgreSQL full text, stemmed), or a word of their family
 * ("allergy" / "allergens", `kindredPrefixes`); their sentences are
 * ranked by `rankSentences` with the whole knowledge's word frequencies. Only sentences scoring
 * ANSWER_THRESHOLD or more come back, or, when none does, the one sentence whose meaning answers it
 * (`answerByMeaning`): an empty answer means the site does not say. Those about another entity
 * than the one the question names come after the others (`entities.ts`). With ANSWER_READER=learned
 * (and the sentence encoder on), the fitted reader chooses instead (`learnedAnswers`).
 */
export async function searchKnowledge(store: KnowledgeStore, agentId: string, query: string, opts: { limit?: number } & AskedIn = {}): Promise<Passage[]> {
  const limit = Math.min(Math.max(opts.limit ?? 5, 1), 50);
  if (reader === 'learned' && sentenceEncoderOn()) return learnedAnswers(store, agentId, query, limit, opts);
  // The passages of the hybrid retrieval: those holding the question's words, and the first by words, full text and
  // meaning fused (a passage that writes "hydro-jetting" for the visitor's "hydrojetting", or "children's cut" for "kids
  // haircut", is found by its meaning), every sentence of them ranked by its words.
  const retrieval = await fusedRetrieval(store, agentId, query, READ_PASSAGES, opts.story ?? '');
  const { text, question, knowledge, stats, known, chunks } = retrieval;
  if (!question.terms.length || !known.size || !stats) return [];
  const ranked = rankSentences(question, [...known.values()], stats, Math.max(limit, CANDIDATES));
  // A blog or news post tells of other businesses, past offers and events: what it says is no answer of the business's
  // own, unless the question asks about its posts ("what did your blog say about…").
  // Nor when the visitor quotes a figure only a post gives ("can I still get the $79 tune-up?", "is the 20% off still on?"):
  // the post is what they ask about, and it says whether it still holds.
  const quoted = figuresIn(text);
  const elsewhere = new Set(quoted.size ? ranked.filter((r) => !isPostPage(r.url)).flatMap((r) => [...figuresIn(r.sentence)]) : []);
  const onlyInPosts = [...quoted].filter((f) => !elsewhere.has(f));
  const eligible = POST_ASKED.test(text) ? ranked
    : ranked.filter((r) => !isPostPage(r.url) || (onlyInPosts.length > 0 && onlyInPosts.some((f) => figuresIn(r.sentence).has(f))));
  // A question naming one location (product, person…) is answered from that one's passages before another's.
  const asking = entityText(text, opts, knowledge.entities);
  const found = preferAsked(asking, eligible.filter((r) => r.score >= ANSWER_THRESHOLD), knowledge.entities).slice(0, limit);
  // The second reading by meaning weighs the sentences of the passages holding the question's words against each other,
  // as it was calibrated: those found by meaning alone would be look-alikes it reads as near.
  const fromWords = new Set<object>(chunks);
  const byMeaning = found.length ? null : await answerByMeaning(question, eligible.filter((r) => r.source && fromWords.has(r.source)));
  const agreed = found.length || byMeaning ? null : await agreedAnswer(question, retrieval, eligible, asking, knowledge.entities);
  const named = [...entitiesAsked(asking, knowledge.entities)];
  return (byMeaning ? [byMeaning] : agreed ? [agreed] : found).map((r) => ({ ...passageOf(r), asked: text, named }));
}

/**
 * A passage the rankings agree on: among the first AGREE_PLACES of at least two of the three (its best sentence by the
 * question's words, full text, closeness of meaning). Each alone finds look-alikes; two that put the same passage first
 * seldom both do (bench/README.md, "Tenth pass").
 */
const AGREE_PLACES = 3;
/** How many of the fused passages are read for it: the first two (the third added look-alikes on the dev sites). */
const AGREED_READ = 2;
/** The least a sentence of it must share with the question by its words (`rankSentences`' score). */
const AGREED_FLOOR = 0.3;
/** In English, the encoder's language, the sentence closest in meaning answers when this close (cosine). */
const AGREED_CLOSE = 0.45;
/** As close, when the question asks with a word the site never writes. */
const AGREED_CLOSER = 0.55;
/** In another language, where the encoder's closeness says little, the best by words when it reaches this. */
const AGREED_FOREIGN = 0.35;

/** The terms of what a question asks (no circumstance, no word for the kind of answer) that no passage writes, nor their synonyms. */
function unwritten(question: Question, stats: CorpusStats): QueryTerm[] {
  const written = (s: string) => (stats.df.get(s) ?? 0) > 0;
  return question.terms.filter((t) => !t.incidental && !t.typeWord && !written(t.stem)
    && ![...t.derived].some(written) && !t.synonymWords.some((w) => written(stem(w))));
}

/** The ids that stand among the first `places` of at least two of `rankings`, in `ids`' order. */
export function agreedIds(ids: string[], rankings: string[][], places = AGREE_PLACES): string[] {
  const first = rankings.map((r) => new Set(r.slice(0, places)));
  return ids.filter((id) => first.filter((f) => f.has(id)).length >= 2);
}

/**
 * A third reading, when neither the words nor the meaning of single sentences answer: a passage among the first fused
 * ones that two rankings agree on, and its sentence that answers best (closest in meaning in English, best by its
 * words otherwise), if it shares enough with the question, holds the kind of answer wanted, asks nothing itself and
 * is no other entity's.
 */
async function agreedAnswer(question: Question, retrieval: Awaited<ReturnType<typeof fusedRetrieval>>, eligible: RankedSentence[], asking: string, entities: SiteEntities): Promise<RankedSentence | null> {
  const { fused, rankings, english, known, vector, stats } = retrieval;
  const agreed = agreedIds(fused.slice(0, AGREED_READ).map(([id]) => id), rankings);
  const asked = entitiesAsked(asking, entities);
  // A word of what is asked that the site never writes, itself or a synonym ("the Wi-Fi password", where the site only
  // says there is Wi-Fi): the sentence must then be closer still, its meaning saying what its words do not.
  const close = stats && unwritten(question, stats).length ? AGREED_CLOSER : AGREED_CLOSE;
  for (const id of agreed) {
    const chunk = known.get(id);
    const pool = eligible.filter((r) => r.source === chunk && r.score >= AGREED_FLOOR && !r.sentence.trim().endsWith('?')
      && (!question.want || question.yesNo || r.typed) && entityMatch(asked, r, entities) !== 'other');
    if (!pool.length) continue;
    if (!english) {
      if (pool[0]!.score >= AGREED_FOREIGN) return pool[0]!;
      continue;
    }
    // The encoder off or failing: the words' answer (none) stands.
    // An FAQ answer is read with its question ("Do you sell gift cards? Yes, at both showrooms, in multiples of $25."):
    // alone, it seldom says what it answers. Not when a word asked is written nowhere: the entry's question then says
    // what the site is asked about ("Is there Wi-Fi?"), not what the visitor asks ("the Wi-Fi password").
    const read = (r: RankedSentence) => (r.entry && close === AGREED_CLOSE ? `${r.entry.question} ${r.sentence}` : r.sentence);
    const cosines = vector ? await sentenceCosines(vector, pool.map(read)) : null;
    if (!cosines) return null;
    const closest = cosines.reduce((k, c, i) => (c > cosines[k]! ? i : k), 0);
    if (cosines[closest]! >= close) return pool[closest]!;
  }
  return null;
}

/** The figures of two digits or more a text writes ("$79", "20 %", "-20%", "39 bucks"), without thousands' commas. */
function figuresIn(text: string): Set<string> {
  return new Set([...text.replace(/(\d),(?=\d{3}(?!\d))/g, '$1').matchAll(/\d{2,}(?:[.,]\d+)?/g)].map((m) => m[0].replace(',', '.')));
}

/**
 * A blog's or a news section's page, its index included (not "articles": help centres keep their answers there).
 */
const POST_PAGE = /\/(blog|blogs|news|posts?|journal|stories|actualites|actus?)(\/|$)/i;
/** Whether `url` is a post's page (POST_PAGE). */
export const isPostPage = (url: string): boolean => POST_PAGE.test(new URL(url, 'http://x').pathname);
/** A question about the site's posts themselves. */
const POST_ASKED = /\b(blog|blogs|article|articles|post|posts|news|newsletter|actualit\w*|billet)\b/i;

/** The offline runtime's reader (ANSWER_READER): the sentence ranking's threshold, or the fitted model. */
let reader: 'ranked' | 'learned' = 'ranked';
export function useAnswerReader(kind: 'ranked' | 'learned'): void {
  reader = kind;
}

/**
 * The learned reader's answers (`reader.ts`): every candidate sentence gets the probability that it is the one that
 * answers; the best are given when the probability that some candidate answers reaches the model's threshold.
 */
async function learnedAnswers(store: KnowledgeStore, agentId: string, query: string, limit: number, asked: AskedIn): Promise<Passage[]> {
  const { text, candidates, entities } = await readerCandidates(store, agentId, query, asked.story);
  const p = readerProbabilities(candidates.map((c) => c.input));
  // The site answers when some candidate does, however its probability is shared among look-alikes (a table's rows).
  if (p.reduce((sum, x) => sum + x, 0) < READER_MODEL_THRESHOLD) return [];
  const scored = candidates.map((c, i) => ({ ...c, p: p[i]! })).sort((a, b) => b.p - a.p);
  // A question naming one location (product, person…) is answered from that one's passages before another's.
  const asking = entityText(text, asked, entities);
  const named = [...entitiesAsked(asking, entities)];
  return preferAsked(asking, scored.map((c) => c.ranked), entities).slice(0, limit).map((r) => ({ ...passageOf(r), asked: text, named }));
}

/**
 * Where a part of a message stands (`parts.ts`): what the visitor told besides the questions (`story`), and the whole
 * message (`message`).
 */
export interface AskedIn { story?: string; message?: string }

/**
 * The text whose names say which entity a part of a message asks about: the part itself, or, when it names none, the
 * part with the whole message ("when does riverside open on sunday and can i still get to my unit after the office
 * closes": the second part asks about Riverside too; "i rent at riverside, can anyone there notarize…").
 */
function entityText(text: string, asked: AskedIn, entities: SiteEntities): string {
  const context = asked.message ?? asked.story;
  return context && !entitiesAsked(text, entities).size ? `${text} ${context}` : text;
}

/**
 * A question read with the story told before it: the story's words are read too (what the question's "it" or "that"
 * is, who it is for), but weigh as circumstances do (`incidental`), never as what is asked; names keep their weight
 * (the place the story names is the one asked about). Its kind of answer and yes/no are the question's own.
 */
export function questionIn(text: string, story: string): Question {
  const own = analyzeQuestion(text);
  if (!story.trim()) return own;
  const stems = new Set(own.terms.map((t) => t.stem));
  const whole = analyzeQuestion(`${text.replace(/[.!?…\s]+$/, '')}. ${story}`);
  // A question that names nothing but the kind of answer it wants ("…and how much is it?", "what does that cost",
  // "c'est combien ?") asks it of the question just before it, when the story ends with one: that question's words are
  // then its subject, not its circumstances. A story that asks nothing stays a circumstance.
  const last = story.split(/(?<=[.!?…])\s+/).pop() ?? '';
  const before = !own.terms.some((t) => !t.typeWord && !t.incidental && t.senses < VAGUE_VERB) && opensQuestion(last)
    ? new Set(analyzeQuestion(last).terms.filter((t) => !t.typeWord).map((t) => t.stem)) : new Set<string>();
  return {
    ...own, text: whole.text, forChild: own.forChild || whole.forChild,
    terms: whole.terms.map((t) => (stems.has(t.stem) || t.proper || before.has(t.stem) ? t : { ...t, incidental: true })),
  };
}

/** A sentence that may answer, as the sentence ranking found it, with what the reader knows of it. */
export interface ReaderCandidate { ranked: RankedSentence; input: ReaderInput }

/** Passages read for the reader's candidates: the fused retrieval's first, whole. */
const READ_PASSAGES = 8;
/** Candidates whose own meaning is read (the encoder's cost is per sentence): the first by words, and the best sentence of the first fused passages. */
const ENCODED_SENTENCES = 8;
const ENCODED_PASSAGES = 4;

/**
 * The candidate sentences for a question (after its spelling is mended against the site's words): every sentence of
 * the passages full text finds and of the first passages of the fused retrieval (words, full text and meaning), each
 * scored by the sentence ranking, with its passage's place and closeness of meaning, its entity and its kind.
 */
export async function readerCandidates(store: KnowledgeStore, agentId: string, query: string, story = ''):
  Promise<{ text: string; question: Question; candidates: ReaderCandidate[]; entities: SiteEntities }> {
  const { text, question, knowledge, stats, dense, vector, fused: top, known } = await fusedRetrieval(store, agentId, query, READ_PASSAGES, story);
  if (!question.terms.length) return { text, question, candidates: [], entities: knowledge.entities };
  const fused = top.map(([id]) => id);
  const pool = [...known.values()];
  if (!pool.length) return { text, question, candidates: [], entities: knowledge.entities };
  // Every sentence of the pool, ranked with the whole knowledge's word frequencies.
  const all = rankSentences(question, pool, stats, 400);
  const poolId = new Map(pool.map((c) => [c as object, c.id]));
  const cosine = new Map(dense.map((d, i) => [d.id, { cos: d.cos, rank: i }]));
  const asked = entitiesAsked(text, knowledge.entities);
  // The first candidates are read by meaning too: the first by their words, and the best of each first fused passage.
  const firstOf = new Map<string, number>();
  all.forEach((r, i) => { const id = r.source && poolId.get(r.source); if (id && fused.slice(0, ENCODED_PASSAGES).includes(id) && !firstOf.has(id)) firstOf.set(id, i); });
  const encoded = [...new Set([...all.slice(0, ENCODED_SENTENCES).keys(), ...firstOf.values()])];
  const cosines = vector ? await sentenceCosines(vector, encoded.map((i) => all[i]!.sentence)) : null;
  const byCosine = new Map<number, { cos: number; rank: number }>();
  if (cosines) {
    const order = encoded.map((i, k) => ({ i, cos: cosines[k]! })).sort((a, b) => b.cos - a.cos);
    order.forEach((o, rank) => byCosine.set(o.i, { cos: o.cos, rank }));
  }
  const candidates = all.map((r, i): ReaderCandidate => {
    const id = (r.source && poolId.get(r.source)) ?? '';
    const fusedRank = fused.indexOf(id);
    const entity = entityMatch(asked, r, knowledge.entities);
    return {
      ranked: r,
      input: {
        lexical: r.score, lexicalRank: i, fusedRank: fusedRank < 0 ? Infinity : fusedRank,
        passageCosine: cosine.get(id)?.cos ?? 0, denseRank: cosine.get(id)?.rank ?? Infinity,
        sentenceCosine: byCosine.get(i)?.cos ?? 0, sentenceRank: byCosine.get(i)?.rank ?? Infinity,
        wantsKind: question.want !== null, holdsKind: r.typed, yesNo: question.yesNo,
        entityAsked: entity === 'asked', entityOther: entity === 'other', post: isPost(r.url),
        missing: r.missing.length > 0, absent: r.absent.length > 0, asks: r.sentence.trim().endsWith('?'),
      },
    };
  });
  return { text, question, candidates, entities: knowledge.entities };
}

/** The passages holding the question's words (full text, best first) and their sentences, ranked. */
async function lexicalCandidates(store: KnowledgeStore, agentId: string, question: Question, limit: number, candidates = CANDIDATES):
  Promise<{ chunks: ChunkRow[]; ranked: RankedSentence[]; stats?: CorpusStats }> {
  // A shop or café asked about is read on the pages about the business's locations too, whatever they call them; a thing
  // asked about, on those that deny its class ("We do not serve alcohol"); the means of payment asked for, on those that
  // name them ("What forms of payment do you take?": "We accept cash, debit…", which has none of the question's words).
  const words = [...new Set([
    ...question.terms.flatMap((t) => [t.word, ...t.synonymWords, ...(t.classWords ?? []), ...(t.premises ? BRANCH : [])]),
    ...(question.want === 'payment' ? PAYMENT_WORDS : []),
  ])];
  if (!words.length) return { chunks: [], ranked: [] };
  const [chunks, counts] = await Promise.all([
    store.findChunksWithAnyWord(agentId, words, candidates, kindredPrefixes(question.terms)),
    store.countChunksWithWords(agentId, words),
  ]);
  const df = new Map<string, number>();
  for (const [word, n] of counts.df) {
    const s = stem(word);
    df.set(s, Math.max(df.get(s) ?? 0, n));
  }
  const stats = { total: counts.total, df };
  if (!chunks.length) return { chunks, ranked: [], stats };
  return { chunks, ranked: rankSentences(question, chunks, stats, Math.max(limit, candidates)), stats };
}

/**
 * Reciprocal rank fusion (Cormack et al., 2009): its constant, how little the first places of one ranking outweigh the
 * next, and each ranking's weight: the passage's best sentence by the question's words, full text, closeness of meaning.
 * Calibrated on the development sites' fact questions by the LLM path's recall@5 (bench/answers/recall-ranks.ts,
 * bench/README.md "Seventh pass"): the paper's k = 60 with equal weights held the fact in the first five passages for
 * 233 of 269, k = 10 with the sentence ranking weighted twice for 252; every k from 5 to 10 with that ranking weighted
 * 1.5 to 3 gives 250 to 253, so the choice sits on a plateau, not a peak. The sentence ranking reads the question as
 * the offline reader does (answer types, entities, polarity); full text and meaning, each alone, find look-alikes.
 */
let fusion = { k: 10, weights: [2, 1, 1] };

/** For the calibration script only: the fusion's constant and weights (the three rankings' order above). */
export function useFusion(k: number, weights: number[]): void {
  fusion = { k, weights };
}
/**
 * What closeness of meaning weighs for a question in a language other than English, against English's: the packaged
 * encoder (Universal Sentence Encoder lite) was trained on English. On the French development site, recall@5 46 of 48
 * at 1 (as English), 48 at 0.5, 47 at 0 (bench/README.md, "Ninth pass").
 */
const FOREIGN_MEANING = 0.5;
/** How many places of each ranking take part in the fusion. */
const FUSED_DEPTH = 40;

/**
 * The `limit` passages most likely to answer `query`, best first, with no answer threshold: for a
 * model that reads them and judges itself whether they answer (the LLM runtime). Three rankings of
 * the agent's passages are fused by reciprocal rank: their best sentence's score (`rankSentences`,
 * the offline runtime's reading), PostgreSQL full text over the question's words and synonyms, and
 * the closeness of the passage's meaning to the question's (the sentence encoder's vectors, computed
 * after the crawl: a passage still without one is found by the other two). A passage comes whole (section and text), with the sentence that answers best
 * where the words found one.
 */
export async function retrievePassages(store: KnowledgeStore, agentId: string, query: string, opts: { limit?: number } = {}): Promise<Passage[]> {
  const limit = Math.min(Math.max(opts.limit ?? 5, 1), 50);
  // A message that tells a story before it asks, or asks two things: each part's passages, then the whole message's,
  // taken in turn (the first of each, then the second of each…), so that every part has its passages among the first.
  const { asks: parts, story } = questionParts(query);
  if (parts.length === 1 && !story) return passagesFor(store, agentId, query, {}, limit);
  // A part that names nothing but the kind of answer it wants ("… a massage, and how much?") asks it of the part before.
  const asks = parts.map((ask, i) => (i > 0 && !analyzeQuestion(ask).terms.some((t) => !t.typeWord) ? `${parts[i - 1]} ${ask}` : ask));
  const lists = await Promise.all([
    ...asks.map((ask) => passagesFor(store, agentId, ask, { story, message: query }, limit)),
    passagesFor(store, agentId, query, {}, limit),
  ]);
  const out: Passage[] = [];
  const seen = new Set<string>();
  const held = new Set<string>();
  for (let i = 0; out.length < limit && lists.some((l) => i < l.length); i++) {
    for (const list of lists) {
      const p = list[i];
      const key = p && `${p.url}#${p.section ?? ''}#${p.text.slice(0, 80)}`;
      const window = p && windows.get(p);
      if (!p || !key || seen.has(key) || out.length >= limit) continue;
      if (window && held.has(window.id)) continue;
      seen.add(key);
      for (const id of window?.held ?? []) held.add(id);
      out.push(p);
    }
  }
  return out;
}

/** The `limit` best fused passages for `text` (a message, or one part of it `asked` in a message), each widened on its page. */
async function passagesFor(store: KnowledgeStore, agentId: string, text: string, asked: AskedIn, limit: number): Promise<Passage[]> {
  // Read deeper than the limit: passages about another entity than the one asked go after the others.
  const { text: spelt, knowledge, fused, known, best } = await fusedRetrieval(store, agentId, text, limit * 3, asked.story, MODEL_CANDIDATES);
  const passages = fused.flatMap(([id, score]) => {
    const c = known.get(id);
    if (!c) return [];
    const r = best.get(id);
    return [{ id, ord: c.ord, text: c.text, url: c.url, title: c.title, score, section: c.section, ...(r ? { answer: r.sentence } : {}) }];
  });
  return widened(store, preferAsked(entityText(spelt, asked, knowledge.entities), passages, knowledge.entities), limit);
}

/** How many places on either side of a passage its window may reach (`widened`). */
const WINDOW_SPAN = 3;
/** The characters a passage's window grows to: the crawler's own longest passage (`chunkText`'s default). */
const WINDOW_CHARS = 1200;

/** The passage each given passage was found as, and those its window holds (for the parts' lists merged). */
const windows = new WeakMap<Passage, { id: string; held: string[] }>();

/**
 * The `limit` first passages, each widened into the passages next to it on its page while the whole stays within
 * WINDOW_CHARS, alternately the one after and the one before, and none past a gap: the passage a word or meaning found
 * is often a heading's first lines, or a sentence whose figures stand in the passage after ("tenants get a little
 * something extra" / "Tenant discount: 10% off"), and a model judges better from the section than from a fragment.
 * A passage that an earlier one's window already holds is left out, and the next takes its place. A neighbour under
 * another heading than the passage's own keeps its heading, as the window's first line for it.
 */
async function widened(store: KnowledgeStore, passages: (Passage & { id: string; ord: number })[], limit: number): Promise<Passage[]> {
  const pool = passages.slice(0, limit * 2);
  const near = new Map<string, ChunkRow[]>();
  for (const row of await store.chunksNear(pool.map((p) => p.id), WINDOW_SPAN)) near.set(row.near, [...near.get(row.near) ?? [], row]);
  const out: Passage[] = [];
  const held = new Set<string>();
  for (const { id, ord, ...passage } of pool) {
    if (out.length >= limit) break;
    if (held.has(id)) continue;
    const byOrd = new Map((near.get(id) ?? []).map((r) => [r.ord, r]));
    const window: { id: string; text: string; section: string | null }[] = [{ id, text: passage.text, section: passage.section ?? null }];
    // At most: each passage led by its heading, and a line between two (`windowed`).
    const lengthOf = (w: { text: string; section?: string | null }) => w.text.length + headingOf(w.section ?? null).length + 2;
    let size = lengthOf(passage);
    let [before, after] = [ord - 1, ord + 1];
    for (let grew = true; grew;) {
      grew = false;
      for (const side of ['after', 'before'] as const) {
        const row = byOrd.get(side === 'after' ? after : before);
        const grown = row && size + lengthOf(row);
        if (!row || grown! > WINDOW_CHARS) continue;
        if (side === 'after') { window.push(row); after++; } else { window.unshift(row); before--; }
        size = grown!;
        grew = true;
      }
    }
    for (const w of window) held.add(w.id);
    const given = window.length === 1 ? passage : { ...passage, ...windowed(window) };
    windows.set(given, { id, held: window.map((w) => w.id) });
    out.push(given);
  }
  return out;
}

/**
 * The passages of a window as one passage: under the section path they share, each led by its own heading where it
 * stands under a deeper one than that and than the passage before it, and the words the chunker repeats from one
 * passage at the start of the next given once.
 */
function windowed(window: { text: string; section: string | null }[]): { text: string; section: string | null } {
  const paths = window.map((w) => w.section?.split(' › ') ?? []);
  let shared = paths[0]!.length;
  for (const p of paths) while (shared > 0 && p.slice(0, shared).join(' › ') !== paths[0]!.slice(0, shared).join(' › ')) shared--;
  const section = paths[0]!.slice(0, shared).join(' › ') || null;
  let text = '';
  window.forEach((w, i) => {
    const heading = w.section !== section && (i === 0 || w.section !== window[i - 1]!.section) ? headingOf(w.section) : '';
    const piece = heading && !w.text.startsWith(heading) ? `${heading}\n${w.text}` : w.text;
    const repeated = text ? overlapOf(text, piece) : 0;
    text = !text ? piece : repeated ? text + piece.slice(repeated) : `${text}\n${piece}`;
  });
  return { text, section };
}

/** The last heading of a section path ("Packing Supplies › Tenant discount": "Tenant discount"). */
const headingOf = (section: string | null): string => section?.split(' › ').pop() ?? '';

/** How many of `next`'s first characters repeat `text`'s last ones (the chunker's overlap: 20 to 300 characters). */
function overlapOf(text: string, next: string): number {
  for (let n = Math.min(300, text.length, next.length); n >= 20; n--) if (text.endsWith(next.slice(0, n))) return n;
  return 0;
}

/**
 * The question (its spelling mended against the site's words) and the `depth` first passages of the three rankings
 * fused: the best sentence per passage, full text, and closeness of meaning. `known` holds every passage read (those
 * full text found, and the fused ones), `best` each passage's best sentence by its words, `rankings` the three rankings'
 * ids (as fused), `english` whether the question is read in the encoder's language.
 */
/** Exported for the dev probe (bench/answers/probe.ts). */
export async function fusedRetrieval(store: KnowledgeStore, agentId: string, query: string, depth: number, story = '', candidates = CANDIDATES) {
  const knowledge = await knowledgeIndex(store, agentId);
  const text = spelled(query.slice(0, 1000), knowledge);
  const question = questionIn(text, story ? spelled(story.slice(0, 1000), knowledge) : '');
  const [{ chunks, ranked, stats }, { scores: dense, question: vector }] = await Promise.all([
    question.terms.length ? lexicalCandidates(store, agentId, question, candidates, candidates) : Promise.resolve({ chunks: [] as ChunkRow[], ranked: [] as RankedSentence[], stats: undefined }),
    denseScores(knowledge.indexes, text),
  ]);
  const idOf = new Map(chunks.map((c) => [c as object, c.id]));
  const bySentences: string[] = [];
  const best = new Map<string, RankedSentence>();
  for (const r of ranked) {
    const id = r.source && idOf.get(r.source);
    if (id === undefined || best.has(id)) continue;
    best.set(id, r);
    bySentences.push(id);
  }
  // The encoder was trained on English: a question in another language is read by its meaning at half its weight.
  const english = languageOfQuestion(text, knowledge.language) === 'en';
  const weights = english ? fusion.weights : fusion.weights.map((w, i) => (i === 2 ? w * FOREIGN_MEANING : w));
  const rankings = [bySentences, chunks.map((c) => c.id), dense.map((d) => d.id)];
  const fused = fuseRankings(rankings, weights).slice(0, depth);
  const known = new Map(chunks.map((c) => [c.id, c]));
  for (const c of await store.chunksByIds(fused.map(([id]) => id).filter((id) => !known.has(id)))) known.set(c.id, c);
  return { text, question, english, knowledge, stats, dense, vector, rankings, fused, known, best, chunks };
}

/**
 * Weighted reciprocal rank fusion: each ranking's first FUSED_DEPTH places give an item its ranking's weight /
 * (k + place); items by their sum, best first (ties keep the order first met). An item high in two rankings beats
 * one first in a single ranking of the same weight. The weights and k are the calibrated fusion's unless given
 * (a ranking beyond the weights given weighs 1).
 */
export function fuseRankings(rankings: string[][], weights: readonly number[] = fusion.weights, k = fusion.k): [id: string, score: number][] {
  const fused = new Map<string, number>();
  rankings.forEach((ranking, r) => {
    const weight = weights[r] ?? 1;
    ranking.slice(0, FUSED_DEPTH).forEach((id, i) => fused.set(id, (fused.get(id) ?? 0) + weight / (k + i + 1)));
  });
  return [...fused].sort((a, b) => b[1] - a[1]);
}

/**
 * What retrieval keeps of a generation of a site: its passages' vectors, its entities, its words and the language they
 * are written in, and how many passages it has; `embedding`, how many of its passages were still waiting for their
 * vector when the vectors were read.
 */
interface SiteIndex {
  ids: string[]; vectors: Float32Array[]; entities: SiteEntities; vocabulary: Vocabulary; language: Lang; passages: number; embedding: number;
}

/** The generations read lately, by `site:generation` (least recently used first out). */
const siteIndexes = new Map<string, SiteIndex>();
/** Passages whose vectors are kept in memory (2 KiB each). */
const CACHED_PASSAGES = 40_000;

async function siteIndexOf(store: KnowledgeStore, siteId: string, generation: number, embedding = 0): Promise<SiteIndex> {
  const key = `${siteId}:${generation}`;
  const cached = siteIndexes.get(key);
  if (cached) {
    siteIndexes.delete(key);
    // Vectors computed since they were read (the site became ready before them, issue 48): only those are read again.
    const entry = cached.embedding === embedding ? cached : { ...cached, ...await vectorsOf(store, siteId, generation), embedding };
    siteIndexes.set(key, entry);
    return entry;
  }
  const rows = await store.chunksOfGeneration(siteId, generation);
  const embedded = rows.filter((r) => r.embedding);
  const vocabulary = vocabularyOf(rows.flatMap((r) => [r.text, r.section ?? '']));
  const entry = {
    ids: embedded.map((r) => r.id), vectors: embedded.map((r) => vectorOf(r.embedding!)), entities: siteEntities(rows),
    vocabulary, language: languageOfWords(vocabulary.counts), passages: rows.length, embedding,
  };
  siteIndexes.set(key, entry);
  let held = [...siteIndexes.values()].reduce((n, e) => n + e.ids.length, 0);
  for (const [k, e] of siteIndexes) {
    if (held <= CACHED_PASSAGES || k === key) break;
    siteIndexes.delete(k);
    held -= e.ids.length;
  }
  return entry;
}

/**
 * The agent's knowledge read into memory (its passages' vectors, entities and vocabulary) ahead of its first question;
 * whether it has any (without, a question never loads the encoder: `denseScores`).
 */
export async function warmKnowledge(store: KnowledgeStore, agentId: string): Promise<boolean> {
  return (await knowledgeIndex(store, agentId)).indexes.length > 0;
}

/** The sentences of the agent's passages read as the ranking reads them (`readAhead`), ahead of its first question. */
export async function readKnowledgeAhead(store: KnowledgeStore, agentId: string): Promise<void> {
  for (const s of await store.knowledgeSources(agentId)) await readAhead(await store.chunksOfGeneration(s.id, s.generation));
}

async function vectorsOf(store: KnowledgeStore, siteId: string, generation: number): Promise<Pick<SiteIndex, 'ids' | 'vectors'>> {
  const rows = await store.vectorsOfGeneration(siteId, generation);
  return { ids: rows.map((r) => r.id), vectors: rows.map((r) => vectorOf(r.embedding)) };
}

/** The entities, words and language of an agent's sources together. */
export interface MergedKnowledge { entities: SiteEntities; vocabulary: Vocabulary; language: Lang }

/** The agent's knowledge as retrieval keeps it: every source's index, and the entities and vocabulary of all of them. */
async function knowledgeIndex(store: KnowledgeStore, agentId: string): Promise<MergedKnowledge & { indexes: SiteIndex[] }> {
  const indexes = await Promise.all((await store.knowledgeSources(agentId)).map((s) => siteIndexOf(store, s.id, s.generation, s.embedding)));
  return { indexes, ...mergedKnowledge(indexes) };
}

/**
 * Several sources' knowledge merged, kept while they are the same (by their vocabularies, which a source's index keeps
 * for its generation): an agent with several sites or files merged every source's words again for every question.
 */
const merges = new WeakMap<Vocabulary, { parts: Vocabulary[]; merged: MergedKnowledge }>();

/**
 * The entities and words of the sources together, and their language: each source's own (worked out once, on its own
 * words), the one most of their passages are written in when they differ (a French site beside an English one). The
 * merged words' language would be neither's: capped at 20 a word, they counted French's markers of four letters or
 * more (twice as many as English's) as often as a far larger English site's.
 * Exported for its unit test.
 */
export function mergedKnowledge(indexes: Pick<SiteIndex, 'entities' | 'vocabulary' | 'language' | 'passages'>[]): MergedKnowledge {
  const only = indexes.length === 1 ? indexes[0]! : undefined;
  if (only) return { entities: only.entities, vocabulary: only.vocabulary, language: only.language };
  const first = indexes[0]?.vocabulary;
  const kept = first && merges.get(first);
  if (kept && kept.parts.length === indexes.length && kept.parts.every((v, i) => v === indexes[i]!.vocabulary)) return kept.merged;
  const union = (pick: (e: SiteEntities) => Set<string>) => new Set(indexes.flatMap((i) => [...pick(i.entities)]));
  const entities = new Map<string, Set<string>>();
  for (const i of indexes) for (const [n, groups] of i.entities.entities) entities.set(n, new Set([...entities.get(n) ?? [], ...groups]));
  // Several sources (knowledge bases): their words together, as one text per word and count.
  const vocabulary = vocabularyOf(indexes.flatMap((i) => [...i.vocabulary.counts].map(([w, n]) => `${w} `.repeat(Math.min(n, 20)))));
  const merged = { entities: { names: union((e) => e.names), entities, brand: union((e) => e.brand) }, vocabulary, language: languageOfSources(indexes) };
  if (first) merges.set(first, { parts: indexes.map((i) => i.vocabulary), merged });
  return merged;
}

/** The language most of the sources' passages are written in (English when they are as many, or none). */
function languageOfSources(sources: { language: Lang; passages: number }[]): Lang {
  let fr = 0;
  for (const s of sources) fr += s.language === 'fr' ? s.passages : -s.passages;
  return fr > 0 ? 'fr' : 'en';
}

/** The question with chat shorthand written out and its slips mended against the sources' words (`spelling.ts`). */
function spelled(query: string, knowledge: MergedKnowledge): string {
  const lang = languageOfQuestion(query, knowledge.language);
  const mended = withSiteSpelling(query, lang, knowledge.vocabulary, lang === 'en' ? isEnglishWord : () => false);
  return lang === 'en' ? withNamesCapitalised(mended, knowledge.vocabulary) : mended;
}

/**
 * A word neither English nor the site writes, once its slips are mended, is a name the visitor typed in lower case (a
 * brand, a product, a place: "a navien boiler", "do you ship to tacoma"): written as one, so that the reading treats it
 * as a name the site lacks, not as a word it may do without. English only: the language's word list is English.
 */
export function withNamesCapitalised(text: string, vocabulary: Vocabulary): string {
  const known = (w: string) => vocabulary.counts.has(w) || isEnglishWord(w);
  // A compound of two words either knows ("bloodwork", "motorhome") is no name.
  const compound = (w: string) => [...w].some((_, k) => k >= 3 && w.length - k >= 3 && known(w.slice(0, k)) && known(w.slice(k)));
  return text.replace(/(?<![\p{L}\p{N}'’-])\p{Ll}{4,}(?![\p{L}\p{N}'’-])/gu, (w) => (known(w) || compound(w) ? w : w[0]!.toUpperCase() + w.slice(1)));
}

/**
 * The passages of `indexes` closest in meaning to `text`, closest first, with their cosine, and the question's vector
 * (none when the encoder is off).
 */
async function denseScores(indexes: SiteIndex[], text: string): Promise<{ scores: { id: string; cos: number }[]; question: Float32Array | null }> {
  // An agent with no knowledge yet does not load the encoder for nothing.
  if (!indexes.length) return { scores: [], question: null };
  const q = await embedQuestion(text);
  if (!q) return { scores: [], question: null };
  const scored: { id: string; cos: number }[] = [];
  for (const { ids, vectors } of indexes) vectors.forEach((v, i) => scored.push({ id: ids[i]!, cos: dot(q, v) }));
  return { scores: scored.sort((a, b) => b.cos - a.cos).slice(0, FUSED_DEPTH), question: q };
}

function passageOf(r: RankedSentence): Passage {
  return {
    text: r.context, url: r.url, title: r.title, score: r.score, section: r.section, answer: r.sentence, missing: r.missing, absent: r.absent,
    ...(r.entry ? { entry: r.entry } : {}),
  };
}

/**
 * The words of the agent's knowledge (of four letters or more, as its vocabulary keeps them), the most written first,
 * at most `limit`: what a call's recognizer listens for beyond common words (src/voice/lexicon.ts).
 */
export async function knowledgeWords(store: KnowledgeStore, agentId: string, limit: number): Promise<string[]> {
  const { vocabulary } = await knowledgeIndex(store, agentId);
  return [...vocabulary.counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, limit).map(([w]) => w);
}
