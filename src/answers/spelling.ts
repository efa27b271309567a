/**
 * A visitor's slips of typing, mended against the site's own vocabulary before the question is read
 * ("reciept" → "receipt", "satuday" → "saturday", "grooming" where the visitor typed "groming"): a
 * word the site never writes, one edit away from a word it does (two for long words; a swap of two
 * letters is one edit), becomes the commonest such word of the site; a word cut short ("pedi"), the
 * commonest site word it begins. And chat shorthand ("tmrw", "pls", "appt") is written out. SymSpell's
 * idea: the site's words are indexed by their deletions, so a look-up costs a few dictionary reads,
 * not a pass over the vocabulary.
 */

/** Shorthand visitors type in a chat, for the words a site writes. */
const SHORTHAND: Record<'en' | 'fr', Record<string, string>> = {
  en: {
    tmrw: 'tomorrow', tmr: 'tomorrow', tmrow: 'tomorrow', tomoz: 'tomorrow', '2day': 'today', tonite: 'tonight',
    pls: 'please', plz: 'please', thx: 'thanks', u: 'you', ur: 'your', r: 'are', b4: 'before',
    appt: 'appointment', appts: 'appointments', apt: 'appointment', hrs: 'hours', mins: 'minutes', wk: 'week', wks: 'weeks',
    wknd: 'weekend', wkend: 'weekend', wkends: 'weekends', tues: 'tuesday', weds: 'wednesday', thurs: 'thursday',
    mon: 'monday', tue: 'tuesday', wed: 'wednesday', thu: 'thursday', fri: 'friday', sat: 'saturday', sun: 'sunday', yr: 'year', pics: 'photos', approx: 'approximately', bday: 'birthday',
    hw: 'how', wat: 'what', wht: 'what', wen: 'when', whn: 'when', whr: 'where', cn: 'can', dont: "don't", doesnt: "doesn't",
    cant: "can't", wont: "won't", isnt: "isn't", im: "i'm", ive: "i've", whats: "what's", whos: "who's", wheres: "where's", hows: "how's", rn: 'right now', thru: 'through', nxt: 'next', yrs: 'years',
    gotta: 'got to', gonna: 'going to', wanna: 'want to', yall: 'you all', havent: "haven't", hasnt: "hasn't", didnt: "didn't", wouldnt: "wouldn't", couldnt: "couldn't", shouldnt: "shouldn't", arent: "aren't", wasnt: "wasn't",
    ppl: 'people', amex: 'american express', mgr: 'manager', mngr: 'manager', num: 'number', bc: 'because', cuz: 'because', abt: 'about', avail: 'available', pkg: 'package', xmas: 'christmas',
  },
  fr: {
    stp: "s'il te plaît", svp: "s'il vous plaît", rdv: 'rendez-vous', dispo: 'disponible', dispos: 'disponibles', qd: 'quand', pr: 'pour',
    tjrs: 'toujours', bcp: 'beaucoup', auj: "aujourd'hui", ajd: "aujourd'hui", pk: 'pourquoi', pq: 'pourquoi', koi: 'quoi',
    mnt: 'maintenant', tt: 'tout', ts: 'tous', tte: 'toute', tel: 'téléphone', dimanch: 'dimanche', kel: 'quel', kelle: 'quelle',
    kels: 'quels', amex: 'american express', cb: 'combien', num: 'numéro', vs: 'vous', aprem: 'après-midi', exp: 'exemple', ptit: 'petit', ptite: 'petite',
  },
};

/** The words questions are built with, whose slips are mended whatever the site writes. */
const QUESTION_WORDS: Record<'en' | 'fr', string[]> = {
  en: ['how', 'who', 'why', 'what', 'when', 'where', 'are', 'you', 'can', 'does', 'have'],
  fr: ['quel', 'quoi', 'quand', 'vous', 'est'],
};

/** The question word `w` is a slip of (one letter changed, or two neighbours swapped), or null; never a guess between two. */
function questionWord(w: string, lang: 'en' | 'fr'): string | null {
  const near = QUESTION_WORDS[lang].filter((q) => q.length === w.length && q !== w && (
    [...q].filter((c, i) => c !== w[i]).length === 1
    || [...q].some((_, i) => i + 1 < q.length && q.slice(0, i) + q[i + 1] + q[i] + q.slice(i + 2) === w)));
  return near.length === 1 ? near[0]! : null;
}

export interface Vocabulary {
  /** How often the site writes each word (lower case, letters only). */
  counts: Map<string, number>;
  /** Each word's deletions (of up to two letters) to the words they come from. */
  deletions: Map<string, string[]>;
}

