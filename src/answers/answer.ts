import { nlp } from './nlp.ts';
import { analyzeQuestion, DAYS, deniedStems, FUNCTION_WORD, namesIn, negatedClauses, holdsStreetAddress, holdsType, namesYoung, OTHER_DAY, stem, stems, withDayRanges, verbsOf, withoutRelativeClauses, words, type QueryTerm, type Question } from './analysis.ts';
import { ANSWER_THRESHOLD, rankSentences, VAGUE_VERB, type RankedSentence } from './rank.ts';
import { isPostPage, type Passage } from './retrieval.ts';
import { isBaseVerb, isKnownWord, senseCount } from './wordnet.ts';
import { languageOfText } from './phrases.ts';
import { fold, splitSentences, STOPWORDS, TABLE_ROW, truncate } from './text.ts';

/**
 * Answering from knowledge as a person would: the one sentence that answers (with its heading
 * when the heading holds what was asked, "Maya Chen, Head Coach: Maya teaches..."), "Yes, …" or
 * "No, …" to a yes/no question when the sentence says so, and what the site does say when the
 * question names something it does not ("Our site doesn't mention Denver. …"; not said of a name it
 * does mention elsewhere).
 */

export interface Answer { text: string; urls: string[] }

/** Rows given besides the first for a plural ("prices?"), and how near the first's score each must be. */
const MORE_ROWS = 3;
const SEVERAL_ROWS = 0.9;
/** A line with a leading label ("Catering: catering@… or (207) 555-0148"). */
const LABELLED = /^\s*[A-Za-z][A-Za-z' -]{0,30}:\s/;
/** Sentence openers that read lower case after "Yes, " (not names). */
const COMMON_OPENERS = new Set(['both', 'every', 'each', 'all', 'members', 'staff', 'there', 'it', 'we', 'you', 'our', 'your', 'the', 'a', 'an']);

/** The ranked sentences: as retrieval found them, or ranked here when the passages come from elsewhere. */
function ranked(q: Question, passages: Passage[]): RankedSentence[] {
  if (passages.some((p) => p.answer !== undefined)) {
    return passages.filter((p) => p.answer !== undefined).map((p) => ({
      sentence: p.answer!, context: p.text, url: p.url, title: p.title, section: p.section ?? null, score: p.score, missing: p.missing ?? [], absent: p.absent ?? p.missing ?? [],
      typed: q.want ? holdsType(p.answer!, q.want) : false, ...(p.entry ? { entry: p.entry } : {}),
    }));
  }
  return rankSentences(q, passages).filter((r) => r.score >= ANSWER_THRESHOLD);
}

function lowerFirst(q: Question, sentence: string, names: Set<string>): string {
  const first = sentence.split(/\s/)[0] ?? '';
  // A name compromise does not know ("Priya runs the youth team") is no word of WordNet's either.
  const word = fold(first).replace(/[^a-z'-]/g, '');
  const known = word.split('-').some((part) => part.length > 1 && (isKnownWord(part) || isKnownWord(stem(part))));
  // Nor is a name the question writes with a capital ("Is Eastside open on Mondays?": WordNet knows an "eastside").
  // Or one the site names and the message asks about, however the visitor wrote it ("hilltop": the Hilltop clinic).
  const named = q.terms.some((t) => t.proper && t.word === word) || names.has(stem(word));
  // "Everything is baked on site…": a pronoun WordNet does not know.
  const common = STOPWORDS.has(word) || COMMON_OPENERS.has(word) || FUNCTION_WORD.test(word) || (!named && !nlp(sentence).terms().first().has('#ProperNoun') && known);
  return common ? sentence.charAt(0).toLowerCase() + sentence.slice(1) : sentence;
}

/** Whether a stem is a word of the question: itself, a synonym or a word derived from it. */
const asks = (q: Question, st: string) => q.terms.some((t) => t.stem === st || t.alternatives.has(st) || t.derived.has(st));

/** A question asking whether something must be done or had. */
const NECESSITY_ASKED = /\b(need|needs|needed|have to|has to|must|required?|necessary|mandatory|compulsory|obligatory|obligatoire|faut-il|besoin)\b/i;
/** A sentence saying it need not: "not required", "optional", "no need to", "you don't have to". */
const NOT_NECESSARY = /\b(not|never|n't)\s+(strictly\s+|always\s+|usually\s+)?(required|needed|necessary|mandatory|compulsory|obligatory|need(ed)? to|have to|has to)\b|\bno\s+(need|requirement|obligation)\b|\boptional\b|\b(don'?t|doesn'?t|do not|does not|won'?t|will not)\s+(need|have)\s+to\b|\bpas (obligatoire|n[ée]cessaire|besoin)\b|\bfacultati(f|ve)\b|\bsans (rendez-vous|r[ée]servation)\b/i;

/** The score from which a sentence meets about all a question asks: its "only" limits nothing asked. */
const SURE_ONLY = 0.9;

/**
 * Whether the sentence denies what was asked: a negation whose clause (up to the next comma or
 * semicolon) holds a word of the question ("we do not take personal checks"), not one about
 * something else ("cancelling late, or not showing up, costs $50"), about other names, or of another act; a class of a
 * thing asked about, denied ("We do not serve alcohol", to "Do you serve beer?"); or "only" or "except" limiting a part
 * of it that does, unless the sentence meets all the question asks (`score`, SURE_ONLY).
 */
function negates(q: Question, sentence: string, score: number): boolean {
  const asked = (st: string) => asks(q, st);
  // Whether something must be done is denied by saying it need not ("Do I need an appointment?": "Appointments are
  // recommended but not required").
  if (NECESSITY_ASKED.test(q.text) && NOT_NECESSARY.test(sentence)) return true;
  // A class denied denies its members ("We do not serve alcohol" to "Do you serve beer?").
  const denied = deniedStems(sentence);
  if (q.terms.some((t) => [...(t.classes ?? [])].some((st) => denied.has(st)))) return true;
  const named = new Set(q.terms.filter((t) => t.proper).map((t) => t.stem));
  const acts = actsOf(q);
  // "Only" and "except" limit their part of the sentence: "street parking only; the number 4 bus stops in front" does not
  // deny a bus stop.
  // What they limit is what follows them ("you pay only your share"), or what comes before an "only" that ends its part
  // ("street parking only"); not a compound's first word ("a bouldering-only gym with … a fitness area").
  // And only what is asked besides: where the sentence (with its heading) meets all the question asks, it says yes to it
  // ("Is there parking at Old Port?": "Street parking only"; "Can I pay with cash?": "We accept only cash").
  for (const part of score >= SURE_ONLY ? [] : sentence.split(/;/)) {
    for (const m of part.matchAll(/(?<![\w-])(only|except)\b/gi)) {
      const after = part.slice(m.index + m[0].length);
      const limited = m[1]!.toLowerCase() === 'only' && !/\w/.test(after) ? part.slice(0, m.index) : after;
      if ([...stems(limited)].some(asked)) return true;
    }
  }
  // The clause after a negation: its own word is no word of the question ("alone" has "only" among its synonyms).
  for (const clause of negatedClauses(sentence)) {
    // "Is Guardian insurance accepted?" is not denied by "We do not accept BadgerCare Plus or other Medicaid plans": a
    // clause that names others than the names asked about is about them.
    const others = [...namesIn(clause)].filter((n) => !named.has(stem(n)));
    if (named.size && others.length && ![...named].some((n) => stems(clause).has(n))) continue;
    // "Can I share my punch card?" is not denied by "We do not refund day passes or punch cards": a precise verb denied is
    // another act than the precise one asked about, whatever things they share. A vague one ("take") says less.
    const own = stems(clause);
    if (deniedAct(q, clause, acts)) continue;
    if ([...own].some(asked)) return true;
  }
  return false;
}

/** Whether the clause after a negation denies a precise act the question does not ask about, while it asks about another. */
function deniedAct(q: Question, clause: string, acts: QueryTerm[]): boolean {
  const predicate = words(clause).find((w) => !STOPWORDS.has(w));
  const own = stems(clause);
  return !!predicate && !asks(q, stem(predicate)) && isBaseVerb(predicate) && senseCount(predicate) < VAGUE_VERB
    && acts.length > 0 && !acts.some((t) => own.has(t.stem) || [...t.alternatives, ...t.derived].some((a) => own.has(a)));
}

/** Whether a negation of the sentence denies another act than the one asked about (`deniedAct`). */
function deniesOtherAct(q: Question, sentence: string): boolean {
  const acts = actsOf(q);
  return negatedClauses(sentence).some((clause) => deniedAct(q, clause, acts));
}

/** The precise verbs a question asks about ("share" in "Can I share my punch card?"; not "take", a verb of 44 senses). */
function actsOf(q: Question): QueryTerm[] {
  const verbs = verbsOf(q.text);
  return q.terms.filter((t) => verbs.has(t.word) && !t.typeWord && t.senses < VAGUE_VERB);
}

/** A question asked with a negation ("without a membership", "if I don't…"), not in a relative clause. */
const ASKS_NEGATED = /\b(not|never|cannot|can'?t|don'?t|doesn'?t|didn'?t|won'?t|isn'?t|aren'?t|without)\b|n't\b/i;

/** A negation in a sentence (English and French). */
const NEGATION = /\b(not|never|cannot|no longer|neither|nor|ne|n'|pas|jamais|aucun|aucune)\b|n't\b/i;

/** A sentence without the "Yes, " or "No, " it opens with, capitalised again ("No one…" keeps its "No"). */
const withoutYesNo = (text: string) => text.replace(/^(yes|no)[,.!]\s+(\S)/i, (_, _yn: string, c: string) => c.toUpperCase());

/** Whether the sentence leaves out a name the question asks about and names others (its own, not the question's). */
function aboutOthers(q: Question, sentence: string): boolean {
  const own = stems(sentence);
  const asked = q.terms.filter((t) => t.proper);
  return asked.some((t) => !own.has(t.stem)) && [...namesIn(sentence)].some((n) => !asked.some((t) => t.word === n));
}

/** "Yes, …" or "No, …" when the sentence says so; the sentence as it is when it already does, or when it is not clear. */
function yesOrNo(q: Question, sentence: string, score: number, asked: Set<string>): string {
  // A table row ("Saturday — Downtown: Closed; West: 8 am – 12 pm") gives its values; neither yes nor no.
  // An FAQ answer's own yes or no is for its own question: not for one that names a name it leaves out for another ("Do
  // you see kids at the downtown office?": "Yes, Dr. Ruiz sees children from age one at the West office.").
  if (/^(yes|no)\b/i.test(sentence)) return aboutOthers(q, sentence) ? withoutYesNo(sentence) : sentence;
  if (TABLE_ROW.test(sentence)) return sentence;
  // What is said for the young only ("We do not whiten teeth for patients under 16") is no answer for everyone: neither yes nor no.
  if (namesYoung(sentence) && !q.forChild) return sentence;
  // "Are you open on Sunday?" / "c'est ouvert le dimanche ?": "Closed on Sundays", "Fermée le dimanche" say no.
  const asksOpen = /\bopen\b|\bouv(ert|erte|erts|ertes|re|rez|rent)\b/i.test(fold(q.text));
  if (negates(q, sentence, score) || (asksOpen && /\bclosed\b|\bferm[ée]e?s?\b/i.test(sentence))) return `No, ${lowerFirst(q, sentence, asked)}`;
  // A negation of another act ("We do not refund punch cards", to "Can I share my punch card?") is no "Yes" either.
  if (deniesOtherAct(q, sentence)) return sentence;
  // "Can I climb without a membership?": a sentence that denies nothing ("Memberships work at both locations") is no "Yes".
  if (ASKS_NEGATED.test(withoutRelativeClauses(q.text))) return sentence;
  // Affirmed when the sentence answers surely, or itself holds every word the question is about (as it is, derived
  // or a synonym: "a booking online" in "appointments can be made online"), vague verbs ("make", "take") aside.
  const own = stems(sentence);
  const about = q.terms.filter((t) => t.proper || (!t.typeWord && t.senses < VAGUE_VERB));
  const holds = (t: QueryTerm) => own.has(t.stem) || [...t.derived, ...t.alternatives].some((a) => own.has(a));
  const held = about.length > 0 && about.every(holds);
  // Or holds every name asked about ("Spanish", "Delta Dental") and answers well enough.
  const names = q.terms.filter((t) => t.proper);
  const named = names.length > 0 && names.every(holds) && score >= 0.6;
  // A negation the clauses above did not tie to the question is never beside a "Yes": what follows it, up to a "but" or a
  // semicolon, denying a word the question is about, is a "No" ("We do not accept PayPal, Venmo or Zelle", to "do you take
  // venmo"); so is a sentence that holds all the question is about and denies it ("Lash extensions are not on our menu").
  const negation = NEGATION.exec(sentence);
  if (negation) {
    const rest = stems(sentence.slice(negation.index).split(/;|\bbut\b|\bexcept\b|\bhowever\b/i)[0]!);
    const denies = about.some((t) => rest.has(t.stem) || [...t.derived].some((d) => rest.has(d)))
      || (held && !/;|\bbut\b|\bexcept\b|\bhowever\b/i.test(sentence));
    return denies ? `No, ${lowerFirst(q, sentence, asked)}` : sentence;
  }
  return score >= 0.75 || named || (held && score >= ANSWER_THRESHOLD) ? `Yes, ${lowerFirst(q, sentence, asked)}` : sentence;
}

/** Sentences too short to say anything alone ("Yes.", "Of course.", "Not at all."): what follows says it. */
const BARE = 3;

/** The sentence, and the one after it in its passage when it is bare: an FAQ's "Yes." with "Our fees are the same at both clinics." */
function withNext(r: RankedSentence): string {
  const sentence = r.sentence.trim();
  if (sentence.split(/\s+/).length > BARE) return sentence;
  const at = r.context.indexOf(sentence);
  const next = at < 0 ? undefined : splitSentences(r.context.slice(at + sentence.length))[0];
  return next && !/\?\s*$/.test(next) ? `${sentence} ${next.trim()}` : sentence;
}

/** One ranked sentence as a reply reads it: tidied, ended, with its heading when only the heading holds what was asked. */
function sentenceOf(q: Question, r: RankedSentence, named: Set<string>): string {
  let text = truncate(withNext(r).replace(/\s+/g, ' ').trim(), 400);
  // An FAQ's answer opens with its own question's yes or no ("Yes, Dr. Ruiz sees children from age one…"): no reply to
  // "What age do you stop seeing children?".
  if (!q.yesNo) text = withoutYesNo(text);
  text = cellsAsked(q, text, named);
  const heading = r.section?.split(' › ').at(-1);
  // "Luis and his crew..." under "Luis Ortega, Head Route Setter": the heading names the person in full.
  // Someone to talk to, found without a number or an address to reach them, is named as a person is.
  const want = q.want === 'contact' && !holdsType(text, 'contact') ? 'person' : q.want;
  const headingNeeded = want === 'person' ? !text.includes(heading?.split(',')[0] ?? '') : want ? !holdsType(text, want) : !/\d/.test(text);
  if (want && heading && headingNeeded && holdsType(heading, want)) text = `${heading}: ${text}`;
  return /[.!?…]$/.test(text) ? text : `${text}.`;
}

/**
 * A table row of several labelled cells, some of which the question names ("Saturday — Riverside: 8 am – 6 pm; Maplewood:
 * 9 am – 5 pm" to "open saturday at maplewood?"): the row's label and the cells named only, not another column's value
 * given beside the one asked for, or, when it names no heading whole, those it names the most of. A row whose cells the
 * question names none or all of stays whole. `names`: the stems of the entities the whole message names, as the question's own.
 */
function cellsAsked(q: Question, row: string, names: Set<string>): string {
  const m = /^([^—]{1,80}) — (.+?)\.?$/.exec(row);
  if (!m) return row;
  const cells = m[2]!.split(/;\s+/).map((cell) => ({ cell, label: /^([^:]{1,40}): \S/.exec(cell)?.[1] }));
  if (cells.length < 2 || cells.some((c) => !c.label)) return row;
  const asked = new Set([...stems(q.text), ...names]);
  const hits = cells.map((c) => {
    const label = [...stems(c.label!)];
    const n = label.filter((st) => asked.has(st)).length;
    // A cell named must also hold the kind of answer wanted: "combien la part" asks a price, not "Nombre de parts".
    const holds = !q.want || holdsType(c.cell, q.want);
    return { whole: holds && label.length > 0 && n === label.length, n: n * 2 >= label.length && holds ? n : 0 };
  });
  // Cells whose heading the question names whole; else those whose heading it names the most of, half at least; each
  // holding what it asks ("the trade counter open?" names "Trade counter & will-call: 7:00 am", not "Showroom").
  const most = Math.max(...hits.map((h) => h.n));
  const named = hits.some((h) => h.whole) ? cells.filter((_, i) => hits[i]!.whole) : cells.filter((_, i) => most > 0 && hits[i]!.n === most);
  if (!named.length || named.length === cells.length) return row;
  return `${m[1]} — ${named.map((c) => c.cell).join('; ')}.`;
}

/** The heading of `r`'s section with a colon, when it is a name (capitalised words: "Downtown", "Back Cove") that `text` does not hold. */
function namedHeading(r: RankedSentence, text: string): string {
  const heading = r.section?.includes(' › ') ? r.section.split(' › ').at(-1)!.trim() : '';
  return /^[A-Z][a-z][\w'’-]*(\s+[A-Z][a-z][\w'’-]*){0,2}$/.test(heading) && !text.includes(heading) ? `${heading}: ` : '';
}

const capitalize = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

/** The names `names` are words of, as the question writes them next to each other ("apple", "pay" → "Apple Pay"). */
function namesOf(q: Question, names: string[]): string[] {
  const order = words(q.text);
  const out: string[][] = [];
  for (const name of [...names].sort((a, b) => order.indexOf(a) - order.indexOf(b))) {
    const last = out.at(-1);
    if (last && order.indexOf(name) === order.indexOf(last.at(-1)!) + 1) last.push(name);
    else out.push([name]);
  }
  return out.map((run) => run.map(capitalize).join(' '));
}

/** "Do you have a shop in Boston?", "Is there a branch in Falmouth?": the business's premises are all it asks about, in a named place. */
function asksForPremises(q: Question): boolean {
  const about = q.terms.filter((t) => !t.proper && !t.typeWord && t.senses < VAGUE_VERB);
  return q.terms.some((t) => t.proper) && about.length > 0 && about.every((t) => t.premises);
}

/** "a shop in Boston", "an office near Milwaukee": the premises as the question names them, where it places them. */
function premisesIn(q: Question, names: string[]): string {
  // As the visitor wrote it ("a café"), not folded ("a cafe").
  const folded = q.terms.find((t) => t.premises)!.word;
  const noun = (q.text.split(/[^\p{L}\p{N}'-]+/u).find((w) => fold(w) === folded) ?? folded).toLowerCase();
  const where = names.map((name) => `${new RegExp(`\\b(in|at|near)\\s+${name}\\b`, 'i').exec(q.text)?.[1]?.toLowerCase() ?? 'in'} ${capitalize(name)}`);
  return `${/^[aeiou]/.test(noun) ? 'an' : 'a'} ${noun} ${where.join(' or ')}`;
}

/** A row of an hours table that starts with its day or days ("Monday — …", "Tuesday to Friday — …"). */
const DAY_ROW = /^(mon|tues|wednes|thurs|fri|satur|sun)day\b[^—:]{0,30}[—:]/i;

/**
 * The days of the week a question asks about: none named ([]), those it names ("on weekends": Saturday and Sunday), or
 * null for a day out of the week's run ("on Christmas", "today").
 */
function daysAsked(question: string): string[] | null {
  const q = fold(question);
  if (OTHER_DAY.test(q)) return null;
  const days = new Set<string>();
  if (/\bweekends?\b/.test(q)) DAYS.slice(5).forEach((d) => days.add(d));
  if (/\bweekdays?\b/.test(q)) DAYS.slice(0, 5).forEach((d) => days.add(d));
  for (const d of DAYS) if (new RegExp(`\\b${d}s?\\b`).test(q)) days.add(d);
  return [...days];
}

/**
 * The rows of the hours table `best` is a row of, for the days asked (all, when none is named), in the week's order, each
 * with the cells asked (`cellsAsked`), when there are two or more; null otherwise.
 */
function weekOf(q: Question, all: RankedSentence[], best: RankedSentence, days: string[], named: Set<string>): string | null {
  if (!DAY_ROW.test(best.sentence.trim())) return null;
  // By the week's order of the day each row starts with.
  const rows = new Map<number, string>();
  for (const r of all) {
    const row = r.sentence.trim();
    if (r.url !== best.url || r.section !== best.section || r.score < ANSWER_THRESHOLD || !DAY_ROW.test(row)) continue;
    if (days.length && !days.some((d) => fold(withDayRanges(row)).includes(d))) continue;
    const cells = cellsAsked(q, row, named);
    rows.set(DAYS.findIndex((d) => fold(row).startsWith(d.slice(0, 3))), /[.!?]$/.test(cells) ? cells : `${cells}.`);
  }
  if (rows.size < 2) return null;
  return [...rows].sort(([a], [b]) => a - b).map(([, row]) => row).join(' ');
}

/**
 * The street addresses of the page `best` is on, one per heading, each after its heading ("Old Port: 41 Wharf Street, ….
 * Back Cove: 780 Forest Avenue, …."), when `best` is one of two or more; null otherwise.
 */
function addressesOf(all: RankedSentence[], first: RankedSentence): string | null {
  const headingOf = (r: RankedSentence) => (r.section?.includes(' › ') ? r.section.split(' › ').at(-1)! : '');
  // The page's first street address, when the best says only the town ("Both offices are in Madison, Wisconsin").
  const best = holdsStreetAddress(first.sentence) ? first : all.find((r) => r.url === first.url && r.score >= ANSWER_THRESHOLD && holdsStreetAddress(r.sentence));
  if (!best || !headingOf(best)) return null;
  const places = new Map<string, string>();
  for (const r of all) {
    const heading = headingOf(r);
    if (r.url !== best.url || r.score < ANSWER_THRESHOLD || !heading || places.has(heading) || !holdsStreetAddress(r.sentence)) continue;
    const text = /[.!?]$/.test(r.sentence.trim()) ? r.sentence.trim() : `${r.sentence.trim()}.`;
    places.set(heading, text.includes(heading) ? text : `${heading}: ${text}`);
  }
  return places.size >= 2 ? [...places.values()].slice(0, 4).join(' ') : null;
}

/**
 * The reply to a question from the passages retrieval found, or null when none answers it
 * (nothing at or above ANSWER_THRESHOLD): then the caller says it does not know.
 */
export function composeAnswer(question: string, passages: Passage[]): Answer | null {
  // Read as retrieval read it ("satuday hrs": Saturday's row of the hours, not the week's).
  const q = analyzeQuestion(passages.find((p) => p.asked)?.asked ?? question);
  if (!q.terms.length) return null;
  // The places, products… the whole message names, for a part that names none itself ("where's the eastfield showroom and
  // is the parking free": the parking row's Eastfield cell).
  const named = stems((passages.find((p) => p.named)?.named ?? []).join(' '));
  const all = ranked(q, passages);
  const best = all[0];
  if (!best) return null;
  let text = sentenceOf(q, best, named);
  // A second sentence only when it answers a part of the question the first leaves out.
  // A word the first already meets is no part left out: as itself, derived, under the first's own heading ("What is
  // included in the savings plan?": "Two exams and two cleanings a year" under "Savings plan"), or by a synonym precise
  // enough to say it ("schedule a visit": "You can book…"; not "bring" by "takes", a verb of 44 senses).
  const covered = stems(`${best.sentence} ${best.section?.split(' › ').at(-1) ?? ''}`);
  const meets = (t: QueryTerm) => covered.has(t.stem) || [...t.derived].some((d) => covered.has(d))
    || t.synonymWords.some((w) => covered.has(stem(w)) && senseCount(w) < VAGUE_VERB);
  // Nor one that leaves out a name the first holds ("Is Guardian insurance accepted?": "We are in network with … Guardian.",
  // not "We do not accept BadgerCare Plus…" besides).
  const names = q.terms.filter((t) => t.proper && covered.has(t.stem));
  const second = all.slice(1).find((r) => r.url === best.url && r.score >= Math.max(ANSWER_THRESHOLD, 0.8 * best.score)
    && names.every((t) => stems(r.sentence).has(t.stem))
    && q.terms.some((t) => !t.typeWord && !t.proper && !meets(t) && stems(r.sentence).has(t.stem)));
  // "How can I reach you?": a number and an address, when the first gives only one of them.
  // The general one ("Call either café at …"), not a line labelled for a purpose not asked about ("Catering: …").
  const others = !second && q.want === 'contact' ? all.slice(1).filter((r) => r.url === best.url && r.score >= Math.max(ANSWER_THRESHOLD, 0.8 * best.score)
    && (['phone', 'email'] as const).some((kind) => holdsType(r.sentence, kind) && !holdsType(best.sentence, kind))) : [];
  const other = others.find((r) => !LABELLED.test(r.sentence)) ?? others[0];
  if (second ?? other) text = `${text} ${sentenceOf(q, (second ?? other)!, named)}`;
  // "pedicure prices?", "what are the fees": the word for the kind of answer in the plural asks for each row of the table
  // that answers as well as the first, not the first alone (hours have their own reading, `weekOf`).
  const severalAsked = q.want !== 'time' && q.terms.some((t) => t.typeWord && t.word !== t.stem && /[^s]s$/.test(t.word));
  const rows = severalAsked && !second && !other && TABLE_ROW.test(best.sentence.trim())
    ? all.filter((r) => r !== best && r.url === best.url && r.section === best.section && TABLE_ROW.test(r.sentence.trim())
      && r.score >= Math.max(ANSWER_THRESHOLD, SEVERAL_ROWS * best.score)).slice(0, MORE_ROWS) : [];
  if (rows.length) text = [text, ...rows.map((r) => sentenceOf(q, r, named))].join(' ');
  // An FAQ entry whose question is what was asked: its answer as the site wrote it, from its start (its own yes or no,
  // then what follows), not one sentence of it ("How does the loyalty card work?": the card, the stamps, the reward).
  const faq = entryAnswer(q, best);
  if (faq && !second && !other) text = faq;
  // "A shop in Boston?": every address the page gives for the business's premises, each under its name, not the first.
  const premises = best.missing.length > 0 && asksForPremises(q);
  if (premises) text = addressesOf(all, best) ?? text;
  // "What are your hours?": naming no day, the week's rows of the hours table, not the first of them.
  // "What are your weekend hours?": those of its days.
  else if (q.want === 'time') {
    const days = daysAsked(q.text);
    if (days && days.length !== 1) text = weekOf(q, all, best, days, named) ?? text;
  }
  // A name the site lacks ("a gym in Seattle?"): say so, then what it does say. One it names for other things
  // ("a party at Eastside?" where parties are at Riverside only): what it says, without a "Yes" it does not give; but
  // premises it names for other things ("a shop in Boston?", where the founder once worked) are premises it does not have.
  // A sentence's own yes or no answers its FAQ question, not one about a name the site lacks.
  if (best.missing.length) text = withoutYesNo(text);
  if (best.absent.length) text = `Our site doesn't mention ${namesOf(q, best.absent).join(' or ')}. ${text}`;
  else if (premises) text = `Our site doesn't mention ${premisesIn(q, best.missing)}. ${text}`;
  // A name the site mentions, but not with what is asked ("Does the West office have parking?"): what it says, under the
  // name of what it is about when its heading gives one the sentence does not ("Downtown: Park in the Capitol Square ramp…").
  else if (best.missing.length) return { text: `${namedHeading(best, text)}${text}`, urls: [best.url] };
  else if (q.yesNo) {
    // A table's row says yes or no by its cells ("Manicures — Harbor Point: —"): a "No" shows the whole row, where else it is.
    const row = TABLE_ROW.test(best.sentence.trim()) ? rowSays(cellsAsked(q, best.sentence.trim(), named)) : null;
    text = row === 'no' ? `No. ${ended(best.sentence.trim())}` : row === 'yes' ? `Yes. ${text}` : yesOrNo(q, text, best.score, named);
    // A post tells what happened ("Our $79 special ran from March 1 through April 30, and it's now closed"): holding the
    // words asked is no "Yes" from it.
    if (isPostPage(best.url) && /^Yes\b/.test(text)) text = withoutYesNo(text);
    // "No" is seldom all a business says: what it does instead follows ("Harbor doesn't have its own parking lot. There is
    // metered street parking along Dock Street…", "We don't bill insurers directly. We fill in their claim forms…").
    if (row === null && !second && !other && !faq && /^No\b/.test(text)) text = withWhatFollows(q, text, best);
  }
  // "Where do I park at Riverside?": "There is no customer parking lot at Riverside" is not all the site says when the next
  // sentence gives what to do instead ("Instead, pull into one of our loading bays…"). Only a sentence that refers back:
  // a question that is no yes/no asks for something, and a denial's neighbour is otherwise seldom about it.
  else if (!second && !other && !faq && !premises && !TABLE_ROW.test(best.sentence.trim()) && negatedClauses(best.sentence).length) {
    text = withWhatFollows(q, text, best, true);
  }
  return { text: inLanguageOf(question, text), urls: [best.url] };
}

/** A sentence that refers back to the one before it ("For these we refer you…", "Instead, …"). */
const REFERS_BACK = /^(instead|rather|but|however|for (these|those|this|that|them)|these|those|this|that|they|them|there you|you can|you may|we can|we('ll| will) (gladly|happily)?\s*(refer|recommend|suggest|give|point)|à la place|plutôt|mais|en revanche|par contre|pour (cela|ça|ceux|celles)|vous pouvez|nous pouvons)\b/i;
/** The most a "No" and what follows it may hold. */
const NO_AND_NEXT_CHARS = 320;

/**
 * `text` (a "No" on `best`) and the sentence after `best` in its passage, when there is one that states (not a question,
 * a table's row or a customer's quoted word) and both fit NO_AND_NEXT_CHARS; with `referringOnly`, only one that refers
 * back to it.
 */
function withWhatFollows(q: Question, text: string, best: RankedSentence, referringOnly = false): string {
  const sentences = splitSentences(best.context);
  const at = sentences.findIndex((x) => x.trim() === best.sentence.trim());
  const next = at >= 0 ? sentences[at + 1]?.replace(/\s+/g, ' ').trim() : undefined;
  if (!next || /\?\s*$/.test(next) || TABLE_ROW.test(next) || /^\s*["“]/.test(next) || next.length < 20) return text;
  if (referringOnly) return REFERS_BACK.test(next) && `${ended(text.trim())} ${ended(next)}`.length <= NO_AND_NEXT_CHARS ? `${ended(text.trim())} ${ended(next)}` : text;
  // On the same thing: it refers back to the "No" ("For these we refer you…", "Instead, …"), or shares a word with the
  // question or the "No" itself; not the next item of a list that only happens to follow ("Tape-in extensions are…").
  const own = stems(next);
  const precise = (word: string) => senseCount(word) < VAGUE_VERB;
  const shared = [...q.terms.flatMap((t) => (t.typeWord || t.senses >= VAGUE_VERB ? [] : [t.stem, ...t.derived])),
    ...words(best.sentence).filter((w) => !STOPWORDS.has(w) && precise(w)).map(stem)].some((st) => own.has(st));
  if (!shared && !REFERS_BACK.test(next)) return text;
  const joined = `${ended(text.trim())} ${ended(next)}`;
  return joined.length <= NO_AND_NEXT_CHARS ? joined : text;
}

/** Sentences and characters of an FAQ answer given whole. */
const ENTRY_SENTENCES = 3;
const ENTRY_CHARS = 420;

/**
 * The answer of the FAQ entry `best` stands in, when the entry's question holds half the words the visitor's question is
 * about or more (the entry is on what was asked) and its answer has more than the one sentence: its sentences in the
 * site's order from its start, ENTRY_SENTENCES (or up to `best`, when it is the next) within ENTRY_CHARS; null otherwise.
 */
function entryAnswer(q: Question, best: RankedSentence): string | null {
  const entry = best.entry;
  if (!entry || entry.answer.length < 2) return null;
  const asked = stems(entry.question);
  const about = q.terms.filter((t) => !t.typeWord && (t.proper || t.senses < VAGUE_VERB) && !t.incidental);
  // Half of what the question is about, at least, is in the entry's question: the entry is on it, not beside it.
  const held = about.filter((t) => asked.has(t.stem) || [...t.derived, ...t.alternatives].some((a) => asked.has(a))).length;
  if (!held || held * 2 < about.length) return null;
  // From the entry's start, which a question marks surely; its end may be lost (a collapsed question the page hides).
  const at = entry.answer.indexOf(best.sentence);
  if (at < 0 || at > ENTRY_SENTENCES) return null;
  const out = entry.answer.slice(0, Math.max(ENTRY_SENTENCES, at + 1)).map((x) => ended(x.replace(/\s+/g, ' ').trim()));
  while (out.length > at + 1 && out.join(' ').length > ENTRY_CHARS) out.pop();
  const text = out.join(' ');
  return q.yesNo ? text : withoutYesNo(text);
}

const ended = (text: string) => (/[.!?…]$/.test(text) ? text : `${text}.`);

/** A cell that says "not here", "not offered" or "not included" by a mark; one that says "yes" by a mark. */
const NO_CELL = /^(—|–|-|✗|✘|×|x|no|non|n\/a|none|aucun|not (offered|available|included)|non (disponible|proposé))$/i;
const YES_CELL = /^(✓|✔|☑|yes|oui|included|inclus|available|disponible)$/i;

/** What a table row's cells (as the question narrowed them) say to a yes/no question: all "no", all "yes", or neither. */
function rowSays(row: string): 'yes' | 'no' | null {
  const m = /^([^—]{1,80}) — (.+?)\.?$/.exec(row);
  if (!m) return null;
  const values = m[2]!.split(/;\s+/).map((cell) => cell.replace(/^[^:]{1,40}:\s*/, '').trim());
  if (values.every((v) => NO_CELL.test(v))) return 'no';
  return values.every((v) => YES_CELL.test(v)) ? 'yes' : null;
}

/** The reply's own words in the question's language: "Oui, …", "Non, …", "Notre site ne mentionne pas …" to a French question. */
function inLanguageOf(question: string, text: string): string {
  if (languageOfText(question) !== 'fr') return text;
  return text.replace(/^Yes([,.]) /, 'Oui$1 ').replace(/^No([,.]) /, 'Non$1 ')
    .replace(/^Our site doesn't mention (.+?)\. /, 'Notre site ne mentionne pas $1. ');
}
