import { createRequire } from 'node:module';
/**
 * Text utilities every room of the runtime reads with: folding, content terms, sentences,
 * phrase matchers. Pure functions of strings.
 */

/** Lower case, accents dropped, typographic apostrophes made plain: what every matcher reads. */
export function fold(text: string): string {
  return text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[’‘`´]/g, "'");
}

/**
 * The `stopword` package's French list, copied, with the package then dropped from the require cache: the package is
 * one script of 62 languages' lists (401 KiB of source, 0.85 MiB of heap with its arrays) of which only these ~170
 * words are read, once, at load. Nothing else requires it; a later require would load it again (issue 48).
 */
function frenchStopwords(): string[] {
  const require = createRequire(import.meta.url);
  const id = require.resolve('stopword');
  try {
    return (require(id) as { fra: string[] }).fra;
  } finally {
    delete require.cache[id];
  }
}

/**
 * French words that carry no subject of their own, in any trade: the function words and the forms of "être" and
 * "avoir" (the `stopword` package's French list), and the modal and aspect verbs a question leans on ("faut-il",
 * "je peux", "vous devez", "on va") with the prepositions of time and place a sentence that answers seldom repeats
 * ("avant", "chez"). WordNet, which says how vague an English word is, knows no French word: without them every French
 * question word would weigh as a rare noun does.
 */
const FRENCH_FUNCTION_WORDS = [
  ...frenchStopwords().map((w) => fold(w)),
  ...`faut falloir peut peux peuvent pouvoir pourrais pourrait pourriez dois doit doivent devez devons devoir devrais devrait
  veut voulez voulons vouloir vais va vas vont allez aller chez vers avant apres entre pendant depuis deja encore toujours
  bien comme alors donc est-ce ya svp stp`.split(/\s+/),
].join(' ');

export const STOPWORDS = new Set(`a an the and or but if of to in on at by for with without within about from into over under after before during until is are was were be been
being am do does did done have has had i me my mine we our ours us you your yours he him his she her it its they them their
this that these those what which who whom whose when where why how can could would should will shall may might must not no
yes so than too very just also there here any some all please hi hello hey thanks thank tell know like want need get got let
im ive id dont doesnt didnt isnt arent cant much many more most out up down as then ok okay s t d ll re ve m one ones
myself yourself yourselves ourselves themselves himself herself itself ever never only both either neither
while whilst though although because unless whether along
le la les l un une des de du d et ou mais au aux en dans sur pour par avec sans sous est sont etre ai as avez avons ont suis es
je j tu il elle on nous vous ils elles me m te se ce cet cette ces c ca qui que qu quoi quel quelle quels quelles quand comment
pourquoi combien mon ma mes ton ta tes son sa ses notre nos votre vos leur leurs ne n pas plus y bonjour merci svp peux pouvez
puis voudrais veux savoir si tres aussi faire fait
${FRENCH_FUNCTION_WORDS}`.split(/\s+/));

/** Light English stemming, enough for "opening hours" to meet "open" and "hour". */
function stem(word: string): string {
  let w = word;
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 4 && /(ss|x|ch|sh)es$/.test(w)) w = w.slice(0, -2);
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1);
  // "shipping" / "shipped" -> "shipp" -> "ship"
  if (/([b-df-hj-np-tv-z])\1$/.test(w) && !/(ll|ss|zz)$/.test(w) && w.length > 3) w = w.slice(0, -1);
  return w;
}

/** The content terms of a text: folded, stop words dropped, stemmed. */
export function terms(text: string): Set<string> {
  const out = new Set<string>();
  for (const raw of fold(text).split(/[^a-z0-9]+/)) {
    if (!raw || STOPWORDS.has(raw) || (raw.length < 2 && !/\d/.test(raw))) continue;
    out.add(stem(raw));
  }
  return out;
}

export function overlap(a: Set<string>, b: Set<string>): string[] {
  return [...a].filter((t) => b.has(t));
}

export const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A matcher for whole words or phrases (optionally plural) in folded text. */
export function phraseMatcher(phrases: string[]): RegExp {
  const alternatives = phrases.map((p) => escapeRegExp(fold(p)).replace(/ /g, '\\s+')).join('|');
  return new RegExp(`(?:^|[^a-z0-9])(?:${alternatives})(?:e?s)?(?=[^a-z0-9]|$)`);
}

/** Abbreviations that end with a full stop inside a sentence ("Dr. Park", "St. Louis"): no sentence ends after them. */
const ABBREVIATION = String.raw`(?<!\b(?:Dr|Drs|Mr|Mrs|Ms|Mx|Prof|St|Ste|Mt|Jr|Sr|No|Nos|vs|approx|e\.g|i\.e)\.)`;
const SENTENCE_END = new RegExp(String.raw`\n+|(?<=[.!?])${ABBREVIATION}\s+(?=["“(«]?[\p{Lu}\d])`, 'u');

export function splitSentences(text: string): string[] {
  return text
    .split(SENTENCE_END)
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter((s) => s.length > 1);
}

export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), max - 20)).replace(/[\s,;:]+$/, '')}…`;
}

/**
 * `read`, a pure function of a text, with its results kept for the `kept` texts read last (the first read out first):
 * a question is read by the training notes, the data rows, retrieval and the reply alike, and a site's sentences recur
 * from one question to the next. The results are shared: callers never change them.
 */
export function remembered<T>(kept: number, read: (text: string) => T): (text: string) => T {
  const results = new Map<string, T>();
  return (text) => {
    if (results.has(text)) return results.get(text)!;
    const out = read(text);
    if (results.size >= kept) results.delete(results.keys().next().value!);
    results.set(text, out);
    return out;
  };
}

/** The index of the last item that passes `test`, or -1. */
export function lastIndexOf<T>(items: T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i -= 1) if (test(items[i]!)) return i;
  return -1;
}

/** A table row as the crawler writes it: "Label — Column: value; …" or "Label: value" (a full stop inside a number, "$5.25", ends nothing). */
export const TABLE_ROW = /^[^.!?—:]{1,60} — (?:[^.!?]|\.(?=\d))*:|^[^.!?:]{1,40}: (?:[^.!?]|\.(?=\d))+\.?$/;
