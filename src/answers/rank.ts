import { fold, splitSentences, STOPWORDS, TABLE_ROW } from './text.ts';
import { analyzeQuestion, contactOwner, definedBy, deniedStems, HOLIDAY, holdsPlaceToDo, holdsType, MONTH, NAMES_DAY, namesIn, namesYoung, personNameWords, RATE_ASKED, SAYS_LEAD, stem, stems, typeStrength, withDayRanges, withoutPersonNames, withoutRelativeClauses, WEEKDAY_NAME, words, type AnswerType, type Question, type QueryTerm } from './analysis.ts';
import { compoundHeads, isKindOf, isPremisesNoun } from './wordnet.ts';

/**
 * Sentence-level ranking of passages for a question: each sentence is scored with its
 * neighbours and its section, by BM25 over Porter2 stems (synonyms counting less), and by
 * whether it holds the kind of answer the question wants. The score is calibrated: the share
 * of the question's weight (inverse document frequency) that the sentence covers, so that one
 * threshold (`ANSWER_THRESHOLD`) tells an answer from a look-alike for any question.
 */

/** Below this score, no sentence answers the question: both runtimes say the site does not say. */
export const ANSWER_THRESHOLD = 0.517;

export interface SourceChunk { text: string; section?: string | null; url: string; title: string | null }

export interface RankedSentence {
  /** The sentence that answers. */
  sentence: string;
  /** The sentence with its neighbours in the passage. */
  context: string;
  url: string;
  title: string | null;
  section: string | null;
  /** Calibrated, 0 to 1: compare with ANSWER_THRESHOLD. */
  score: number;
  /** Names of the question the site never mentions with its subject ("Denver" in "a branch in Denver?"). */
  missing: string[];
  /** Those of them the site does not mention at all ("Denver"), as against one it names for other things ("parties at Eastside?"). */
  absent: string[];
  /** Whether the sentence (or its heading) holds the kind of answer wanted. */
  typed: boolean;
  /** The passage the sentence is from (the very object given to `rankSentences`). */
  source?: SourceChunk;
  /** The FAQ entry the sentence answers in (`faqEntryOf`): its question and its answer's sentences, in order. */
  entry?: FaqEntry;
}

/** A question the site asks itself (an FAQ heading, or a sentence ending in "?") and the sentences that answer it. */
export interface FaqEntry { question: string; answer: string[] }

/**
 * The FAQ entry sentence `i` of a passage stands in: the sentences after the last question before it (a sentence ending
 * in "?", or the passage's own heading when that is a question) up to the next question, when there is one; null for a
 * sentence that is itself a question or stands under none. Structure of any FAQ page, in any trade or language.
 */
export function faqEntryOf(sentences: string[], i: number, heading: string): FaqEntry | null {
  const isQuestion = (x: string) => /\?\s*$/.test(x);
  if (isQuestion(sentences[i]!)) return null;
  let start = i;
  while (start > 0 && !isQuestion(sentences[start - 1]!)) start--;
  const question = start > 0 ? sentences[start - 1]! : isQuestion(heading) ? heading : '';
  if (!question) return null;
  let end = i;
  while (end + 1 < sentences.length && !isQuestion(sentences[end + 1]!)) end++;
  return { question, answer: sentences.slice(start, end + 1) };
}

/** Corpus statistics for inverse document frequency: passages in all, and per stem how many hold it. */
export interface CorpusStats { total: number; df: Map<string, number> }

const K1 = 1.2;
const B = 0.75;

/**
 * Where a term was found: in the sentence, its section path, its neighbours, its passage; as itself, a word derived from it,
 * a synonym, in the definition of a word of the sentence or its heading (`defined`), or as what the site calls the phrase it
 * is in (`alias`, `siteAliases`); the last two weak, below what makes a sentence on topic.
 */
const WEIGHT = { sentence: 1, heading: 0.9, sentenceDerived: 0.9, headingDerived: 0.85, sentenceAlt: 0.6, section: 0.8, headingAlt: 0.55, sectionAlt: 0.5, neighbour: 0.5, neighbourName: 0.7, defined: 0.4, alias: 0.4, passage: 0.35, neighbourAlt: 0.3 };

interface Candidate {
  chunk: SourceChunk; sentence: string; context: string; s: Set<string>; entry?: FaqEntry;
  /** Stems of the sentence's own heading, and of the rest of its section path and page title. */
  own: Set<string>; sec: Set<string>; near: Set<string>; lastHeading: string;
  /** Stems of the whole passage the sentence is in. */
  all: Set<string>;
  /** Stems of the people the sentence and its heading name in full ("Dr. Helen Park"): left out of the sets above, met by names only. */
  names: Set<string>; headingNames: Set<string>;
  /** Stems of the WordNet definitions of the sentence's words and its heading's (`definedBy`). */
  defined: Set<string>;
  /** Whether the sentence names the business itself ("Nadia Brooks opened Hearth & Crumb in 2014"). */
  namesBusiness: boolean;
  /** Stems of whom or what the sentence's contact is for: its label and its email addresses' local parts (`contactOwner`). */
  owner: Set<string>;
  /** The ranges of numbers the sentence gives ("for 10 to 200 guests", "Serves: 25 to 30", "up to 12 climbers"). */
  ranges: [number, number][];
  /** The numbers the sentence writes only as money ("$500"), and only otherwise ("500 guests"): each meets a number of its kind. */
  moneyOnly: Set<string>; plainOnly: Set<string>;
  /** The same of its whole passage, for a number met near the sentence. */
  passageKinds: { moneyOnly: Set<string>; plainOnly: Set<string> };
  /** Whether the sentence names things by name ("BadgerCare Plus", "Riverside"; not a word that starts it). */
  namesNames: boolean;
  /** The question the passage asks just before the sentence, which the sentence answers ("No insurance?"), or "". */
  asks: string;
  /** Stems of what the sentence denies (`deniedStems`: "We do not serve alcohol"). */
  denied: Set<string>;
  /** Whether the sentence or its section is for young people ("Youth programs › Summer camps", "Bring your child…"). */
  young: boolean;
  /** Whether the sentence itself is ("Dr. Ruiz sees children from age one", "For ages 10 to 17"). */
  youngSentence: boolean;
  /** Stems of the sentence as written, people's names included (whether it names the business). */
  plain: Set<string>;
  /** The words of the people it names in full (`personNameWords`), lower case. */
  people: Set<string>;
  /** Its words written after another word (INNER_WORD): where a site's names show their capitals (`withSiteNames`). */
  inner: string[];
  /** Its stems, its heading's and its section's of KINDRED letters or more, in that order (`withKindredStems`). */
  long: string[];
  /** The stems of its passage's words, in order (`withSiteAliases`). */
  textStems: string[];
}