const WORD = /\p{L}[\p{L}'’-]*\p{L}|\p{L}/gu;
const MAX_DELETIONS = 2;

function deletionsOf(word: string, depth: number, out = new Set<string>()): Set<string> {
  if (depth === 0 || word.length <= 3) return out;
  for (let i = 0; i < word.length; i++) {
    const d = word.slice(0, i) + word.slice(i + 1);
    if (!out.has(d)) {
      out.add(d);
      deletionsOf(d, depth - 1, out);
    }
  }
  return out;
}

/**
 * The vocabulary of a site's texts: words of four letters or more. A word joined to another by a hyphen or an elision
 * counts as itself ("Croix-Rousse" writes "croix" and "rousse", "l'atelier" writes "atelier", "drop-off" writes "drop"):
 * else a visitor's "croix" would be no word of the site, and be mended into one that is ("choix").
 */
export function vocabularyOf(texts: string[]): Vocabulary {
  const counts = new Map<string, number>();
  for (const text of texts) {
    for (const joined of text.toLowerCase().match(WORD) ?? []) {
      for (const w of joined.split(/['’-]+/)) if (w.length >= 4) counts.set(w, (counts.get(w) ?? 0) + 1);
    }
  }
  const deletions = new Map<string, string[]>();
  for (const word of counts.keys()) {
    for (const d of deletionsOf(word, MAX_DELETIONS)) {
      const list = deletions.get(d);
      if (list) list.push(word);
      else deletions.set(d, [word]);
    }
  }
  return { counts, deletions };
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of two neighbours. */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The site's word a slip of `word` was meant as, or null: the closest, then the commonest; never a guess between equals. */
export function nearestSiteWord(word: string, vocab: Vocabulary): string | null {
  const allowed = word.length >= 7 ? 2 : 1;
  const candidates = new Set<string>();
  for (const key of [word, ...deletionsOf(word, allowed)]) for (const w of vocab.deletions.get(key) ?? []) candidates.add(w);
  if (vocab.counts.has(word)) candidates.add(word);
  let best: { word: string; distance: number; count: number } | null = null;
  let tied = false;
  for (const c of candidates) {
    // A slip seldom hits the first letter: a word starting otherwise is another word ("main" is no slip of "pain").
    if (c === word || c[0] !== word[0]) continue;
    const distance = editDistance(word, c);
    if (distance > allowed) continue;
    const count = vocab.counts.get(c) ?? 0;
    if (!best || distance < best.distance || (distance === best.distance && count > best.count)) {
      tied = best !== null && distance === best.distance && count === best.count;
      best = { word: c, distance, count };
    } else if (distance === best.distance && count === best.count) tied = true;
  }
  return best && !tied ? best.word : null;
}

/**
 * A word cut short ("pedi" for "pedicure", "reno" for "renovation", "dispo" for "disponible"): the commonest word of the
 * site that starts with it and is at least two letters longer; null when none does, or two are as common.
 */
export function clippedSiteWord(word: string, vocab: Vocabulary): string | null {
  if (word.length < 4) return null;
  // A plural counts for its singular ("pedicures" for "pedicure") when the site writes both.
  const begun = new Map<string, number>();
  for (const [w, count] of vocab.counts) if (w.length >= word.length + 2 && w.startsWith(word)) begun.set(w, count);
  for (const [w, count] of begun) {
    const one = w.endsWith('s') ? w.slice(0, -1) : '';
    if (begun.has(one)) {
      begun.set(one, begun.get(one)! + count);
      begun.delete(w);
    }
  }
  let best: string | null = null;
  let bestCount = 0;
  let tied = false;
  for (const [w, count] of begun) {
    if (count > bestCount) [best, bestCount, tied] = [w, count, false];
    else if (count === bestCount) tied = true;
  }
  return tied ? null : best;
}

/**
 * A compound the visitor writes closed that the site writes open ("bloodwork" for "blood work"): the two site words it
 * splits into (each of four letters or more, as the vocabulary keeps), the commonest such pair; null when there is none.
 */
export function openedCompound(word: string, vocab: Vocabulary): string | null {
  let best: string | null = null;
  let bestCount = 0;
  for (let k = 4; k <= word.length - 4; k++) {
    const count = Math.min(vocab.counts.get(word.slice(0, k)) ?? 0, vocab.counts.get(word.slice(k)) ?? 0);
    if (count > bestCount) [best, bestCount] = [`${word.slice(0, k)} ${word.slice(k)}`, count];
  }
  return best;
}

/** Two words the visitor writes apart that the site writes as one ("drop box" for "dropbox"): joined as the site writes them. */
export function closedCompounds(text: string, vocab: Vocabulary): string {
  return text.replace(/(?<![\p{L}\d'’-])(\p{Ll}{2,}) (\p{Ll}{2,})(?![\p{L}\d'’-])/gu, (pair, a: string, b: string) => (vocab.counts.has(`${a}${b}`) ? `${a}${b}` : pair));
}

/**
 * A French chat's spelling by sound ("boutik", "kartes"): "k" written for "qu" or "c", the site's word one
 * edit from the word so respelled. Null when no respelling meets one, or two do.
 */
function soundsLike(word: string, vocab: Vocabulary): string | null {
  if (!word.includes('k')) return null;
  const found = new Set([word.replace(/k/g, 'qu'), word.replace(/k/g, 'c')].map((w) => (vocab.counts.has(w) ? w : nearestSiteWord(w, vocab))).filter((w) => w !== null));
  return found.size === 1 ? [...found][0]! : null;
}

/**
 * `text` with chat shorthand written out and, where `known` says a word is no word of the language, its slips mended
 * against the site's vocabulary. Capitalised words (names) and words the site writes are left as they are.
 */
export function withSiteSpelling(text: string, lang: 'en' | 'fr', vocab: Vocabulary, known: (word: string) => boolean): string {
  const shorthand = SHORTHAND[lang];
  return text.replace(/(?<![\p{L}\d'’-])[\p{Ll}\d][\p{L}\d]*(?![\p{L}\d'’-])/gu, (w) => {
    const short = Object.hasOwn(shorthand, w) ? shorthand[w] : undefined;
    if (short) return short;
    if (/\d/.test(w) || vocab.counts.has(w) || known(w)) return w;
    // "hiw much", "waht time": a slip in one of the few words a question is built with, one letter off or two swapped.
    if (w.length <= 4) return questionWord(w, lang) ?? clippedSiteWord(w, vocab) ?? w;
    return openedCompound(w, vocab) ?? nearestSiteWord(w, vocab) ?? (lang === 'fr' ? soundsLike(w, vocab) : null) ?? clippedSiteWord(w, vocab) ?? w;
  });
}