/** A word with many senses ("take": 44, "use": 13) says less of what is asked than a precise one ("refund": 3). */
const vagueness = (senses: number) => (senses >= 12 ? 0.6 : senses >= 8 ? 0.8 : 1);

/** WordNet senses from which a word is too vague to be what a question is about ("take": 44, "come": 22, "offer": 16; "deliver": 12 still is). */
export const VAGUE_VERB = 16;
const CONTACT = /\bcontact/i;
const HOURS = /\bhours\b|\bopening\b/i;
/** A sentence that opens with the case it is for ("For membership questions, …", "If you are a member, …"). */
const QUALIFIED = /^(for|if|outside|during|after|before|when|in case of)\b[^,]{0,60},/i;
/** A negation, in a question ("if I don't come") or a sentence ("orders not collected"). */
const DENIES = /\b(not|no|never|cannot|can'?t|don'?t|doesn'?t|didn'?t|won'?t|isn'?t|aren'?t|without|fail(s|ed)? to|forg[eo]t(s|ten)? to|miss(es|ed)?)\b/i;
/**
 * "How far out can I book?", "How much notice do you need?": a lead asked for is a limit said as a lead ("Book at least two
 * weeks in advance", "up to three months ahead"). A duration said otherwise answers it less surely: a lead that is no limit
 * ("a reminder two days before your visit") at 0.85, a plain duration ("a first visit takes about 75 minutes") at half.
 */
const LEAD = { plain: 0.5, noLimit: 0.85 };
// A deadline is one too: "Place catering orders by noon, two business days before your event."
const LIMIT = /\b(at (the )?(least|most|latest|earliest)|up to|no (later|earlier|more|less) than|as (far|early|late) as|minimum|maximum|or (more|less))\b|\bby\s+\w+[^.;]{0,40}\b(before|ahead|in advance)\b/i;
/** Whether a kind of answer is a way to reach someone: a phone number, an email address, or either (`contact`). */
const reaches = (want: AnswerType | null) => want === 'phone' || want === 'email' || want === 'contact';
const POST = /\/(blog|news|posts?)\/[^/?#]+/i;
/** How much a day, a part of the day or a number weighs in a question that asks for none of them (`circumstance`). */
const CIRCUMSTANCE = 0.5;
/** A part of the day, and a number written in words or digits. */
const PART_OF_DAY = /^(morning|afternoon|evening|night|tonight|today|tomorrow|noon|midday|lunchtime)s?$/;
const NUMBER_WORD = /^(\d{1,3}|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|dozen|couple)$/;

/** A customer's quoted word ("They catered our 60-person retreat…" — Greg). */
const QUOTED = /^\s*["“]/;

function statsOf(chunks: SourceChunk[]): CorpusStats {
  const df = new Map<string, number>();
  for (const c of chunks) for (const st of stems(`${c.section ?? ''} ${c.title ?? ''} ${c.text}`)) df.set(st, (df.get(st) ?? 0) + 1);
  return { total: chunks.length, df };
}

/** A page title's site-name part ("Our story | Hearth & Crumb" → "Hearth & Crumb"). */
const TITLE_SUFFIX = /\s[|–—·]\s([^|–—·]+)$/;

/**
 * The stems of the business's own name: the part most page titles end with ("… | Hearth & Crumb"), when at least
 * half of the pages' titles do; empty otherwise. "The bakery" in a question is the business its pages call by name.
 */
function siteName(chunks: SourceChunk[]): Set<string> {
  const titles = new Map<string, string>();
  for (const c of chunks) if (c.title) titles.set(c.url, c.title);
  const counts = new Map<string, number>();
  for (const title of titles.values()) {
    const name = TITLE_SUFFIX.exec(title)?.[1]?.trim();
    if (name) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  const [best, n] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? ['', 0];
  return n >= 2 && n * 2 >= titles.size ? stems(best) : new Set();
}

/** A sentence of a passage as the ranking reads it, whatever the question: a candidate but its passage and its site's name. */
type SentenceReading = Omit<Candidate, 'chunk' | 'namesBusiness'>;

/**
 * Passages read lately, by their text, section and title: each passage's sentences read once, not once per question (or
 * twice, as retrieval ranks its candidates and then the fused passages): a site's passages recur from one question to the
 * next. At most READINGS_KEPT passages (the first read out first).
 */
const readings = new Map<string, SentenceReading[]>();
const READINGS_KEPT = 3000;

function readingsOf(chunk: SourceChunk): SentenceReading[] {
  const key = `${chunk.section ?? ''}\u0000${chunk.title ?? ''}\u0000${chunk.text}`;
  let out = readings.get(key);
  if (!out) {
    out = readChunk(chunk);
    if (readings.size >= READINGS_KEPT) readings.delete(readings.keys().next().value!);
    readings.set(key, out);
  }
  return out;
}

/**
 * The sentences of `chunks` read ahead of the questions that will rank them (`warmAnswerEngine`): a passage per turn of
 * the event loop, at most READ_AHEAD of them (the kept readings' third).
 */
export async function readAhead(chunks: SourceChunk[]): Promise<void> {
  for (const chunk of chunks.slice(0, READ_AHEAD)) {
    readingsOf(chunk);
    await new Promise<void>((resolve) => { setImmediate(resolve); });
  }
}
const READ_AHEAD = 1000;

function candidates(chunks: SourceChunk[]): Candidate[] {
  const out: Candidate[] = [];
  const name = siteName(chunks);
  for (const chunk of chunks) {
    for (const r of readingsOf(chunk)) out.push({ ...r, chunk, namesBusiness: name.size > 0 && [...name].every((st) => r.plain.has(st)) });
  }
  return out;
}

/** The sentences of a passage as the ranking reads them (the passage's section and title read with them; not its URL). */
function readChunk(chunk: SourceChunk): SentenceReading[] {
  const out: SentenceReading[] = [];
  const sentences = splitSentences(chunk.text);
  // A person's name is no common word ("Dr. Helen Park" does not answer "Is there parking?"): names are met by names only.
  const sec = stems(withoutPersonNames(`${chunk.section ?? ''} ${chunk.title ?? ''}`));
  const lastHeading = chunk.section?.split(' › ').at(-1) ?? '';
  const headingWords = new Set(personNameWords(lastHeading));
  const plainHeading = withoutPersonNames(lastHeading, headingWords);
  const headingNames = new Set([...headingWords].map(stem));
  const all = stems(withDayRanges(withoutPersonNames(chunk.text)));
  const passageKinds = numberKinds(chunk.text);
  const youngSection = namesYoung(`${chunk.section ?? ''} ${chunk.title ?? ''}`);
  const textStems = words(chunk.text).map(stem);
  sentences.forEach((sentence, i) => {
    const window = sentences.slice(Math.max(0, i - 1), i + 2);
    const names = new Set(personNameWords(sentence));
    // A question the passage asks ("No insurance?", "Broken tooth or bad toothache?") heads the sentence that answers it.
    const asks = i > 0 && /\?\s*$/.test(sentences[i - 1]!) ? sentences[i - 1]! : '';
    const entry = faqEntryOf(sentences, i, lastHeading);
    const s = stems(withDayRanges(withoutPersonNames(sentence, names)));
    const own = stems(`${plainHeading} ${withoutPersonNames(asks)}`);
    out.push({
      ...(entry ? { entry } : {}),
      sentence, context: window.join(' '), s, own, sec, asks,
      near: stems(withoutPersonNames(neighbours(sentences, i).join(' '))), lastHeading, all,
      names: new Set([...names].map(stem)), headingNames,
      defined: new Set([...definedBy(sentence), ...definedBy(plainHeading.toLowerCase())]),
      plain: stems(sentence), people: names, inner: [...sentence.matchAll(INNER_WORD)].map((m) => m[1]!),
      long: [...s, ...own, ...sec].filter((st) => st.length >= KINDRED), textStems,
      denied: deniedStems(sentence), young: youngSection || namesYoung(sentence), youngSentence: namesYoung(sentence), namesNames: namesIn(sentence).size > 0, ranges: rangesIn(sentence), owner: contactOwner(sentence), ...numberKinds(sentence), passageKinds,
    });
  });
  return out;
}

/** How much less a table row scores when its label names none of the items the question names in its table (naming some, that share of it). */
const ROW_OTHER_ITEM = 0.2;

/**
 * The table rows among `cands` whose passage holds two or more, with how their label meets the question's `terms`: the
 * share of the items the question names in that table that the row's label names (`named`, 1 when it names none). A
 * label's words are those that tell it from the other rows of its passage (not those every label writes: "Pain" in each
 * "Pain …" row); an item named is a word the question asks with (not a circumstance, not the kind of answer) that some
 * of these labels write, and the table's section path and page title do not.
 */
function rowReadings(cands: Candidate[], terms: QueryTerm[]): Map<Candidate, { named: number; items: number }> {
  const asked = terms.filter((t) => !t.incidental && !t.typeWord);
  const byChunk = new Map<SourceChunk, { c: Candidate; label: Set<string> }[]>();
  for (const c of cands) {
    const sentence = c.sentence.trim();
    if (!TABLE_ROW.test(sentence)) continue;
    const label = stems(sentence.split(/ — |: /)[0]!);
    byChunk.set(c.chunk, [...byChunk.get(c.chunk) ?? [], { c, label }]);
  }
  const out = new Map<Candidate, { named: number; items: number }>();
  for (const rows of byChunk.values()) {
    if (rows.length < 2) continue;
    const common = [...rows[0]!.label].filter((st) => rows.every((r) => r.label.has(st)));
    const labels = rows.map((r) => new Set([...r.label].filter((st) => !common.includes(st))));
    const meets = (t: QueryTerm, label: Set<string>) => label.has(t.stem) || [...t.derived].some((d) => label.has(d));
    // A word of the table's section or page title names what the whole table is about ("book repair prices" on the
    // repairs page), not one of its items.
    const sec = rows[0]!.c.sec;
    const items = asked.filter((t) => !sec.has(t.stem) && labels.some((label) => meets(t, label)));
    rows.forEach((r, k) => {
      const label = labels[k]!;
      const named = items.length ? items.filter((t) => meets(t, label)).length / items.length : 1;
      out.set(r.c, { named, items: items.length });
    });
  }
  return out;
}

/**
 * The sentences around sentence `i` that it goes on from or into ("…with Invisalign clear aligners. Treatment … starts at
 * $4,800."). A table row has none among the other rows: each is another item ("Late fee", "Second late fee"), and what
 * the next row names is not what this one is about.
 */
function neighbours(sentences: string[], i: number): string[] {
  const row = (k: number) => TABLE_ROW.test(sentences[k]!.trim());
  const own = row(i);
  return [i - 1, i + 1].filter((k) => k >= 0 && k < sentences.length && !(own && row(k))).map((k) => sentences[k]!);
}

/** The numbers `text` writes as money, and those it writes otherwise (digits only, without their thousands' commas). */
function numbersIn(text: string): { money: Set<string>; plain: Set<string> } {
  const money = new Set<string>();
  const plain = new Set<string>();
  for (const m of text.matchAll(/([$€£]\s?)?\b(\d[\d,]*)(?:\.\d+)?(\s?(?:%|percent\b|dollars?\b|euros?\b|cents?\b|bucks\b))?/gi)) {
    (m[1] || m[3] ? money : plain).add(m[2]!.replace(/,/g, ''));
  }
  return { money, plain };
}

function numberKinds(sentence: string): { moneyOnly: Set<string>; plainOnly: Set<string> } {
  const { money, plain } = numbersIn(sentence);
  return { moneyOnly: new Set([...money].filter((n) => !plain.has(n))), plainOnly: new Set([...plain].filter((n) => !money.has(n))) };
}

/** "10 to 200", "25-30", "between 4 and 8", "up to 12". */
const RANGE = /\b(\d{1,4})\s*(?:to|-|–|and)\s*(\d{1,4})\b|\bup to (\d{1,4})\b/gi;
/** The number ranges of a sentence, low to high ("up to 12" is 1 to 12). */
function rangesIn(sentence: string): [number, number][] {
  return [...sentence.matchAll(RANGE)].map((m) => (m[3] ? [1, Number(m[3])] : [Number(m[1]), Number(m[2])]) as [number, number]).filter(([a, b]) => a < b);
}

/** Whether `set` holds any of `items`. */
function holdsAny(set: Set<string>, items: Set<string>): boolean {
  for (const a of items) if (set.has(a)) return true;
  return false;
}

/** Whether `set` holds every one of `items`. */
function holdsAll(set: Set<string>, items: Set<string>): boolean {
  for (const a of items) if (!set.has(a)) return false;
  return true;
}

// Called for every candidate sentence and term of every ranking (thousands of times a question): no closure or array is
// made per call (issue 39: they were a tenth of the ranking's time, their garbage collection besides).
function matchOf({ stem, alternatives, derived, incidental, premises, kinds, classes, antonyms, young, aliases, definedAs, money, proper }: QueryTerm, c: Candidate, byName: boolean): number {
  // "the bakery", "the gym": where the sentence names the business, it names its premises (not "a shop in Boston?").
  // "Can you cater for 500 people?" is not met by "free on orders over $500", nor "a $20 fee?" by "20 guests".
  const otherKind = money !== undefined && (money ? c.plainOnly : c.moneyOnly).has(stem);
  const otherKindNear = money !== undefined && (money ? c.passageKinds.plainOnly : c.passageKinds.moneyOnly).has(stem);
  if ((c.s.has(stem) && !otherKind) || (proper && c.names.has(stem)) || (byName && incidental && premises && c.namesBusiness)) return WEIGHT.sentence;
  if (c.own.has(stem) || (proper && c.headingNames.has(stem))) return WEIGHT.heading;
  // "Can you cater for 45 people?": a number inside a range the sentence gives ("events for 10 to 200 guests") is met, as a synonym.
  if (/^\d{1,4}$/.test(stem) && !money && c.ranges.some(([a, b]) => a <= Number(stem) && Number(stem) <= b)) return WEIGHT.sentenceAlt;
  if (holdsAny(c.s, derived)) return WEIGHT.sentenceDerived;
  if (holdsAny(c.own, derived)) return WEIGHT.headingDerived;
  // The name the site gives what the phrase says, in its own definition line: as surely as a synonym.
  if (definedAs?.some((a) => holdsAll(c.s, a) || holdsAll(c.own, a))) return WEIGHT.sentenceAlt;
  // "Do you serve beer?": a sentence that denies its class ("We do not serve alcohol") denies it. Not one that gives the
  // class ("We sell coffee"): that says nothing of an espresso.
  if (classes && holdsAny(c.denied, classes)) return WEIGHT.sentenceDerived;
  // "…if my cake is wrong?": a sentence that denies its opposite says it ("If something isn't right, bring it back…").
  if (antonyms && holdsAny(c.denied, antonyms)) return WEIGHT.sentenceDerived;
  if (c.sec.has(stem)) return WEIGHT.section;
  if (holdsAny(c.s, alternatives)) return WEIGHT.sentenceAlt;
  if (holdsAny(c.own, alternatives)) return WEIGHT.headingAlt;
  // "Do you see babies?", "a team for teenagers?": the young are what a sentence for them names, however it calls them
  // ("children", "kids", "ages 10 to 17"), or its section ("Youth programs").
  if (young && c.youngSentence) return WEIGHT.sentenceAlt;
  if (young && c.young) return WEIGHT.sectionAlt;
  if (kinds && words(c.sentence).some((w) => w.length > 2 && !STOPWORDS.has(w) && isKindOf(w, kinds))) return WEIGHT.sentenceAlt;
  // A name the sentence before or after gives is what it goes on about ("…with Invisalign clear aligners. Treatment …
  // starts at $4,800."): more surely than a common word there.
  // Not in a sentence that names names of its own ("We do not accept BadgerCare Plus…" after "…MetLife and Guardian."): it is about them.
  if (c.near.has(stem) && !otherKindNear) return proper && !c.namesNames ? WEIGHT.neighbourName : WEIGHT.neighbour;
  if (holdsAny(c.sec, alternatives)) return WEIGHT.sectionAlt;
  // A word whose definition names the question's ("Do you use amalgam fillings?" for "silver fillings": an amalgam is "an
  // alloy of mercury with another metal (usually silver)…"). The question word itself only: its synonyms' and the question
  // word's own definitions (a wedding is "the social event…") lifted look-alikes and let unknowns through.
  if (c.defined.has(stem)) return WEIGHT.defined;
  if (aliases?.some((a) => holdsAll(c.s, a) || holdsAll(c.own, a))) return WEIGHT.alias;
  if (c.all.has(stem) && !otherKindNear) return WEIGHT.passage;
  // "Can you cater for 500 people?": a range the sentence gives ("for 10 to 200 guests") is still what it says to that number.
  return holdsAny(c.near, alternatives) || (money === false && /^\d{1,4}$/.test(stem) && c.ranges.length > 0) ? WEIGHT.neighbourAlt : 0;
}

/**
 * The terms with the site's own names among them read as names, written in lower case ("where is riverside gym?"): a word
 * the site writes with a capital inside its sentences at least twice, and never without ("Riverside", "Eastside"). A
 * name has no synonyms, and the word after it is what kind of thing it names ("gym").
 */
function withSiteNames(terms: QueryTerm[], question: string, cands: Candidate[]): QueryTerm[] {
  // Days and months are written with a capital, and are no names ("Sunday").
  const lower = terms.filter((t) => !t.proper && /^[a-z]{3,}$/.test(t.word) && !(t.typeWord) && !NAMES_DAY.test(t.word) && !MONTH.test(t.word));
  if (!lower.length) return terms;
  const asked = new Set(lower.map((t) => t.word));
  const capital = new Map<string, number>();
  const plain = new Set<string>();
  const read = new Set<string>();
  for (const c of cands) {
    if (read.has(c.sentence)) continue;
    read.add(c.sentence);
    // Not a person's name ("Where do I park?" is no question about "Dr. Helen Park").
    const people = c.people;
    for (const w of c.inner) {
      const low = w.toLowerCase();
      if (!asked.has(low) || people.has(low)) continue;
      if (/^[A-Z][a-z]+$/.test(w)) capital.set(low, (capital.get(low) ?? 0) + 1);
      else if (w === low) plain.add(low);
    }
  }
  const names = new Set([...capital].filter(([w, k]) => k >= 2 && !plain.has(w)).map(([w]) => w));
  if (!names.size) return terms;
  const order = words(question);
  return terms.map((t) => {
    if (names.has(t.word)) return { ...t, proper: true, alternatives: new Set<string>(), derived: new Set<string>(), synonymWords: [], senses: 1, incidental: false, premises: false };
    const before = order[order.indexOf(t.word) - 1];
    return !t.proper && before && names.has(before) && !t.namedBy ? { ...t, namedBy: stem(before) } : t;
  });
}

/** The two words after "your" or "our" (`ownedWords`). */
const OWNED = { your: /\byour\s+([A-Za-z-]+)(?:\s+([A-Za-z-]+))?/gi, our: /\bour\s+([A-Za-z-]+)(?:\s+([A-Za-z-]+))?/gi };

/** The stems of the two words after each `owner` ("your", "our") in `text`: what it says belongs to the business. */
function ownedWords(text: string, owner: 'your' | 'our'): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(OWNED[owner])) {
    for (const w of [m[1], m[2]]) if (w && !STOPWORDS.has(w.toLowerCase())) out.add(stem(w.toLowerCase()));
  }
  return out;
}

/**
 * Per term, the indexes of the terms of the name it is part of ("Apple Pay": both; a lone name or a common word: itself
 * only, or none for a common word): names written next to each other in the question.
 */
function nameRuns(q: Question): number[][] {
  const order = words(q.text);
  // Every place a word is written: "Can I pay with Apple Pay?" has the verb, then the name's "Pay".
  const at = q.terms.map((t) => order.flatMap((w, i) => (w === t.word ? [i] : [])));
  return q.terms.map((t, j) => {
    if (!t.proper) return [];
    const run = [j];
    for (const from of at[j]!) {
      for (const step of [-1, 1]) {
        for (let next = from + step; ; next += step) {
          const k = q.terms.findIndex((u, i) => u.proper && at[i]!.includes(next));
          if (k < 0) break;
          if (!run.includes(k)) run.push(k);
        }
      }
    }
    return run;
  });
}

/** A word after another word, not after a table row's dash or semicolon, nor as a label ("— Serves: 8 to 10; Price: $48"). */
const INNER_WORD = /(?<=[\w,]\s+)([A-Za-z]+)\b(?!:)/g;

/** How many leading letters two stems must share to be read as one word's family ("allergi" and "allergen"). */
const KINDRED = 6;

/** The stem beginnings whose family a question's terms find (`withKindredStems`): for the database to fetch those passages too. */
export function kindredPrefixes(terms: QueryTerm[]): string[] {
  return terms.filter((t) => !t.proper && !t.typeWord && t.stem.length >= KINDRED).map((t) => t.stem.slice(0, KINDRED));
}

/**
 * The terms with, among their synonyms, the candidates' stems that begin as theirs do (KINDRED letters or more): a
 * word's family that Porter2 stems apart and WordNet does not link ("allergy" / "allergens"). Some share the letters
 * and not the meaning ("general" / "generate"), so they count as synonyms, never as the word. Names are left alone.
 */
function withKindredStems(terms: QueryTerm[], cands: Candidate[]): QueryTerm[] {
  const vocabulary = new Set<string>();
  for (const c of cands) for (const st of c.long) vocabulary.add(st);
  return terms.map((t) => {
    if (!kindredPrefixes([t]).length) return t;
    const prefix = t.stem.slice(0, KINDRED);
    const kin = [...vocabulary].filter((st) => st !== t.stem && st.startsWith(prefix) && !t.derived.has(st));
    return kin.length ? { ...t, alternatives: new Set([...t.alternatives, ...kin]) } : t;
  });
}

/** Whether `sentence` names the place `name` only as where someone else's premises are ("at a hotel in Boston"). */
function placeOfOthers(sentence: string, name: string): boolean {
  const said = [...fold(sentence).matchAll(new RegExp(`(?:^|\\W)(\\w+)\\s+(?:in|at|near)\\s+(?:the\\s+)?${name}\\b`, 'g'))];
  return said.length > 0 && said.every((m) => {
    const before = words(fold(sentence).slice(0, m.index + 1)).slice(-2);
    const noun = m[1]!;
    // "a hotel in Boston", "another bakery in Boston": premises, not the business's own ("our café in Boston").
    return isPremisesNoun(noun) && before.some((w) => w === 'a' || w === 'an' || w === 'another');
  });
}

/** A line that defines a name: the name, a dash, what it is ("Bordetella — the "kennel cough" vaccine"). */
const DEFINITION = /^([^—–:;.,!?]{2,40}?)\s+[—–]\s+(.+)$/;
/** In how many sections at most a phrase may be written for their headings to say what it is about on this site. */
const ALIAS_SECTIONS = 2;
/** How many content words at most a heading may have to be a name for something, not a sentence about it. */
const ALIAS_WORDS = 3;

/**
 * The terms with what the site calls the phrases they are in. Two adjacent words of the question that the site writes,
 * word for word, in one or two sections (of the passages read) whose own heading is a short name of other words: on this
 * site, the phrase is what that heading names ("first visit" on the page "New patients": "Your first visit takes about 75
 * minutes…"), so a sentence holding all the heading's words ("New patient exam with X-rays: $149", for "What would my first
 * visit cost?") meets the phrase's words, weakly (`WEIGHT.alias`: at 0.6, "yoga studio" found on a branch's page sent "Where
 * is the yoga studio?" to that branch's street address). Not a single word: it is in too many sections to say what one is
 * about (measured: nothing gained at 0.4, facts lost at 0.6); nor a name or a word for the kind of answer.
 */
function withSiteAliases(terms: QueryTerm[], question: string, cands: Candidate[]): QueryTerm[] {
  const asked = words(question);
  const sections = new Map<string, { heading: Set<string>; texts: Set<string>; stems: string[] }>();
  const phrases = terms.slice(1).map((u, j) => [terms[j]!, u] as const)
    .filter((pair) => pair.every((t) => !t.proper && !t.typeWord) && asked.some((w, i) => w === pair[0].word && asked[i + 1] === pair[1].word));
  if (!phrases.length) return terms;
  for (const c of cands) {
    const key = `${c.chunk.url} ${c.chunk.section ?? ''}`;
    const section = sections.get(key) ?? { heading: stems(c.lastHeading.replace(TITLE_SUFFIX, '')), texts: new Set<string>(), stems: [] };
    sections.set(key, section);
    if (section.texts.has(c.chunk.text)) continue;
    section.texts.add(c.chunk.text);
    section.stems.push('', ...c.textStems);
  }
  const aliases = new Map<QueryTerm, Set<string>[]>();
  const defined = new Map<QueryTerm, Set<string>[]>();
  // The definition lines of the passages read, each once: the name's stems and the stems of what it is, in order.
  const definitions = new Map<string, { name: Set<string>; says: string[] }>();
  for (const c of cands) {
    const m = definitions.has(c.sentence) ? null : DEFINITION.exec(c.sentence);
    if (m) definitions.set(c.sentence, { name: stems(m[1]!), says: words(m[2]!).map(stem) });
  }
  for (const [t, u] of phrases) {
    const holding = [...sections.values()].filter((s) => s.stems.some((st, i) => st === t.stem && s.stems[i + 1] === u.stem));
    if (holding.length > ALIAS_SECTIONS) continue;
    const names = holding.map((s) => s.heading).filter((h) => h.size > 0 && h.size <= ALIAS_WORDS && !h.has(t.stem) && !h.has(u.stem));
    // So does a line that defines a name by the phrase ("Bordetella — the "kennel cough" vaccine, …"): the phrase is what
    // the name before its dash is, on this site ("Bordetella (dogs) — Price: $30" for "price of a kennel cough shot").
    const defining = [...definitions.values()].filter((d) => d.says.some((st, i) => st === t.stem && d.says[i + 1] === u.stem));
    const heads = defining.length <= ALIAS_SECTIONS
      ? defining.map((d) => d.name).filter((h) => h.size > 0 && h.size <= ALIAS_WORDS && !h.has(t.stem) && !h.has(u.stem)) : [];
    for (const x of [t, u]) {
      aliases.set(x, [...(aliases.get(x) ?? []), ...names]);
      if (heads.length) defined.set(x, [...(defined.get(x) ?? []), ...heads]);
    }
  }
  return terms.map((t) => ({
    ...t, ...(aliases.get(t)?.length ? { aliases: aliases.get(t) } : {}), ...(defined.get(t)?.length ? { definedAs: defined.get(t) } : {}),
  }));
}

/**
 * The sentences of `chunks` that best answer `question`, best first (at most `limit`). `stats`
 * are the whole knowledge's (from the database); without them, the chunks' own are used.
 */
export function rankSentences(question: string | Question, chunks: SourceChunk[], stats: CorpusStats = statsOf(chunks), limit = 5): RankedSentence[] {
  let q = typeof question === 'string' ? analyzeQuestion(question) : question;
  if (!q.terms.length || !chunks.length) return [];
  const cands = candidates(chunks);
  q = { ...q, terms: withSiteNames(q.terms, q.text, cands) };
  const n = Math.max(stats.total, 1);
  const idf = (stem: string, alternatives: Set<string>) => {
    const df = Math.max(stats.df.get(stem) ?? 0, ...[...alternatives].map((a) => (stats.df.get(a) ?? 0) / 2));
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  };
  // A word that says the kind of answer is met by that kind, not by its synonyms: they do not make it commoner.
  // So is a verb met by a kind of thing ("eat": a food): a site seldom writes "eat", which would make it weigh the most.
  // "Can I reserve a table for six on Saturday morning?": when and how many are circumstances of what is asked, unless
  // a time, a day or a number is what it asks for.
  const circumstance = (t: QueryTerm) => !q.want && (WEEKDAY_NAME.test(t.word) || PART_OF_DAY.test(t.word) || NUMBER_WORD.test(t.word));
  const weights = q.terms.map((t) => idf(t.stem, t.typeWord ? new Set<string>() : t.alternatives) * (t.typeWord || t.kinds ? 0.5 : 1) * vagueness(t.senses) * (t.incidental ? 0.3 : 1)
    * (circumstance(t) ? CIRCUMSTANCE : 1));
  // The question's subject: its words that are neither names, nor the kind of answer, nor vague verbs ("take", "come"),
  // nor where or how it is asked ("the bakery", "exactly"), unless nothing else is left.
  // "What's the bakery's phone number?": a contact asked for is the business's own, whatever its pages call it.
  const contact = reaches(q.want) || q.want === 'address';
  const subject = q.terms.map((t) => !t.proper && !t.typeWord && t.senses < VAGUE_VERB && !(contact && t.incidental));
  const named = subject.map((x, j) => x && (!q.terms[j]!.incidental || !subject.some((y, k) => y && !q.terms[k]!.incidental)));
  // Nor a number, unless nothing else is left: "How big a cake for 20 people?" is not about "about 20 restaurants".
  const numeric = (j: number) => /^\d+$/.test(q.terms[j]!.word);
  const topic = named.map((x, j) => x && (!numeric(j) || !named.some((y, k) => y && !numeric(k))));
  q = { ...q, terms: withSiteAliases(withKindredStems(q.terms, cands), q.text, cands) };
  // A question naming no place or branch means the business itself by its premises ("Who started the bakery?").
  const byName = !q.terms.some((t) => t.proper);
  // "Which email address handles catering requests?", "What email can I use to reach reception?": a contact asked for by
  // what it is for is the one whose label or address names it ("Catering: catering@…", "frontdesk@…"), by the word, a word
  // derived from it, or the thing a WordNet compound names by its first word ("reception desk": the site's "front desk").
  const forWhat = reaches(q.want)
    ? q.terms.map((t, j) => (topic[j] ? new Set([t.stem, ...t.derived, ...compoundHeads(t.word).map(stem)]) : null)) : [];
  const ownedBy = (c: Candidate, j: number) => { const f = forWhat[j]; return f !== undefined && f !== null && holdsAny(c.owner, f); };
  // "the Riverside gym": where Riverside is found, so is the gym it names (the name's term, found once, not per sentence).
  const namedAt = q.terms.map((t) => (t.namedBy === undefined ? -1 : q.terms.findIndex((u) => u.stem === t.namedBy)));
  const matches = cands.map((c) => {
    const m = q.terms.map((t, j) => (ownedBy(c, j) ? Math.max(WEIGHT.sentenceAlt, matchOf(t, c, byName)) : matchOf(t, c, byName)));
    return namedAt.every((name) => name < 0) ? m : m.map((x, j) => (namedAt[j]! >= 0 ? Math.max(x, m[namedAt[j]!]!) : x));
  });
  const hasTopic = topic.some(Boolean);
  const onTopic = (i: number) => !hasTopic || matches[i]!.some((m, j) => topic[j] && m >= WEIGHT.sectionAlt);
  // A name counts only where the site mentions it with the question's subject (or at all, when the question has no other subject).
  // Premises asked for in a place ("Do you have a gym in Denver?") are not tied to it by a post that names both ("…a week
  // climbing in Denver. She visited four gyms there"): a post tells of other people's premises.
  const premisesAsked = hasTopic && q.terms.every((t, j) => !topic[j] || t.premises);
  // Nor by a customer's quoted word ("I drive up from Boston…" — Tom), nor a sentence that puts the place to other premises
  // ("…a pastry chef at a hotel in Boston", for "Do you have a café in Boston?"). A street address there places the business
  // there, whatever it calls its premises ("Do you have a shop in Portland?": "41 Wharf Street, Portland"); another
  // sentence naming the town does not ("Tom guided in Denver…", for "Is there a location in Denver?").
  const found = q.terms.map((t, j) => !t.proper || cands.some((c, i) => (onTopic(i) || (premisesAsked && typeStrength(c.sentence, 'address') === 1)) && matches[i]![j]! >= WEIGHT.section
    && !(premisesAsked && (POST.test(c.chunk.url) || QUOTED.test(c.sentence) || placeOfOthers(c.sentence, t.word)))));
  // A name of two words or more is one name ("Apple Pay"): where the site lacks a part, it lacks the name.
  const runs = nameRuns(q);
  const missing = q.terms.map((_, j) => runs[j]!.some((k) => !found[k]));
  const unknown = q.terms.map((t) => !stats.df.get(t.stem));
  // "Do you take Apple Pay?", where the site names no Apple Pay: what is left ("take") is too vague to answer on its own,
  // or only says the kind of answer (the means of payment): then only a sentence holding that kind answers.
  const nothingLeft = missing.some(Boolean) && q.terms.every((t, j) => missing[j] || t.typeWord || (!t.proper && t.senses >= VAGUE_VERB));
  // A sentence is about the question when it matches its subject, or a name it asks about, in the sentence or its own heading.
  const relevant = (i: number) => onTopic(i) || q.terms.some((t, j) => t.proper && !missing[j] && matches[i]![j]! >= WEIGHT.heading);
  // "Do you have a gym in Seattle?": a place asked for wants sentences that name places.
  // So do premises asked for in a place the site names ("Do you have a shop in Portland?"): where they are answers.
  const want = q.want ?? (q.terms.some((t, j) => (missing[j] || (t.proper && premisesAsked)) && new RegExp(`\\b(in|at|near)\\s+${t.word}\\b`, 'i').test(q.text)) ? 'address' : null);
  const placeAsked = !q.want && want === 'address';
  // ...and is about them whatever it calls them, when the shops are all the question asks about.
  const premisesOnly = placeAsked && q.terms.every((t, j) => !topic[j] || t.premises);
  const dayAsked = want === 'time' || want === 'when' || want === 'day' ? NAMES_DAY.test(q.text) : undefined;
  const rateAsked = RATE_ASKED.test(q.text);
  const avgLen = cands.reduce((sum, c) => sum + c.s.size, 0) / Math.max(cands.length, 1) || 1;
  const rowOf = rowReadings(cands, q.terms);
  // "What if I don't have insurance?": most of all a sentence that denies what the question does ("No insurance? Our
  // in-house plan…", "Fees for patients without insurance"), over one that denies something else.
  // The heading's denial ("Fees for patients without insurance") holds for a sentence that does not say otherwise itself
  // ("Fees for patients with insurance depend on your plan").
  const deniedIn = (text: string) => deniedStems(text.replace(/\bwithout\b/gi, 'not'));
  const deniesAsked = (c: Candidate) => {
    const own = deniedIn(`${c.asks} ${c.sentence}`);
    const heading = deniedIn(c.lastHeading);
    const said = (t: QueryTerm, set: Set<string>) => set.has(t.stem) || [...t.derived, ...t.alternatives].some((a) => set.has(a));
    return q.terms.some((t, j) => topic[j] && (said(t, own) || (said(t, heading) && !c.s.has(t.stem))));
  };
  const scored = cands.map((c, i) => {
    let covered = 0;
    let total = 0;
    let bm25 = 0;
    // A place the site does not know ("in Seattle?") is answered by the town the business is in, as surely as by a street.
    let strength = !want ? 0 : want === 'person' && holdsType(c.lastHeading, want) ? 1 : !q.want ? Math.min(1, 1.7 * typeStrength(c.sentence, want)) : typeStrength(c.sentence, want, rateAsked);
    // "Where can I park?": a place on the premises ("in the lot behind the building", "online") as surely as a street.
    if (q.whereTo) strength = holdsPlaceToDo(c.sentence) ? 1 : 0;
    if (q.lead && want === 'duration' && strength > 0) strength *= !SAYS_LEAD.test(c.sentence) ? LEAD.plain : LIMIT.test(c.sentence) ? 1 : LEAD.noLimit;
    const typed = strength > 0;
    // That contact's own line: the question's other words only say how it serves what it is for ("handles … requests",
    // "use to reach"), which such a line never spells out. Those the sentence does not meet are left out of its score.
    const owned = typed && q.terms.some((_, j) => ownedBy(c, j));
    q.terms.forEach((t, j) => {
      if (missing[j] || (owned && !t.typeWord && !t.proper && matches[i]![j]! < WEIGHT.sectionAlt)) return;
      // "A shop in Boston?", where the site names no Boston: any of the business's addresses answers for its shops.
      const saysKind = t.typeWord || (placeAsked && t.premises);
      const m = saysKind && typed ? Math.max(0.8, matches[i]![j]!) : matches[i]![j]!;
      covered += weights[j]! * m;
      total += weights[j]!;
      bm25 += weights[j]! * ((m * (K1 + 1)) / (m + K1 * (1 - B + (B * c.s.size) / avgLen)));
    });
    let score = total && !(nothingLeft && !typed) ? covered / total : 0;
    if (!relevant(i) && !(typed && premisesOnly)) score *= 0.3;
    // A row of a table is about its item: of the items the question names ("pain de seigle", "cat spay"), a row labelled
    // with fewer is another item's, whatever its other cells share with the question ("tous les jours").
    const row = rowOf.get(c);
    if (row) score *= 1 - ROW_OTHER_ITEM * (1 - row.named);
    // A blog or news post talks about other places and other people's prices: the business's own pages come first
    // (not "articles": help centres keep their answers there).
    // Their values most of all: a price, a time or an address in a post is seldom the business's own ("The shops there open
    // at 7 am", in a post about Lisbon, does not answer "When are you open?"), unless the question names what the post is
    // about ("What does a pastel de nata cost in Lisbon?").
    const namesIt = q.terms.some((t, j) => t.proper && matches[i]![j]! >= WEIGHT.heading);
    if (POST.test(c.chunk.url)) score *= want && typed && !namesIt ? 0.8 : 0.9;
    // So does a customer's quoted word ("They catered our 60-person retreat…" — Greg): a testimonial, not the business's own.
    else if (QUOTED.test(c.sentence)) score *= 0.9;
    // A sentence that asks ("No insurance?", "Broken tooth or bad toothache?") answers nothing itself: what follows it does.
    if (/\?\s*$/.test(c.sentence)) score *= 0.5;
    // A way to do something is often said without a word that marks it ("We accept cash and all major cards"): it is
    // preferred, but weighs less than a price or a time does.
    // "Do you charge a deposit?": a sentence denying the thing asked ("There is no security deposit") says there is no such
    // charge, as surely as a price would say there is one.
    const held = q.yesNo && q.want && deniesAsked(c) ? 1 : strength;
    if (want) score *= want === 'method' ? 0.8 + 0.2 * held : 0.5 + 0.5 * held;
    // Of two sentences holding a phone number or an email address, the one that also says it in words ("Call us at …").
    const says = typed && reaches(want) && q.terms.some((t, j) => t.typeWord && matches[i]![j]! >= WEIGHT.sentenceAlt);
    // "What time do you open?" names no day: the week's hours come before a holiday's ("On New Year's Day we open at noon").
    // "Are both cafés open on Sunday?" is not answered by "Both cafés are closed on Thanksgiving, …": a holiday is another day.
    const special = dayAsked === false ? HOLIDAY.test(c.sentence) || /\beve\b/i.test(c.sentence)
      : dayAsked === true && !HOLIDAY.test(q.text) && HOLIDAY.test(c.sentence) && !WEEKDAY_NAME.test(c.sentence);
    // "How much is the 15 ft truck?": the row labelled with every item asked is that item's own line, before a sentence
    // that only mentions it ("The 15 ft truck is yours free for up to 4 hours…"), when both score alike. Not for a yes/no
    // question: a sentence says yes or no ("There is no security deposit"), a row's cell seldom does.
    const ownRow = !q.yesNo && row !== undefined && row.items > 0 && row.named === 1;
    return { c, score, bm25, typed, says, young: c.young && !q.forChild, special, ownRow };
  });
  const maxBm25 = Math.max(...scored.map((x) => x.bm25), 1e-9);
  // "What's your phone number?": with no subject to tell two numbers apart, the contact page's is the one meant.
  // "What happens if I don't pick it up?": of two sentences on it, the one about it not happening ("not collected").
  // Not a negation that only says whom the question is for ("for people who cannot eat gluten?").
  const negative = DENIES.test(withoutRelativeClauses(q.text));
  const contactFirst = !hasTopic && (reaches(want) || want === 'address');
  // "What time do you open?": likewise the hours page's times, not "Call before 10 am and we will see you the same day".
  const hoursFirst = !hasTopic && want === 'time';
  // Nor a contact given for one purpose only ("For membership questions, write to …", "Outside office hours, …") over the general one.
  // "What do I need to bring to my first appointment?" is not answered by "Bring your child for a first visit by age one": what
  // is said for children comes after what is said for everyone, unless the question is about a child. Its order only, not its
  // score: on a site for children alone (a pediatric practice, a kids' camp) every sentence is, and each still answers.
  // "Who is your pastry chef?": "Marcus Bell, our pastry chef, …" before "…eight years as a pastry chef at a hotel".
  const yours = ownedWords(q.text, 'your');
  const ours = (sentence: string) => yours.size > 0 && [...ownedWords(sentence, 'our')].some((st) => yours.has(st));
  // "Do you accept Apple Pay?", which the site does not name: "We accept cash and all major cards" says what it does, not
  // "We do not accept BadgerCare Plus", about another name.
  const asked = new Set(q.terms.filter((t) => t.proper).map((t) => t.word));
  const namesOthers = (sentence: string) => missing.some(Boolean) && [...namesIn(sentence)].some((n) => !asked.has(n));
  // "What forms of payment do you take?": the means a site accepts, before one it refuses ("We do not take personal checks");
  // so too for "Do you take Apple Pay?", where the site names no Apple Pay. Not "Can I pay with a check?": "No, we do not…".
  const refusedLast = q.want === 'payment' && !negative && (!q.yesNo || missing.some(Boolean));
  const key = (x: (typeof scored)[number]) => (x.young ? 0.7 : 1) * (x.special ? 0.8 : 1) * x.score + (0.1 * x.bm25) / maxBm25
    + (contactFirst && CONTACT.test(`${x.c.chunk.url} ${x.c.chunk.title ?? ''}`) ? 0.05 : 0)
    + (hoursFirst && HOURS.test(`${x.c.chunk.url} ${x.c.chunk.section ?? ''}`) ? 0.05 : 0) - (contactFirst && QUALIFIED.test(x.c.sentence) ? 0.05 : 0)
    + (x.says ? 0.02 : 0) + (x.ownRow ? 0.02 : 0) + (negative && DENIES.test(`${x.c.asks} ${x.c.sentence}`) ? 0.1 : 0) + (negative && deniesAsked(x.c) ? 0.05 : 0) + (ours(x.c.sentence) ? 0.03 : 0) - (namesOthers(x.c.sentence) ? 0.03 : 0)
    - (refusedLast && DENIES.test(x.c.sentence) ? 0.25 : 0);
  // Each sentence's key once, not once per comparison of the sort.
  const ordered = scored.map((x) => ({ x, k: key(x) })).sort((a, b) => b.k - a.k).map(({ x }) => x);
  const seen = new Set<string>();
  const out: RankedSentence[] = [];
  for (const { c, score, typed } of ordered) {
    if (seen.has(c.sentence) || out.length >= limit) continue;
    seen.add(c.sentence);
    out.push({
      sentence: c.sentence, context: c.context, url: c.chunk.url, title: c.chunk.title, section: c.chunk.section ?? null,
      score: Math.min(1, score), missing: q.terms.filter((_, j) => missing[j]).map((t) => t.word),
      absent: q.terms.filter((_, j) => missing[j] && runs[j]!.some((k) => unknown[k])).map((t) => t.word), typed, source: c.chunk,
      ...(c.entry ? { entry: c.entry } : {}),
    });
  }
  return out;
}
