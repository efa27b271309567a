import { createRequire } from 'node:module';
import { isFirstName, isLexiconWord, nlp } from './nlp.ts';
import { languageOfText } from './phrases.ts';
import { fold, remembered, STOPWORDS } from './text.ts';
import { antonyms, derivations, editsOf, irregularBase, glossWords, isDemonym, hypernyms, isBaseVerb, isChildNoun, isInstanceName, isKnownWord, isNoun, nearestKnownWord, isPersonNoun, isPremisesNoun, isYoungNoun, nounClasses, phraseSynonyms, senseCount, synonyms, verbGlossWords } from './wordnet.ts';

/**
 * Reading a question and the site's sentences the same way: words stemmed with Porter2 (the
 * stemmer of PostgreSQL's `english` configuration), synonyms from WordNet, and the kind of
 * answer the question wants (a price, a time, a person...), recognised in sentences by their
 * patterns and, for people, by compromise's named-entity tagger. Pure: no I/O but the WordNet
 * dictionary files.
 */

export type AnswerType = 'price' | 'time' | 'day' | 'when' | 'address' | 'person' | 'duration' | 'frequency' | 'date' | 'method' | 'payment' | 'phone' | 'email' | 'contact' | 'number' | 'requirement' | 'measure';

export interface QueryTerm {
  /** The word as the visitor wrote it (lower case): what PostgreSQL stems on its side. */
  word: string;
  stem: string;
  /** Stems of its synonyms (WordNet, and the few domain ones below). */
  alternatives: Set<string>;
  /** Stems of the words WordNet derives from it or it from them ("founded" → "founder", "rent" → "rental"): the same idea, nearly the word itself. */
  derived: Set<string>;
  /** Those synonyms as words, for the database's own stemming. */
  synonymWords: string[];
  /** Written with a capital inside the question: a name ("Denver", "Riverside"). */
  proper: boolean;
  /** A word that only says which kind of answer is wanted ("cost", "phone"): met by a sentence holding that kind. */
  typeWord: boolean;
  /** How many senses WordNet gives the word: a vague verb ("use", "take", "start") tells less of what is asked. */
  senses: number;
  /**
   * A word that says where or how rather than what is asked: the business's premises ("Who started the
   * bakery?", which its own pages seldom call so: WordNet files it under workplaces, facilities,
   * buildings...) or an adverb ("Where exactly is…?").
   */
  incidental: boolean;
  /** A word for the business's premises or one of its branches ("shop", "branch", "store", "bakery"). */
  premises: boolean;
  /**
   * Stems of the classes WordNet files this noun under, two steps up ("beer" → brew, alcohol): a sentence denying the
   * class denies it ("We do not serve alcohol"), where one that gives the class says nothing of this member.
   */
  classes?: Set<string>;
  /** Those classes as words, for the database's own stemming. */
  classWords?: string[];
  /** An adjective's opposites ("wrong" → right): a sentence that denies one says the adjective ("if something isn't right"). */
  antonyms?: Set<string>;
  /** A word for young people or someone's child ("babies", "teenagers", "kids"): met by what is said for the young. */
  young?: boolean;
  /** WordNet kinds whose members meet this verb's object ("eat" → anything filed under food: "the baguette"). */
  kinds?: Set<string>;
  /**
   * What the site itself calls the phrase this word is in, each the stems of a heading (`withSiteAliases` in rank.ts: "first
   * visit" → "new patient"): set by the ranking, from the passages it reads.
   */
  aliases?: Set<string>[];
  /** The names the site defines the phrase this word is in as ("Bordetella — the "kennel cough" vaccine"), each by its stems. */
  definedAs?: Set<string>[];
  /** A number, written as money in the question ("a $20 fee") or not ("for 500 people"): met by a number of its kind. */
  money?: boolean;
  /** The stem of the name this word follows ("gym" in "the Riverside gym"): the word says what kind of thing the name is, so the name found finds it too. */
  namedBy?: string;
}

export interface Question {
  text: string;
  terms: QueryTerm[];
  want: AnswerType | null;
  /** "Do you...?", "Is there...?", "Can I...?": answered "Yes, …" or "No, …" when the text says so. */
  yesNo: boolean;
  /** Whether it asks about a child ("for my son", "my 8-year-old"): what a site says for children answers it (`namesYoung`). */
  forChild: boolean;
  /** "How far ahead…?", "How much notice…?": a duration before something, met by a sentence that says so ("two weeks in advance"). */
  lead: boolean;
  /**
   * "Where can I park?", "Where do I sign the waiver?": where to do something, which a place on the premises answers as
   * surely as a street address ("in the lot behind the building"); not where the business is ("Where are you located?").
   */
  whereTo: boolean;
}

/**
 * Business words WordNet does not relate (its senses of "branch" are of trees and rivers): a
 * few groups of words that name the same thing on a business's website.
 */
/** Words a business's pages use for its premises and branches: what a question's "shop" or "bakery" may be called there. */
export const BRANCH = ['branch', 'location', 'store', 'office', 'outlet', 'clinic'];
const DOMAIN_SYNONYMS = [
  BRANCH,
  ['appointment', 'visit', 'booking', 'reservation'],
  ['class', 'session', 'lesson'],
  ['book', 'schedule', 'reserve'],
  ['phone', 'call', 'ring', 'cell', 'mobile', 'telephone'],
  ['email', 'e-mail', 'mail', 'write'],
  ['wifi', 'wi-fi', 'internet'],
  ['kid', 'child', 'children', 'youth'],
  ['start', 'found', 'establish'],
  ['hold', 'freeze', 'pause'],
  ['cv', 'resume'],
  ['refund', 'reimburse', 'repay'],
  ['discount', 'off', 'reduction'],
  // What a visitor buys, the business sells ("Where can I buy a starter?": "Do you sell your starter?").
  ['buy', 'purchase', 'sell'],
  // What a visitor picks up, the business has collected ("Orders that are not collected by closing time…").
  ['pickup', 'collect'],
  // "Do I have to book ahead?": what a site asks for "in advance" or "beforehand".
  ['ahead', 'advance', 'beforehand'],
  // "Can I bring my dog?": a site's rule is often for pets ("Pets are welcome on the patio"); one that denies them, below.
  ['pet', 'dog', 'cat', 'puppy'],
];

/**
 * Classes a business's rules name that WordNet does not file these nouns under: "No pets inside" denies a dog (its
 * classes are canine and carnivore).
 */
const DOMAIN_CLASSES: Record<string, string[]> = { dog: ['pet'], cat: ['pet'], puppi: ['pet', 'dog'], kitten: ['pet', 'cat'] };

/** Business phrases read as the one word the site is likelier to use ("money back" → "refund"). */
const DOMAIN_PHRASES: [RegExp, string][] = [
  // "Can your guys do…", "do you folks…": the business addressed, as "you" and "your" are.
  [/\b(you|your|ya|u|ur)\s+(guys|folks)\b/gi, '$1'],
  [/\b(get|have|want) (my|our|the) money back\b|\bmoney back\b/gi, 'refund'],
  // "What would a latte set me back?": what it costs.
  [/\bset(s|ting)? (me|us|you|him|her|them) back\b/gi, 'cost'],
  [/\bsign(ing)?[- ]?up\b/gi, 'join'],
  // "What's the best way to reach someone about catering?" asks how ("The best croissant I have had…" says nothing of it).
  [/\bwhat(?:'s|s| is| would be) the (?:best|easiest|quickest|fastest) way (?:for me )?to\b/gi, 'how do I'],
  [/\b(?:get|be|stay) in touch(?: with)?\b/gi, 'contact'],
  // "Who owns the bakery?": a small business's site names whoever founded it ("Nadia Brooks opened Hearth & Crumb in
  // 2014"), seldom an owner; "own" is otherwise the visitor's ("your own cup").
  [/\bwho (?:owns|owned|is the owner of|are the owners of)\b/gi, 'who founded'],
  [/\bwho (is|are) the owners?\b/gi, 'who founded the business'],
  // "Can I be seen today?", "Can you fit me in today?": asked on the day, for a visit the same day, as a site says it ("we
  // will see you the same day"). Not "Are you open today?": that asks the day's hours.
  [/\b(seen|see (?:me|us|him|her|them|my \w+)|fit (?:me|us|him|her|them) in|get (?:me|us|him|her|them) in) today\b/gi, '$1 the same day'],
  // "What happens if I don't pick it up?" asks what follows, as "What if…?" does: "happens" is no word of the answer
  // ("All our baking happens in one kitchen…").
  [/\bwhat (happens|will happen|would happen|happened) (if|when)\b/gi, 'what $2'],
  // "the ones I end up not using": what happens in the end is said of the thing ("unused boxes"), not of an end.
  [/\b(end|ends|ended|ending|wind|winds|wound) up\b/gi, ''],
  // "If I forget to pick up my order": it is not picked up ("Orders that are not collected…").
  [/\b(forget|forgot|forgotten|forgets) to\b/gi, 'do not'],
  // What a cake or a tray feeds, a menu says it serves ("10-inch round — Serves: 25 to 30"). Not as a synonym group:
  // the kinds of act "serve" is (cater, provide) would find any catering sentence.
  [/\bfeed(s?)\b/gi, 'serve$1'],
  // "A cake big enough for 30 guests", "a room large enough to seat 40": a site says the capacity, as a number ("Serves:
  // 25 to 30", "Seats 40 inside"), never "big enough".
  [/\b(big|large|roomy) enough (for|to)\b/gi, '$2'],
  // "How big a group can you cater for?", "the largest party you take": a number of people ("for 10 to 200 guests").
  [/\bhow (?:big|large) (?:a|an|of an?) (?:group|party|crowd|event)\b/gi, 'how many people'],
  [/\b(?:the )?(?:biggest|largest) (?:group|party|crowd|event)\b/gi, 'the maximum number of people'],
  // "A glass of wine", "a slice of cake": the thing is asked about, not its measure.
  [/\b(a|an|one|two|three|some) (glass|glasses|cups?|mugs?|bottles?|slices?|pieces?|bowls?|pints?|plates?|portions?|servings?) of\b/gi, ''],
  // "Have catering brought to our office", "bring it to my house": delivered there ("Delivery within 10 miles…").
  [/\b(brought|bring|bringing|sent|send|taken) ((?:it|them|lunch|food|catering|the order|my order|our order) )?(to|over to) (my|our|your|the|an?) (office|home|house|door|doorstep|event|venue|workplace|party|wedding)\b/gi, 'delivered to $4 $5'],
  // "Do you drop off catering orders?", "Can you drop it off?": the business delivers ("Delivery within 10 miles…"), not a
  // discount ("25 cents off").
  [/\b(you|they|we) drop(s|ped|ping)? ((?:it|them|orders?|catering|lunch|food|the \w+) )?off\b/gi, '$1 deliver $3'],
  // "A rewards program", "a points scheme", "a loyalty club": what a site calls its loyalty card ("Loyalty card: ask for a
  // stamp card…"). Not a punch card, which is a pass.
  [/\b(rewards?|loyalty|points|stamp) (programs?|programmes?|schemes?|clubs?|cards?)\b/gi, 'loyalty card'],
  // "Where can I leave my car?": where to park ("Free parking behind the building").
  [/\b(leave|put|keep|stash) (my|our|the|a) (car|vehicle|truck|van|motorbike|motorcycle)\b/gi, 'park'],
  // "Are you guys open?", "do y'all deliver?": the business, as "you".
  [/\byou (guys|folks|all)\b|\by'?all\b/gi, 'you'],
  // "Can I cancel anytime?": "at any time", as a site writes it ("cancel … at any time with 30 days' notice").
  [/\banytime\b/gi, 'at any time'],
  // "Are your pastries made in house?": "in-house" is on the premises ("Everything is baked on site").
  [/\bin[- ]house\b/gi, 'on site'],
  // "Who is in charge of the café?" asks for a person, not a price ("charge"), and names nothing else: "Priya runs the café".
  [/\b(in|takes?|took|taking) charge of\b/gi, ''],
  // "…, is that a problem?", "is that OK?": asks whether what was said is allowed, and names nothing of its own.
  [/\b(is|would|will) (that|this|it) (be )?(a problem|an issue|ok|okay|alright|all right|fine)\b/gi, ''],
  // "When can I pick up my order?", "…pick it up": a site's "Pickup" page ("Pre-orders are ready from 8 am").
  // The particle after its object ("pick her up", "pick my dog up") is the same verb.
  [/\bpick(s|ing|ed)?\s+(?:(?:it|them|her|him|me|us|(?:my|our|the|your) \w+)\s+)?up\b/gi, 'pickup'],
  // "I'm not a member", "we are not residents": who says so is a non-member, as a site puts it ("Non-members pay $15").
  [/\b(i'?m|i am|we'?re|we are|they'?re|they are|he'?s|she'?s|(?:he|she) is) not (?:an? )?([a-z]+)\b/gi, 'non-$2'],
  // "the smallest order you take", "the largest group": a site states its limits as a minimum or maximum.
  [/\b(smallest|lowest|fewest)\b/gi, 'minimum'],
  [/\b(largest|biggest|highest)\b/gi, 'maximum'],
  // "What's the after-hours number?": outside the hours a site gives ("Outside office hours, our on-call dentist answers…").
  [/\bafter[- ]hours\b/gi, 'outside hours'],
  // "What kind of fillings do you use?" asks which fillings: "kind" is no word of it ("form" is its synonym).
  [/\b(what|which)\s+(kinds?|types?|sorts?)\s+of\b/gi, '$1'],
  // "the west side clinic", "your east end store": a site names such a branch by its direction alone ("West").
  [/\b(north|south|east|west)[- ](side|end)\b/gi, '$1'],
];

/** The words that say the kind of answer wanted, English and French (folded): met by that kind, not by themselves. */
const TYPE_WORDS: Record<AnswerType, string[]> = {
  price: ['price', 'cost', 'charge', 'fee', 'pay', 'expensive', 'cheap', 'pricey', 'pricy', 'rate', 'much', 'discount', 'extra', 'prix', 'tarif', 'tarifs', 'coute', 'cout', 'payant', 'frais', 'cb'],
  time: ['time', 'open', 'close', 'hour', 'late', 'early', 'latest', 'earliest', 'morning', 'afternoon', 'evening', 'night', 'tonight', 'heure', 'heures', 'horaire', 'horaires', 'ouvert', 'ouverte', 'ferme', 'fermee', 'ouvre', 'ouvrez', 'fermez', 'matin', 'soir', 'midi', 'aprem'],
  day: ['day', 'week', 'jour', 'jours', 'semaine'],
  when: ['time', 'day', 'date', 'jour', 'moment'],
  address: ['address', 'located', 'location', 'find', 'city', 'town', 'neighborhood', 'neighbourhood', 'adresse', 'situe', 'situee', 'trouve', 'ville', 'quartier'],
  person: [],
  duration: ['long', 'last', 'take', 'fast', 'quick', 'soon', 'ahead', 'notice', 'warning', 'far', 'advance', 'temps', 'longtemps', 'delai', 'delais', 'duree', 'dure', 'avance'],
  frequency: ['often', 'frequently', 'times', 'souvent', 'fois'],
  date: ['year', 'date', 'annee', 'an'],
  method: [],
  payment: ['payment', 'pay', 'accept', 'take', 'method', 'form', 'option', 'means', 'paiement', 'payer', 'regler', 'moyen', 'moyens', 'accepte', 'acceptez'],
  phone: ['phone', 'number', 'call', 'ring', 'cell', 'mobile', 'telephone', 'reach', 'tel', 'numero', 'appeler', 'joindre'],
  email: ['email', 'mail', 'address', 'write', 'send', 'courriel', 'adresse', 'ecrire'],
  contact: ['contact', 'reach', 'touch', 'talk', 'speak', 'ask', 'contacter', 'joindre', 'parler'],
  number: ['many', 'big', 'old', 'age', 'tall', 'high', 'wide', 'deep', 'heavy', 'far'],
  measure: ['tall', 'high', 'wide', 'deep', 'thick', 'heavy', 'size', 'dimension', 'dimensions', 'height', 'width', 'depth', 'diameter', 'weight', 'measurements', 'taille', 'diametre', 'hauteur', 'largeur', 'profondeur', 'poids'],
  requirement: ['need', 'must', 'require', 'required', 'necessary', 'mandatory', 'compulsory', 'gotta', 'faut', 'obligatoire', 'necessaire', 'besoin'],
};

/** The kind of answer a question wants, from its wording (folded); null for none in particular. */
export function answerType(question: string): AnswerType | null {
  const q = fold(question);
  const french = frenchAnswerType(q);
  if (french) return french;
  // "How early should I arrive?": how long before ("arrive 15 minutes early"), not a time of day.
  if (ARRIVE_EARLY.test(q) || /\bhow (long|fast|quickly|soon|far (ahead|out|in advance))\b|\bhow much (notice|warning|time|advance|lead time)\b|\bhow many (minutes|hours|days|weeks|months|years)\b/.test(q)) return 'duration';
  // "How often should I get a cleaning?": "every six months", "twice a year", "weekly".
  if (/\bhow (often|frequently)\b|\bhow many times (a|an|per|each|every)\b/.test(q)) return 'frequency';
  // "How do I reach catering?", "Who do I contact about an order?": a phone number or an email address, whichever the site gives.
  // "Who should I talk to about…?": a person, or better a way to reach one.
  if (/\bhow (do|can|could|should) (i|we) (reach|contact|get in touch|get hold of)\b|\bwhere (do|can|could|should) (i|we) (send|direct|take) (questions?|complaints?|feedback|queries)\b|\bwho (do|should|can|could) (i|we) (contact|talk to|speak to|speak with|talk with|ask)\b/.test(q)) return 'contact';
  // "What forms of payment do you accept?", "How can I pay?": the means a site takes ("We accept cash, debit and all major
  // credit cards"), not a price ("Non-members pay $15").
  if (PAYMENT_ASKED.test(q)) return 'payment';
  // "How do I book an appointment?", "How can we order?": a way to do it ("Book online…", "by phone", "you can…").
  if (/^\W*how (do|can|should|could|would|might) (i|we)\b/.test(q) && !/\b(get|go) (to|there|here)\b|\bfind (you|the)\b/.test(q)) return 'method';
  // Not "Who's in charge at…?": a person.
  if (/\bhow much\b|\b(cost|price|(?<!\bin )charge|fee|discount)s?\b|\bhow (expensive|pricey|pricy|cheap)\b|\bgoing rate\b/.test(q)) return 'price';
  // "Do I need an appointment?", "Do I have to book ahead?", "Is a deposit required?": whether it is needed, which a
  // sentence says by saying it is required, recommended, optional or not needed ("No appointment needed").
  if (REQUIREMENT_ASKED.test(q)) return 'requirement';
  // "Who should I call after hours?", "What's the number for emergencies?": a number to call.
  if (/\b(phone|telephone|cell|mobile)\b|\b(ring|call) (you|us)\b|\bnumber to (ring|call)\b|\bwho (should|do|can|could) (i|we) (call|ring|phone|text)\b|\bwhat'?s? (is )?(the|your) number\b|^\W*(the |your )?numbers? (for|of) (the|your)\b/.test(q)) return 'phone';
  if (/\be-?mail(\s+address)?\b(?!s)|\bwrite to\b|\bsend (my|our|a|the)\b/.test(q)) return 'email';
  // "who" asks for a person as the question's word, not in "…for people who cannot eat gluten?".
  if (/^\W*who\b|(^|[,;]|\band|\bbut|\bso)\s+who\b/.test(q)) return 'person';
  // "Which of your doctors…?", "What dentist…?": a noun WordNet files under people.
  const asked = /\b(?:which|what)\s+(?:of\s+(?:your|the|our)\s+)?([a-z]+)/.exec(q)?.[1];
  if (asked && isPersonNoun(asked)) return 'person';
  // "What city are you in?", "Which part of town is the café in?": where, as a town or a street.
  if (/\bwhere\b|\baddress\b|\blocated\b|\bhow (do|can|should) (i|we) (get|go) to\b|\b(what|which) (city|town|state|neighbou?rhood|area|part of (the )?(city|town))\b/.test(q)) return 'address';
  if (/\b(which|what) days?\b/.test(q)) return 'day';
  // "What's the latest I can order?": a time to be in by.
  if (/\bwhat time\b|\bhow (late|early)\b|\bthe (latest|earliest)\b|\b(opening|closing) (hours|times?)\b|\bat what times?\b/.test(q)) return 'time';
  // "When are you open?", "When does the café close?": the hours.
  if (/^\W*when (are|is|do|does)\b.*\b(open|close|closed)\b/.test(q)) return 'time';
  // "What are your weekday hours?", "your hours on Sunday?"
  if (/\b(your|the|our|office|business|store|shop|week(day|end)|holiday|(mon|tues|wednes|thurs|fri|satur|sun)day)\s+hours\b/.test(q)) return 'time';
  // "when" asks for a time only as the question's word, not in "...when I take a class?".
  // A weekday named ("on a Saturday?", "open Sundays?"): the hours of that day.
  // Not "Do you deliver on Sundays?": delivery, not the hours, is asked about.
  if (WEEKDAY_NAME.test(q) && !/\b(what|which|how)\b/.test(q) && /\b(open|close|closed|hours?|come( in| by)?|visit|stop by|there)\b/.test(q)) return 'time';
  // "Are you open late?", "Can I climb at night?", "Can I come in before work?": a part of the day asks for the hours.
  if (/\b(open|come|visit|climb|train|swim|work out|stop by|drop in|drop by|pop in)\b.{0,25}\b(late|early|at night|tonight|in the (morning|evening|afternoon)|after work|before work|at lunch(time)?)\b/.test(q)) return 'time';
  // "When did the Back Cove café open?", "What year was it founded?": what happened once has a date, not opening hours.
  if (/^\W*when (did|was|were|had)\b|\bwhat year\b|\bin which year\b|\bsince when\b/.test(q)) return 'date';
  if (/^\W*when\b|\bwhen (do|does|did|is|are|was|were|will|can|could|should|would)\b/.test(q)) return 'when';
  // "What age do you stop seeing children?", "How tall are the walls?": a number, of years or of a measure.
  // "How far do you deliver?": "within 10 miles".
  // "How tall are the doors?", "What are the van's inside dimensions?": a measure, a number with its unit ("7 ft", "10x10").
  if (MEASURE_ASKED.test(q)) return 'measure';
  if (/\bhow (many|big|old|tall|high|wide|deep|heavy)\b|\b(what|which) ages?\b|\bhow far\b/.test(q)) return 'number';
  return null;
}

/**
 * The kind of answer a French question asks for, by its interrogative forms (folded: "à quelle heure" is "a quelle
 * heure"): how long, how much, which number, who, what time, where, which days, when. Null for none.
 */
function frenchAnswerType(q: string): AnswerType | null {
  if (/\b(combien|cb) de (temps|jours|semaines|mois|heures|minutes)\b|\bdelai\b|\bduree\b|\bca (dure|prend) combien\b|\bcombien de temps\b|\bs'y prendre\b/.test(q)) return 'duration';
  if (/\b(moyens?|modes?) de paiement\b|\b(vous )?accept\w* (les |la )?(cartes?|cheques?|especes|tickets?)\b|\bpayer (par|en|avec)\b/.test(q)) return 'payment';
  if (/\b(combien|cb)\b(?! de (personnes|places|gens|fois))|\bprix\b|\btarifs?\b|\bcoute\w*\b|\bcout\b|\bpayant\b|\bfrais\b|\bca revient a\b/.test(q)) return 'price';
  if (REQUIREMENT_ASKED_FR.test(q)) return 'requirement';
  if (/\bquel(?:le)?s? (?:taille|dimensions?|diametre|hauteur|largeur|profondeur|poids)\b|\b(?:diametre|dimensions)\b/.test(q)) return 'measure';
  if (/\b(telephone|tel|numero|num)\b/.test(q)) return 'phone';
  if (/\b(courriel|adresse (e-?)?mail|mail)\b/.test(q)) return 'email';
  // "c qui le responsable", "c'est qui": "c" is how a chat writes "c'est".
  if (/^\W*qui\b|\bc'?(est)? qui\b|\bqui (est|sont|s'occupe|gere|dirige)\b|\bpar qui\b/.test(q)) return 'person';
  if (/\b(a )?(quelle|quel|kel|kelle) heure\b|\bhoraires?\b|\bheures? d'?ouverture\b|\bouvert\w*\b.*\b(matin|soir|aprem|apres-midi|midi|dimanche|samedi|lundi|mardi|mercredi|jeudi|vendredi)\b/.test(q)) return 'time';
  // "vous ouvrez quand", "ça ferme quand le samedi": the hours, asked with "quand" anywhere, as French speech puts it.
  if (/\b(ouvr(e|es|ez|ent|ons|ir)?|ouverte?s?|ferm(e|es|ez|ent|ons|er|ee|ees)?)\b.*\b(quand|qd)\b|\b(quand|qd)\b.*\b(ouvr(e|es|ez|ent|ons|ir)?|ouverte?s?|ferm(e|es|ez|ent|ons|er|ee|ees)?)\b/.test(q)) return 'time';
  if (/\badresse\b|\bse trouve\b|\bsitue\w*\b|\bou (est|se trouve|etes)\b/.test(q)) return 'address';
  if (/\bquels? jours?\b/.test(q)) return 'day';
  if (/\ben quelle annee\b|\bdepuis quand\b|\bquelle annee\b/.test(q)) return 'date';
  // "quand" first, or last ("ils expirent quand", "c quand"), as French speech asks.
  if (/^\W*(quand|qd)\b|\b(quand|qd)\W*$|\bc'?(est)? (quand|qd)\b/.test(q)) return 'when';
  return null;
}

/** A question about the means of payment, not about a price or what to pay for ("How do I pay for parking?"). */
const PAYMENT_ASKED = /\b(forms?|methods?|means|ways?|kinds?|types?|modes?) of payments?\b|\bpayments? (methods?|options?|types?|forms?)\b|\b(what|which) (payments?|(credit |debit )?cards)\b|\bhow (do|can|could|should|may) (i|we) pay\b(?! (for|you|the|a|an|my|our|in advance|ahead|online|by phone))|\bpay (by|with|using|in) (an? )?(card|credit|debit|cash|check|cheque|apple|google|paypal|venmo)\b|\b(take|accept)s? (apple pay|google pay|paypal|venmo|amex|american express|visa|mastercard|discover|(credit |debit )?cards?|cash|checks|cheques)\b/;
/** Words for the means of payment, for the database to fetch the passages that name them ("We accept cash…"). */
export const PAYMENT_WORDS = ['cash', 'card', 'cards', 'debit', 'credit', 'cheque', 'check', 'checks', 'paypal', 'venmo'];
/** Means of payment a sentence names ("We accept cash, debit and all major credit cards", "Apple Pay", "by cheque"). */
const PAYMENT_MEANS = /\b(cash|cheques?|(personal|bank|certified|business|travell?er'?s?) checks?|(by|with|accept|take) (a )?checks?|checks? (is|are) (not )?(accepted|welcome|taken)|checks?,? (or|and) (cash|cards?|credit|debit|money)|(cash|cards?),? (or |and )?checks?|(credit|debit|bank|major|contactless) cards?|debit|card payments?|contactless|apple pay|google pay|paypal|venmo|bank transfers?|wire transfers?)\b/i;

/** Where to do something ("where can I park", "where do I leave my bike"), not where to find or reach the business. */
const WHERE_TO = /\bwhere (can|could|do|should|may|would|must) (i|we|you|my|our|\w+) (?!(find|get|go|come|reach|visit|locate|be|see|meet)\b)[a-z]+/;
const ARRIVE_EARLY = /\bhow (early|soon|long before) (should|do|must|can|would|could) (i|we|you|they) (arrive|come|get (there|here|in)|be there|show up)\b/;
const LEAD_ASKED = /\bhow far (ahead|out|in advance)\b|\bhow much (notice|warning|advance|lead time)\b|\bhow (long|many \w+) (ahead|in advance|before(hand)?)\b|\bcombien de (temps|jours|semaines|mois|heures) (a l'|d')?(avant|avance)\b|\b(a l'|d')avance\b|\bdelai\b|\bs'y prendre\b|\bprevenir\b/;
/** A duration said as a lead before something ("two weeks in advance", "72 hours before", "30 days' notice", "up to three months ahead"). */
export const SAYS_LEAD = /\b(ahead|advance|notice|before|beforehand|prior|early|avance|avant|pr[ée]avis)\b/i;
/** A holiday, a day out of the week's run ("Christmas", "Labor Day", "on holidays"). */
export const HOLIDAY = /\b(holidays?|christmas|thanksgiving|easter|new year'?s?|memorial day|labor day|independence day|jours? f[ée]ri[ée]s?|no[ëe]l|p[âa]ques|nouvel an|toussaint|r[ée]veillon)\b/i;
/** A day out of the week's run, or one said from today ("today", "tomorrow"). */
export const OTHER_DAY = new RegExp(`${HOLIDAY.source}|\\b(today|tonight|tomorrow|aujourd'hui|demain|ce soir)\\b`, 'i');
/** A day, or days, a text names ("on Sundays", "at the weekend", "on Christmas", "today"). */
export const NAMES_DAY = new RegExp(`\\b((mon|tues|wednes|thurs|fri|satur|sun)days?|week-?(end|day)s?|(lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche)s?)\\b|${OTHER_DAY.source}`, 'i');
/** A day of the week's run ("Sunday", "on weekdays"). */
export const WEEKDAY_NAME = /\b(mon|tues|wednes|thurs|fri|satur|sun)days?\b|\bweek-?(end|day)s?\b|\b(lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche)s?\b/i;
const WEEKDAY = /\b(mon|tues|wednes|thurs|fri|satur|sun)days?\b|\bweek-?(end|day)s?\b|\bholidays?\b|\bchristmas\b|\bthanksgiving\b|\bnew year'?s\b|\bevery day\b|\bdaily\b|\b(lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche)s?\b|\bjours? f[ée]ri[ée]s?\b|\btous les jours\b|\bno[ëe]l\b/i;
const CLOCK = /\b\d{1,2}(:\d{2})?\s?(am|pm|a\.m\.|p\.m\.)|\bnoon\b|\bmidnight\b|\b\d{1,2}:\d{2}\b|\bclosed\b|\b\d{1,2}\s?h\s?(\d{2})?\b|\bferm[ée]e?s?\b/i;
const STREET = /\b\d{1,5}\s+([A-Z][\w.]*\s+){0,3}(street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|way|drive|dr|place|pl|square|sq)\b|\b[A-Z]{2}\s\d{5}\b/i;
/** A street with its number ("41 Wharf Street"), not only a state and ZIP code. */
const STREET_NUMBERED = new RegExp(STREET.source.split('|\\b[A-Z]{2}')[0]!, 'i');
/** Whether `sentence` gives a street address ("41 Wharf Street, …", "…, ME 04101"), not a town named in passing. */
export const holdsStreetAddress = (sentence: string): boolean => STREET.test(sentence);
/** A town with its state or country ("in Madison, Wisconsin", "in Portland, OR"). */
const CITY = /\b(in|at)\s+[A-Z][a-z]+(\s[A-Z][a-z]+)?,\s+[A-Z][a-z]*\b/;
/** Where something is inside or around a building ("in the lot behind the building", "next to the café"). */
const PLACE = /\b(behind|next to|opposite|across from|beside|upstairs|downstairs|inside|outside|near)\s+(the|our|a)\b|\b(on|in) the (lot|street|ground|first|second|top|basement|car park|parking)\b/i;
/** Where something is done, besides a place: online, at a desk or counter, a short walk away ("the Fore Street garage is two blocks away"). */
const WHERE_DONE = /\b(online|on (our|the) (website|site|app)|at (the|either|any) (front )?(desk|counter|reception)|(blocks?|minutes?|doors?) (away|down))\b/i;
/** Whether `sentence` says where something is done: a place (an address, "in the lot behind the building") or WHERE_DONE. */
export const holdsPlaceToDo = (sentence: string): boolean => PATTERNS.address(sentence) || WHERE_DONE.test(sentence);
// In French as well ("48 heures", "deux semaines", "12 mois"), and with an adjective between ("a full day", "two business days").
const DURATION = /\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|a|an|half an?|un|une|deux|trois|quatre|cinq|six|sept|huit|neuf|dix|douze|quinze|vingt|trente)[\s-]+((business|full|whole|working|calendar|bonnes?|petites?)\s+)?(minutes?|mins?|hours?|hrs?|days?|nights?|weeks?|months?|years?|heures?|jours?|nuits?|semaines?|mois|ans|ann[ée]es?)\b/i;
/** A duration said as how long something holds ("valid for 12 months", "valables un an", "expires after 90 days"). */
const VALIDITY = /\b(valid|good for|expires?|expiry|within|valables?|validit[ée]|expire(nt)?|dans les)\b/i;
/** A question asking for a rate ("…each day?", "…per week?"): a duration per day answers it. */
export const RATE_ASKED = /\b(a|an|per|each|every)\s+(day|night|week|month|year|session|visit)\b/i;
/** A duration said per day, week or month ("22 hours a day", "two hours per week") or as a period ("every two weeks"): a rate, not a length. */
const RATE = new RegExp(`${DURATION.source}\\s+(a|an|per|each|every)\\s+(day|night|week|month|year|session|visit)\\b|\\b(every|each)\\s+(other\\s+)?${DURATION.source}`, 'gi');
// North American ("(207) 555-0148"), international ("+33 4 78 …") and French ("04 78 12 34 56") numbers.
const PHONE = /\(?\b\d{3}\)?[\s.-]?\d{3}[\s.-]\d{4}\b|\+\d[\d\s().-]{8,}\d|\b0[1-9](?:[\s.-]?\d{2}){4}\b/;
const EMAIL = /[a-z0-9._%+-]+@[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}/i;
/** Nothing to pay ("free", "at no charge", "free of charge", "at no extra cost"). */
const FREE = /\bfree\b|\b(no|without)( extra| additional)? (charge|cost|fee)\b|\bgratuit(e|s|es)?\b|\bsans (frais|suppl[ée]ment)\b/i;
/** A price said as an amount ("$22", "75 cents", "15%"). */
const AMOUNT = /[$€£]\s?\d|\d\s?(usd|eur|dollars?|euros?|cents?|¢|€|£)(?=\W|$)|\d+\s?%/i;
/** An amount of money ("$149", "$1,150.50", "75 cents", "15%"). */
const MONEY = /[$€£]\s?\d[\d,]*(\.\d+)?|\b\d[\d,]*(\.\d+)?\s?(%|€|percent\b|dollars?\b|euros?\b|cents?\b|bucks\b|usd\b|eur\b)/gi;
export const MONTH = /\b(january|february|march|april|may|june|july|august|september|october|november|december|janvier|f[ée]vrier|mars|avril|mai|juin|juillet|ao[ûu]t|septembre|octobre|novembre|d[ée]cembre)\b/i;
/** Every phone number and every time of day of a text (PHONE, CLOCK), to take them out of it. */
const PHONES = new RegExp(PHONE.source, 'g');
const CLOCKS = new RegExp(CLOCK.source, 'gi');
const PATTERNS: Record<Exclude<AnswerType, 'person'>, (s: string) => boolean> = {
  price: (s) => AMOUNT.test(s) || FREE.test(s),
  time: (s) => CLOCK.test(s),
  day: (s) => WEEKDAY.test(s),
  // "When do I book a wedding cake tasting?": "…booked at least three months before the wedding date", a lead, says when.
  // "When does the gift card expire?": "Gift cards are valid for 12 months", a validity, says when too.
  when: (s) => CLOCK.test(s) || WEEKDAY.test(s) || MONTH.test(s) || /\b\d{4}\b/.test(s) || (DURATION.test(s) && (SAYS_LEAD.test(s) || VALIDITY.test(s))),
  address: (s) => STREET.test(s) || /\b(at|in)\s+(the\s+)?[A-Z][a-z]+/.test(s.slice(1)) || PLACE.test(s),
  duration: (s) => DURATION.test(s),
  frequency: (s) => FREQUENCY.test(s) || FREQUENCY_FR.test(s),
  method: (s) => SAYS_HOW.test(s) || isCommand(s) || /\byou can\b/i.test(s),
  payment: (s) => PAYMENT_MEANS.test(s),
  date: (s) => /\b(1[89]|20)\d{2}\b/.test(s) || (MONTH.test(s) && /\b\d{1,2}(st|nd|rd|th)?\b/.test(s)),
  phone: (s) => PHONE.test(s),
  email: (s) => EMAIL.test(s),
  contact: (s) => PHONE.test(s) || EMAIL.test(s),
  // "How many patients do you have?" is not answered by "New patient exam: $149": a count is no price.
  // Nor is a phone number or a time of day ("Catering: … (207) 555-0148" to "How many people can you cater for?").
  number: (s) => /\d/.test(s.replace(MONEY, '').replace(PHONES, '').replace(CLOCKS, '')),
  requirement: (s) => SAYS_NEED.test(fold(s)),
  measure: (s) => MEASURE.test(s),
};

/** A question asking for a measure (folded): how tall, wide, deep, high, thick or heavy; a size, dimensions, a diameter. */
const MEASURE_ASKED = /\bhow (?:tall|wide|deep|high|thick|heavy)\b|\b(?:what|which)(?: is| are|'s|s)? (?:the )?(?:\w+ )?(?:size|dimensions?|height|width|depth|diameter|weight|measurements?)\b|\b(?:dimensions|diameter|measurements)\b/;
/** A measure: a number with a unit of length, area, volume or weight, or two numbers by each other ("10x15", "5' x 10'"). */
const MEASURE = /\d\s*(?:ft|feet|foot|in|inch|inches|cm|mm|m|km|mi|miles?|meters?|metres?|yards?|yd|sq|square|cu|cubic|lbs?|pounds?|kg|kilos?|g|grams?|oz|ounces?|l|liters?|litres?|gal|gallons?|tons?|tonnes?|['"′″])(?![a-z])|\d\s*['"′″]?\s*(?:x|×|by)\s*\d/i;

/**
 * A yes/no question asking whether something is needed, in English or French (folded): "do I need…", "do I have to…",
 * "does he need…", "must I…", "is a deposit required?", "faut-il réserver ?", "c'est obligatoire ?". Not a need told
 * as a circumstance ("I need to cancel my appointment, will I be charged?"): the question starts with its auxiliary.
 */
const REQUIREMENT_ASKED = /^\W*(?:(?:do|does|will|would)\s+(?:i|we|you|he|she|they|(?:my|our|the)\s+\w+)\s+(?:have to|has to|need|needs|got to|gotta)\b|(?:must|should)\s+(?:i|we)\b|(?:is|are)\s+(?:it|there|an?\s+\w+|the\s+\w+|\w+)\s+(?:\w+\s+)?(?:required|needed|necessary|mandatory|compulsory|obligatory)\b)/;
const REQUIREMENT_ASKED_FR = /\bfaut[- ]il\b|\best-ce qu'?il faut\b|\b(?:c'?est|est-ce) (?:obligatoire|necessaire|indispensable)\b|\b(?:obligatoire|necessaire)\s*\?|\bdoi(?:s|t|vent)[- ](?:je|on|il|elle|ils|elles)\b|\bfaut (?:que|qu')/;
/**
 * What a sentence says of a need (folded): required, needed, necessary, mandatory, recommended, optional, "must", "have
 * to", "no appointment needed", walk-ins; in French obligatoire, nécessaire, conseillé, facultatif, "il faut", "sans
 * rendez-vous". Structure of any trade: the words a rule is written with.
 */
const SAYS_NEED = /\b(?:requir(?:e|es|ed|ement|ements)|need(?:s|ed)?|necessary|mandatory|compulsory|obligatory|essential|must|have to|has to|recommend(?:s|ed)?|optional|walk-?ins?|(?:only )?if you(?:'d)? (?:prefer|like|want)|obligatoire|necessaire|indispensable|conseill\w*|recommand\w*|facultati(?:f|ve)|il faut|sans (?:rendez-vous|rdv|reservation)|pas besoin|exige\w*)\b/;

/**
 * How often: "every six months", "every other week", "twice a year", "3 times per week", "each morning", "on Tuesdays", "Monday, Wednesday and Friday";
 * "daily" or "monthly" as an adverb ("we bake daily", "open daily from 7 am"), not as an adjective ("monthly memberships").
 */
/** A way to do something: "online", "by phone", "by emailing…", "in person", "at the front desk". */
const SAYS_HOW = /\b(online|by (phone|e-?mail|mail|text|calling|emailing|texting|filling)|in person|at the (front desk|counter|reception)|en ligne|par (t[ée]l[ée]phone|e-?mail|mail|courriel|sms)|sur place|en personne|en boutique|au comptoir)\b/i;

/** Whether a sentence opens with a command: its first word (after "Please") a verb in its base form ("Book online…", "Call us…"). */
function isCommand(sentence: string): boolean {
  const first = /^\s*(?:please\s+)?([A-Za-z]+)\b/i.exec(sentence)?.[1]?.toLowerCase() ?? '';
  return first.length > 2 && !STOPWORDS.has(first) && isBaseVerb(first);
}

/** A frequency in French ("tous les jours", "chaque semaine", "deux fois par an", "mensuel"). */
const FREQUENCY_FR = /\b(tous|toutes) les (\d+ )?(jours|nuits|matins|soirs|semaines|mois|ans|ann[ée]es|week-?ends|lundis|mardis|mercredis|jeudis|vendredis|samedis|dimanches)\b|\bchaque (jour|nuit|matin|soir|semaine|mois|ann[ée]e|trimestre|saison|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche)\b|\b(une|deux|trois|quatre|\d+) fois par\b|\b(quotidien(ne)?s?|hebdomadaires?|mensuel(le)?s?|annuel(le)?s?|trimestriel(le)?s?)\b/i;
const FREQUENCY = /\b(every|each)\s+(\d+\s+|other\s+|few\s+|couple of\s+|one|two|three|four|five|six|seven|eight|nine|ten|twelve\s+)?\s*(minute|hour|day|night|morning|evening|week|weekend|month|quarter|season|year|(mon|tues|wednes|thurs|fri|satur|sun)day)s?\b|\b(once|twice|three times|four times|\d+\s+times)\s+(a|an|per|each|every)\b|\b(daily|nightly|weekly|fortnightly|biweekly|monthly|quarterly|yearly|annually|hourly)\b(?=\s*([.,;:!?)]|$|from|at|on|in|until))|\bon\s+(mon|tues|wednes|thurs|fri|satur|sun)days\b|\b(mon|tues|wednes|thurs|fri|satur|sun)days?(\s*(,|and|&)\s*(mon|tues|wednes|thurs|fri|satur|sun)days?)+\b/i;
const HONORIFIC = /\b(Dr|Mr|Mrs|Ms|Mx|Prof)\.?\s+[A-Z][a-z]+/;
/** A run of capitalised words, after a title or not ("Dr. Helen Park", "Call Grace Hill", "Marcus Bell"). */
const CAPITALISED_RUN = /(\b(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.?\s+)?\b([A-Z][a-z'’-]+(?:\s+[A-Z][a-z'’-]+)*)/g;

/**
 * The words of the people a text names in full: a title and the capitalised words after it ("Dr. Helen Park", "Dr. Park"),
 * or a first name compromise knows and the capitalised words after it ("Marcus Bell", "Call Grace Hill"). Lower case.
 * "Is there parking?" is not answered by "…placed by Dr. Helen Park": a name is no common word.
 */
export function personNameWords(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(CAPITALISED_RUN)) {
    const run = words(m[2]!);
    if (m[1]) {
      out.push(...run.slice(0, 3));
      continue;
    }
    const first = run.findIndex((w, i) => i < run.length - 1 && isFirstName(w));
    if (first >= 0) out.push(...run.slice(first, first + 3));
  }
  return out;
}

/** `text` without the people it names in full (`personNameWords`, or `names` when already read), for matching common words. */
export function withoutPersonNames(text: string, names: Set<string> = new Set(personNameWords(text))): string {
  if (!names.size) return text;
  return text.replace(/[A-Za-z'’-]+/g, (w) => (/^[A-Z]/.test(w) && names.has(w.toLowerCase()) ? ' ' : w));
}

export const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
/** The days "weekday(s)" and "weekend(s)" hold. */
const DAYS_OF: Record<string, string[]> = { weekday: DAYS.slice(0, 5), weekdays: DAYS.slice(0, 5), weekend: DAYS.slice(5), weekends: DAYS.slice(5) };
const DAY_RANGE = /\b(mon|tues|wednes|thurs|fri|satur|sun)days?\s*(?:to|through|thru|until|till|[-–—])\s*(mon|tues|wednes|thurs|fri|satur|sun)days?\b/gi;

/** A holiday's eve ("Christmas Eve", "New Year's Eve"): another day than the holiday. */
const HOLIDAY_EVE = /\b([A-Za-z]+)('s)?\s+eve\b/gi;

/**
 * A text with its holiday eves written as one word beside "eve" ("Christmas Eve" → "christmaseve eve"), so that
 * "Christmas" finds "Christmas Day" and not the eve, and "Christmas Eve" still finds the eve.
 */
export function withHolidayEves(text: string): string {
  return text.replace(HOLIDAY_EVE, (_, day: string) => `${day.toLowerCase()}eve eve`);
}

/** What a range of numbers is read as besides itself: a minimum and a maximum, as a synonym of each. */
const RANGE_LIMIT = 'numberrange';

/**
 * What a sentence states in other words than a question asks for it: a limit ("at least 4 years old" is a minimum, "up to
 * 12 climbers" or "limited to 8 people" a maximum) and an age ("4 years old").
 */
const LIMITS: [RegExp, string][] = [
  [/\b(at least|no (?:less|fewer) than|or more)\b/gi, '$1 minimum'],
  [/\b(at (?:the )?most|up to|no more than|or (?:less|fewer)|limited to)\b/gi, '$1 maximum'],
  // A range states both, less plainly ("events for 10 to 200 guests": "What is the largest event you cater?"): a synonym
  // of either (`RANGE_LIMIT`), where "at least" is the word itself.
  // Not a phone number ("(608) 555-0199", "207-555-0148") nor hours ("7 am – 3 pm").
  [/(?<![)\d][\s-]?|[)]\s?)\b[1-9]\d{0,3}\s*(?:to|–|-)\s*[1-9]\d{0,3}\b(?![-–.]?\d|\s*(?:am|pm|a\.m|p\.m|:))/gi, `$& ${RANGE_LIMIT}`],
  [/\b(\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)[\s-]+(years?|months?)[\s-]+old\b/gi, '$& age'],
];

/**
 * A text with its day ranges spelled out ("Tuesday to Friday" → "Tuesday Wednesday Thursday Friday"), so a day inside
 * a range is found; its holiday eves told from their holidays (`withHolidayEves`); and the limits it states in words
 * named ("at least $100" → "at least minimum $100"), as a question asks for them ("the minimum for wholesale?").
 */
export function withDayRanges(text: string): string {
  return LIMITS.reduce((t, [re, to]) => t.replace(re, to), withHolidayEves(text)).replace(DAY_RANGE, (all, from: string, to: string) => {
    const a = DAYS.findIndex((d) => d.startsWith(from.toLowerCase()));
    const b = DAYS.findIndex((d) => d.startsWith(to.toLowerCase()));
    if (a < 0 || b < 0 || a === b) return all;
    const days: string[] = [];
    for (let i = a; days.length < 7; i = (i + 1) % 7) {
      days.push(DAYS[i]!);
      if (i === b) break;
    }
    return `${all} (${days.join(' ')})`;
  });
}

/**
 * How surely a sentence holds an answer of that kind, 0 to 1: a street address is sure, a town
 * with its state ("in Madison, Wisconsin") less so, a place named in passing ("at the West office") least.
 */
export function typeStrength(sentence: string, type: AnswerType, rateAsked = false): number {
  // A person to talk to answers "Who should I talk to about catering?" less surely than their number or address.
  if (type === 'contact' && !holdsType(sentence, type)) return holdsType(sentence, 'person') ? 0.6 : 0;
  if (!holdsType(sentence, type)) return 0;
  // A way said ("online", "by phone") is surer than a command ("Book at least two weeks ahead") or a "you can".
  if (type === 'method') return SAYS_HOW.test(sentence) ? 1 : isCommand(sentence) ? 0.8 : 0.6;
  // "How long do aligners take?": "Treatment lasts 12 to 18 months" before a rate ("wear them 22 hours a day").
  // Unless a rate is asked ("How long do I wear them each day?": `rateAsked`).
  if (type === 'duration' && !rateAsked) return DURATION.test(sentence.replace(RATE, '')) ? 1 : 0.5;
  // "How much for one visit?": an amount ("Day pass: $22") before "free" ("Rentals are free on your first visit").
  if (type === 'price') return AMOUNT.test(sentence) ? 1 : 0.8;
  if (type !== 'address') return 1;
  // "412 Kestrel Avenue, Eastfield, PA 17640" before "Eastfield, PA 17640" alone, an address block's last line.
  if (STREET.test(sentence)) return STREET_NUMBERED.test(sentence) ? 1 : 0.85;
  return CITY.test(sentence) ? 0.6 : 0.25;
}

/** "Priya Nair, Youth Programs Director": a name compromise may not know, then a role WordNet files under people. */
function namedWithRole(text: string): boolean {
  // A role may have accents ("Café Manager"), as a name may ("José Núñez").
  const m = /^\s*\p{Lu}[\p{Ll}'’-]+(?:\s+\p{Lu}[\p{Ll}'’-]+){1,2},\s+([\p{L} -]{3,60})$/u.exec(text);
  const role = m?.[1]?.trim().split(/\s+/).at(-1);
  return !!role && isPersonNoun(role.toLowerCase());
}

/** Who did it, after a passive verb: "roasted for us by Hillside Roasters", "designed by Studio Nord" (a firm is a who too). */
const DONE_BY = /\b[a-z]+(?:ed|en|wn|de|lt|ght|un)\b(?:\s+(?:for|to|with)\s+\w+)?\s+by\s+(?:the\s+)?([A-Z][a-z'’]+(?:\s+(?:&\s+)?[A-Z][a-z'’]+)+)/g;
function byName(sentence: string): boolean {
  return [...sentence.matchAll(DONE_BY)].some((m) => !NAMES_DAY.test(m[1]!) && !MONTH.test(m[1]!));
}

/**
 * Who does it, as the subject that opens the sentence: a name of two or three capitalised words no English dictionary
 * knows, then a verb in the third person ("Nonna Bertolini still makes the pasta", "Ines Okoro runs the front desk").
 */
const DOER = /^\s*(\p{Lu}[\p{Ll}'’-]+(?:\s+\p{Lu}[\p{Ll}'’-]+){1,2})\s+(?:(?:still|also|now|always|personally)\s+)?([a-z]{3,})s\b/u;
function doerNamed(sentence: string): boolean {
  const m = DOER.exec(sentence);
  if (!m || NAMES_DAY.test(m[1]!) || MONTH.test(m[1]!)) return false;
  const verb = m[2]!;
  return words(m[1]!).every((w) => !isKnownWord(w)) && (isBaseVerb(verb) || (verb.endsWith('e') && isBaseVerb(verb.slice(0, -1))));
}

/** Whether a sentence holds an answer of that kind. */
export function holdsType(sentence: string, type: AnswerType): boolean {
  // compromise misses some names ("Helen Park" reads as a park): a title or a known first name says a person too.
  if (type === 'person') return HONORIFIC.test(sentence) || namedWithRole(sentence) || byName(sentence) || doerNamed(sentence) || namesPerson(sentence);
  return PATTERNS[type](sentence);
}

/** Whether compromise reads a person in `sentence`, or a first name. Kept per sentence: the ranking asks it of every candidate. */
const namesPerson = remembered(5000, (sentence: string): boolean => {
  const doc = nlp(sentence);
  return doc.people().length > 0 || doc.has('#FirstName');
});

/**
 * Whether a text is for young people ("Youth programs", "Bring your child for a first visit…"). A question that names
 * no child asks for the general case: the children's price or rule is not its answer. A text that names adults too is for
 * everyone.
 */
export function namesYoung(text: string): boolean {
  // "…$299 a year for adults and $199 a year for children" is for everyone.
  if (/\badults?\b/i.test(text)) return false;
  return words(text).some((w) => w.length > 2 && !STOPWORDS.has(w) && isYoungNoun(w)) || [...text.matchAll(YOUNG_AGES)].some((m) => Number(m[1] ?? m[2]) <= 18);
}

/** An age limit or range for the young: "patients under 16", "under the age of 18", "for ages 10 to 17". */
const YOUNG_AGES = /\b(?:under|below|younger than)\s+(?:the\s+age\s+of\s+|age\s+)?(\d{1,2})\b(?!\s*(?:%|minutes?|hours?|days?|weeks?|months?|miles?|km|lbs?|kg|people|guests))|\bages?\s+\d{1,2}\s*(?:to|-|–|through|and)\s*(\d{1,2})\b/gi;

/** An age or a boy or girl in a question ("my 8-year-old", "ages 5 and 7", "my girl"). */
const CHILD_WORDS = /\b\d+[\s-]?(year|yr|month)s?[\s-]?olds?\b|\bages?\s+\d|\b(boys?|girls?)\b/;

/** Whether a question asks about a child: a young person, someone's child ("my son", "my baby", "son" is a French stopword too) or an age. */
function asksAboutChild(text: string): boolean {
  return CHILD_WORDS.test(fold(text)) || words(text).some((w) => w.length > 2 && isChildNoun(w));
}

const require = createRequire(import.meta.url);
const porter2 = require('wink-porter2-stemmer') as (word: string) => string;
let french: { stem(word: string): string } | undefined;
/** Snowball's French stemmer, required on the first word it stems: its module is 0.8 MB of source an idle service held (issue 48). */
const frenchStemmer = () => french ??= (require('snowball-stemmers') as { newStemmer(lang: string): { stem(word: string): string } }).newStemmer('french');
/** Snowball's French stemmer loaded before the first word it stems (warm.ts: a streamed call's first turn does not load it). */
export function warmStemmer(): void {
  frenchStemmer();
}
/** Stems already computed: a site's and its questions' words recur. */
const stemmed = new Map<string, string>();
const STEMS_KEPT = 100_000;

/**
 * The stem of a folded word. A word English knows (WordNet, with its inflections, or Porter2's stem of it: "plugging")
 * is stemmed by Porter2, the stemmer of PostgreSQL's `english` configuration; any other word of five letters or more by Snowball's French stemmer, so that a
 * French page's "commandes" and a visitor's "commande" meet, as "ouverte" and "ouvert" do. The choice is by the word, not
 * by the page or the question, so both sides of a match always stem a word alike. An English word WordNet does not know
 * (a name, a trade's jargon, a typo) loses at most a French ending, on both sides alike.
 */
export function stem(word: string): string {
  let out = stemmed.get(word);
  if (out !== undefined) return out;
  const english = porter2(word);
  out = word.length < 5 || /\d/.test(word) || isKnownWord(word) || isKnownWord(english) ? english : frenchStemmer().stem(word);
  if (stemmed.size >= STEMS_KEPT) stemmed.clear();
  stemmed.set(word, out);
  return out;
}

/** The words of a text, folded: letters and digits; hyphenated words also whole when a part is short ("wi-fi" → "wifi"). */
export function words(text: string): string[] {
  const out: string[] = [];
  // "1,000" and "$1,150" are one number each, not "1" and "000" or "150".
  for (const raw of fold(text).replace(/(\d),(?=\d{3}(?!\d))/g, '$1').split(/[^a-z0-9'-]+/)) {
    // "you'll", "we're", "I've": the pronoun, not a word "youll". French elides its articles and pronouns ("l'atelier",
    // "d'avance", "qu'il"): the word, not "latelier".
    const w = raw.replace(/^['-]+|['-]+$/g, '').replace(/^(l|d|j|m|n|s|t|c|qu|jusqu|lorsqu|puisqu)'(?=[a-z]{2})/, '')
      .replace(/'(s|ll|re|ve|d|m)$/, '').replace(/'/g, '');
    if (!w) continue;
    const parts = w.split('-').filter(Boolean);
    // "wi-fi" is the one word "wifi", not "wi" and "fi"; "tooth-colored" and "free-range" are both words and the
    // compound, so that a text saying only "free" does not answer "free-range".
    // "non-members" are no members, "non-slip" is not "slip": the compound only.
    if (parts.length > 1 && NEGATING_PREFIX.has(parts[0]!)) out.push(parts.join(''));
    // A number stays itself ("25-30", "10-inch").
    else if (parts.length > 1 && parts.some((p) => p.length <= 2)) out.push(parts.join(''), ...parts.filter((p) => p.length > 2 || /^\d+$/.test(p)));
    else if (parts.length > 1) out.push(parts.join(''), ...parts);
    else out.push(...parts);
  }
  return out;
}

/** A line's leading label ("Catering: catering@…", "Front desk: (608) 555-0173"): a short name, not a clause. */
const LINE_LABEL = /^\s*([A-Za-z][A-Za-z' -]{0,30}):\s/;
/** An email address's local part ("frontdesk" in "frontdesk@brightwater.example"). */
const LOCAL_PART = /\b([a-z][a-z0-9._-]*)@[a-z0-9-]+\./gi;

/** A run of letters read as two words when it is no word itself and both halves of three letters or more are ("frontdesk" → "front desk"). */
function asTwoWords(run: string): string[] {
  if (senseCount(run) > 0) return [run];
  for (let i = 3; i <= run.length - 3; i += 1) {
    const [a, b] = [run.slice(0, i), run.slice(i)];
    if (!STOPWORDS.has(a) && !STOPWORDS.has(b) && senseCount(a) > 0 && senseCount(b) > 0) return [a, b];
  }
  return [run];
}

/**
 * The stems of the words that say whom or what a contact line is for: its leading label ("Catering: catering@… or (207)
 * 555-0148") and the local parts of its email addresses, read as words ("frontdesk@…" → "front desk", "catering@…").
 */
export function contactOwner(sentence: string): Set<string> {
  const named = [LINE_LABEL.exec(sentence)?.[1] ?? ''];
  for (const m of sentence.matchAll(LOCAL_PART)) for (const run of fold(m[1]!).split(/[^a-z]+/)) named.push(...asTwoWords(run));
  return stems(named.join(' '));
}

const NEGATION = /\b(not|no|never|cannot|can'?t|don'?t|doesn'?t|isn'?t|aren'?t|won'?t)\b|n't\b/gi;

/** The clause after each negation of a sentence, up to the next comma, semicolon or colon ("We do not serve alcohol." → " serve alcohol."). */
export function negatedClauses(sentence: string): string[] {
  return [...sentence.matchAll(NEGATION)].map((m) => sentence.slice(m.index + m[0].length).split(/[,;:]/)[0]!);
}

/**
 * The stems of what a sentence denies: the first three content words after each negation, its act and what it is done to
 * ("We do not serve alcohol" → serv, alcohol); not the rest of the clause ("…not collected by closing time are donated to
 * a local food pantry" denies no food).
 */
export function deniedStems(sentence: string): Set<string> {
  const out = new Set(negatedClauses(sentence).flatMap((clause) => words(clause).filter((w) => !STOPWORDS.has(w)).slice(0, 3).map(stem)));
  // "Pets are not allowed inside", "Outside food is not permitted": what may not come is the subject, before the negation.
  for (const m of sentence.matchAll(NOT_ALLOWED)) for (const w of words(m[1]!).filter((x) => !STOPWORDS.has(x)).slice(-2)) out.add(stem(w));
  return out;
}

/** "<what> is / are not allowed": the few words before it, up to the clause's start ("No, pets are not allowed"). */
const NOT_ALLOWED = /(?:^|[,;:.]\s*)([^,;:.]{1,40}?)\s+(?:is|are)\s+not\s+(?:allowed|permitted|accepted|welcome)\b/gi;

/** The stems of a text's content words (stop words left out). */
export function stems(text: string): Set<string> {
  return new Set(words(text).filter((w) => !STOPWORDS.has(w)).map(stem));
}

/** WordNet senses from which a word is vague ("class": 9, "take": 44): its definitions relate it to too much. */
const VAGUE = 8;
/** WordNet senses from which a word of a definition is too vague to relate two words ("make", "place", "form"). */
const VAGUE_IN_GLOSS = 13;
const glossCache = new Map<string, string[]>();

/**
 * The stems a text's words are defined by: the content words of the WordNet definitions of its precise words, in their
 * two most frequent senses ("amalgam fillings": "an alloy of mercury with another metal (usually silver) used by dentists
 * to fill cavities" → silver, dentist, caviti…). Not of names ("Marcus Bell": a bell is "a hollow device…"), nor of vague
 * words (VAGUE); and only definition words that are nouns, verbs or adjectives ("usually" is not) of fewer than
 * VAGUE_IN_GLOSS senses ("course", "silver": 12). Cached by word.
 */
export function definedBy(text: string): Set<string> {
  const out = new Set<string>();
  // Names: capitalised words that do not start the text or a sentence in it, as in a question.
  for (const word of words(text.replace(/(?<!^|[.!?:]\s)\b[A-Z][a-z]+/g, ' '))) {
    let defined = glossCache.get(word);
    if (!defined) {
      defined = word.length < 3 || STOPWORDS.has(word) || senseCount(word) >= VAGUE ? []
        : glossWords(word).filter((w) => w.length > 2 && !STOPWORDS.has(w) && senseCount(w) > 0 && senseCount(w) < VAGUE_IN_GLOSS).map(stem);
      glossCache.set(word, defined);
    }
    for (const st of defined) out.add(st);
  }
  return out;
}

/**
 * A question's text as compromise parses it, kept for the last few texts: reading a question asks for its nouns, its verbs
 * (`verbsOf`) and its relative clauses (`withoutRelativeClauses`) of the same text, each a parse of 1-8 ms (issue 39).
 * Only matched and read (`match`, `not`, `out`, `json`), never tagged or changed, so a kept parse reads as a fresh one.
 */
const parsed = remembered(20, (text: string) => nlp(text));

/** The words of a text's main verbs, as compromise tags them: not auxiliaries, copulas or modals ("park" in "Where can I park?"). */
export const verbsOf: (text: string) => Set<string> = remembered(200, (text) =>
  new Set((parsed(text).match('#Verb').not('(#Auxiliary|#Copula|#Modal)').out('array') as string[]).flatMap((v) => words(v))));

const DETERMINER = /^(a|an|the|my|our|your|his|her|their|this|that|these|those)$/;

/**
 * The terms with the object a verb's definition implies made incidental: "Where can I park my car?" says no more than
 * "Where can I park?", for to park is to "maneuver a vehicle into a parking space" and a car is a vehicle (WordNet, four
 * steps up at most). A site says "Free parking behind the building", never the car. Only the noun right after the verb
 * (a determiner or "my" between), and only the verb's own definitions.
 */
function withImpliedObjects(terms: QueryTerm[], text: string): QueryTerm[] {
  const verbs = verbsOf(text);
  const order = words(text);
  return terms.map((t) => {
    if (t.incidental || t.proper || t.typeWord) return t;
    const at = order.indexOf(t.word);
    const verb = [order[at - 1], order[at - 2]].find((w, i) => w && verbs.has(w) && (i === 0 || DETERMINER.test(order[at - 1]!)));
    if (!verb) return t;
    const gloss = new Set(verbGlossWords(verb).filter((w) => w.length > 2 && !STOPWORDS.has(w) && !FUNCTION_WORD.test(w)));
    return nounClasses(t.word, 4).some((w) => gloss.has(w)) ? { ...t, incidental: true } : t;
  });
}

/** Verbs whose object is a kind of thing ("What can vegans eat?" is answered by the foods a sentence names). */
const OBJECT_KINDS: Record<string, Set<string>> = { eat: new Set(['food', 'nutriment', 'foodstuff']), drink: new Set(['beverage']) };
const YES_NO_START = /^(do|does|did|is|are|was|were|can|could|will|would|should|may|have|has)\b/;
/** French's question words (folded; "où" before folding, "ou" being "or"), a chat's among them ("cb", "kel", "qd"). */
const FRENCH_ASKS = /\b(qui|quoi|quand|comment|combien|pourquoi|quel|quelle|quels|quelles|lequel|laquelle|lesquels|lesquelles|cb|kel|kelle|qd|koi)\b|^\W*que\b|\bqu'est|\bà quoi\b/;
/**
 * A French yes/no question: one with no question word, asked with "est-ce que", or ending with its question mark as
 * French speech asks ("vous livrez à Villeurbanne ?", "je peux venir avec mon chien ?", "y a des bugnes en juillet ?").
 */
function frenchYesNo(text: string): boolean {
  if (languageOfText(text) !== 'fr' || /(^|[^\p{L}])où([^\p{L}]|$)/iu.test(text)) return false;
  const q = fold(text).trim();
  return !FRENCH_ASKS.test(q) && (/\?\s*$/.test(q) || /^est[- ]ce qu/.test(q));
}
const QUESTION_START = /^\s*(do|does|did|is|are|was|were|can|could|will|would|should|may|have|has|how|what|when|where|who|which|why)\b/;

/**
 * What a question tells before it asks, and what it asks: "I've got a bad toothache, can I be seen today?", "If I chip a
 * tooth, can I be seen today?" → ["I've got a bad toothache", "can I be seen today?"]. The ask is the last clause after a
 * comma that starts as a question does and names something of its own; a question that asks in one clause has no
 * preamble ("What does a cake for 20 people cost?", "For my son, what time…": the latter's ask starts with its own word).
 */
export function preamble(text: string): { told: string; ask: string } | null {
  const m = /^(.*\S)\s*[,;:]\s+((?:so\s+|and\s+|but\s+)?(?:do|does|is|are|can|could|will|would|should|may|how|what|when|where|who|which|am|any)\b[^,;:]*)$/i.exec(text.trim());
  // "Is there parking, and is it free?" asks twice: no story told.
  if (!m || QUESTION_START.test(fold(m[1]!))) return null;
  const ask = m[2]!;
  // "…, can you do that?", "…, is that ok?": an ask that only points back asks about what was told.
  const own = words(ask).filter((w) => !STOPWORDS.has(w) && !QUESTION_NOISE.has(w) && !FUNCTION_WORD.test(w) && !/^(do|done|doing|that|this|it|ok|okay)$/.test(w));
  return own.length ? { told: m[1]!, ask } : null;
}

/**
 * The question without its relative clauses after a noun ("people who cannot eat gluten", "a room where kids can play",
 * up to the next comma): they say whom or what it is about, and ask nothing. Its "who" asks for no person, and its
 * negation is not the question's ("What happens if I don't come?" is asked in the negative; "…for people who cannot
 * eat gluten?" is not). compromise tells a noun ("people", "someone") from a verb's object ("tell me where").
 */
export const withoutRelativeClauses: (text: string) => string = remembered(200, (text) => {
  const starts: number[] = parsed(text).match('(#Noun && !#Pronoun) [(who|where|when)]', 0).json({ offset: true })
    .map((m: { offset: { start: number } }) => m.offset.start);
  let out = text;
  for (const start of starts.sort((a, b) => b - a)) {
    const end = out.slice(start).search(/[,;?]/);
    out = `${out.slice(0, start).trimEnd()}${end < 0 ? '' : out.slice(start + end)}`;
  }
  return out;
});
// "business" and "company" name the site's owner, whatever words its pages use for it; "people" whom a question is for ("anything for people who cannot eat gluten?").
/** Grammar, not content: indefinite pronouns ("anything", "someone", "anywhere") and "cannot". */
const NEGATING_PREFIX = new Set(['non', 'anti', 'no']);
/**
 * "Are kids allowed to climb?", "Is it possible to rent shoes?": whether something may be done frames the question; what
 * is asked is the thing done ("Children must be at least 4 years old to climb", not "Pets are not allowed inside").
 */
const MAY = new Set(['allowed', 'allow', 'permitted', 'permit', 'possible', 'able', 'safe', 'suitable', 'appropriate']);
/** "Can I cancel whenever?", "…park wherever?": words for any time, place or way say how freely, not what is asked. */
const ANY_OF = new Set(['whenever', 'wherever', 'whatever', 'whichever', 'however', 'anytime', 'anywhere', 'anyhow']);
/** "Can I bring my dog?" asks whether the dog may come ("Dogs are welcome on the patio"), as "Are dogs allowed?" does. */
const MAY_BRING = /\b(can|may|could) (i|we) (also )?bring\b/;
/** "Do you have a café?": premises asked for with "a" are a thing asked about, not the business itself ("the café"). */
const INDEFINITE = new Set(['a', 'an', 'any', 'another']);
/** Words that name nothing: "anything", "someone", "everywhere", "cannot". */
export const FUNCTION_WORD = /^((any|some|every|no)(thing|one|body|where)|cannot)$/;
const QUESTION_NOISE = new Set(['dr', 'mr', 'mrs', 'ms', 'mx', 'prof', 'business', 'company', 'information', 'info', 'question', 'detail', 'details', 'explain', 'please', 'help', 'wonder', 'wondering', 'tell', 'anyone', 'someone', 'people']);

/** Whether English knows `word` (lower case): a stop word, a WordNet word or one of compromise's lexicon. */
export const isEnglishWord = (word: string): boolean => STOPWORDS.has(word) || isKnownWord(word) || isLexiconWord(word);

/**
 * `text` with its slips of typing mended ("whats the adress", "wich days", "the monthly membrship"): a lower-case word that
 * neither WordNet, compromise's lexicon nor the stopwords know becomes the nearest one that is: a stopword for a short word
 * (five letters or fewer: a short name, "priya", is left alone), a WordNet word for a longer one. Capitalised words are
 * names, and left; so are words of three letters or fewer, and parts of contractions and compounds.
 */
export function withSpelling(text: string): string {
  // English only: a French word is no English slip ("ouverture" is not "overture").
  if (languageOfText(text) !== 'en') return text;
  // Not a part of a contraction or a compound ("don't", "pre-order"): those are read whole.
  return text.replace(/(?<![\w'’-])[a-z]{4,}(?![\w'’-])/g, (w) => {
    if (STOPWORDS.has(w) || isKnownWord(w) || isLexiconWord(w)) return w;
    const stop = [...editsOf(w)].find((e) => STOPWORDS.has(e));
    if (stop) return stop;
    return w.length >= 6 ? nearestKnownWord(w) ?? w : w;
  });
}

/**
 * The names a text writes (folded): its capitalised words that do not start it or a sentence in it. Days and months are
 * written with a capital but are no names of things a site might lack; "Dr. Park": a title's full stop ends no sentence.
 * A name may have capitals inside ("MetLife", "BadgerCare").
 */
export function namesIn(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.replace(/\b(Dr|Mr|Mrs|Ms|Mx|Prof)\.\s/g, '$1  ').matchAll(/(?<![.!?]\s|^)\b([A-Z][a-z]+(?:[A-Z][a-z]+)*)\b/g)) {
    if (m.index > 0 && !WEEKDAY.test(m[1]!) && !MONTH.test(m[1]!)) out.add(fold(m[1]!));
  }
  return out;
}

/** A word for a business's premises or one of its branches ("gym", "office", "store", "location"). */
const isPremises = (word: string): boolean => isPremisesNoun(word) || BRANCH.some((b) => stem(b) === stem(word));

/**
 * A question's content terms with their stems, synonyms and roles, the answer type it wants and whether it asks yes or no.
 * Kept for the questions read last (`remembered`), frozen: the training notes, the data rows, retrieval and the reply each
 * read the same message.
 */
export function analyzeQuestion(asked: string): Question {
  return questionsRead(asked);
}

const questionsRead = remembered(100, (asked: string): Question => {
  const question = readQuestion(asked);
  for (const term of question.terms) Object.freeze(term);
  Object.freeze(question.terms);
  return Object.freeze(question);
});

/**
 * The adjective English makes of a verb denied with "un-" and its past participle, when WordNet knows it: "using" →
 * "unused", "opened" → "unopened", "paying" → "unpaid" only if known (never a guess).
 */
function unPrefixed(word: string): string[] {
  const base = irregularBase(word);
  const participles = word.endsWith('ed') ? [word] : word.endsWith('ing') ? [`${word.slice(0, -3)}ed`, `${word.slice(0, -3)}d`, `${word.slice(0, -3)}ied`] : base ? [`${base}ed`, `${base}d`] : [`${word}ed`, `${word}d`];
  return participles.map((p) => `un${p}`).filter((w) => isKnownWord(w)).slice(0, 1);
}

function readQuestion(asked: string): Question {
  const text = withHolidayEves(DOMAIN_PHRASES.reduce((t, [re, word]) => t.replace(re, word), withSpelling(asked)));
  const want = answerType(text);
  const typeWords = new Set((want ? TYPE_WORDS[want] : []).map(stem));
  // Names: capitalised words that do not start the question or a sentence in it.
  const proper = namesIn(text);
  // Written in lower case, a word WordNet knows only as a name ("a gym in seattle?") is one.
  for (const w of text.match(/\b[a-z]{3,}\b/g) ?? []) if (!STOPWORDS.has(w) && isInstanceName(w)) proper.add(w);
  // compromise gives a term with its punctuation ("once?"): its words, as the question's are read.
  const doc = parsed(text);
  const nouns = new Set((doc.match('#Noun').not('#Pronoun').out('array') as string[]).flatMap((a) => words(a)));
  const adjectives = new Set((doc.match('#Adjective').out('array') as string[]).flatMap((a) => words(a)));
  const read = words(text);
  // A word read as an adverb right before a word that is no adjective, both of which WordNet knows as nouns, names a kind
  // of that thing ("well pumps"): adverbs modify verbs and adjectives, not nouns ("still open" stays an adverb's).
  const modifiers = new Set(read.filter((w, i) => { const next = read[i + 1] ?? ''; return isNoun(w) && isNoun(next) && !adjectives.has(next) && !STOPWORDS.has(next); }));
  const adverbs = new Set((doc.match('#Adverb').out('array') as string[]).flatMap((a) => words(a)).filter((a) => !typeWords.has(stem(a)) && !modifiers.has(a)));
  const content = read.filter((w) => !STOPWORDS.has(w) && !QUESTION_NOISE.has(w) && !FUNCTION_WORD.test(w));
  // Two words WordNet knows as one ("laughing gas" → "nitrous oxide"): each finds the other's words too.
  const phrase = new Map<string, string[]>();
  content.forEach((w, i) => {
    const next = content[i + 1];
    if (!next) return;
    const syns = phraseSynonyms(w, next);
    if (syns.length) for (const x of [w, next]) phrase.set(x, [...(phrase.get(x) ?? []), ...syns]);
  });
  const moneyNumbers = new Set([...text.matchAll(/[$€£]\s?(\d[\d,]*)|\b(\d[\d,]*)\s?(%|percent\b|dollars?\b|euros?\b|cents?\b|bucks\b)/gi)].map((m) => (m[1] ?? m[2])!.replace(/,/g, '')));
  const seen = new Set<string>();
  const terms: QueryTerm[] = [];
  let previous = '';
  for (const word of read) {
    const after = previous;
    previous = word;
    if (STOPWORDS.has(word) || QUESTION_NOISE.has(word) || FUNCTION_WORD.test(word) || (word.length < 2 && !/\d/.test(word))) continue;
    const s = stem(word);
    if (seen.has(s)) continue;
    seen.add(s);
    const synonymWords = new Set<string>();
    for (const group of DOMAIN_SYNONYMS) if (group.some((g) => stem(g) === s)) for (const g of group) synonymWords.add(g);
    // "on weekdays", "at the weekend": the days a site names (its hours by day), one way only (Monday is no weekday's synonym).
    for (const d of DAYS_OF[word] ?? []) synonymWords.add(d);
    // The kinds of act its domain synonyms are ("found" is to "open" a business): a site says "Nadia opened the bakery".
    // Not a noun's ("my dog": its group's "pet" is no act of fondling).
    if (!proper.has(word) && !nouns.has(word)) for (const w of [...synonymWords]) for (const h of hypernyms(w)) synonymWords.add(h);
    // "seen" is "see", "teeth" are "tooth": the word itself, as Porter2 cannot stem it.
    const base = proper.has(word) ? undefined : irregularBase(word);
    // A noun's synonyms are its senses as a noun ("my dog": not "follow" or "tail", the verb's).
    if (!proper.has(word)) for (const syn of [...synonyms(word, 2, nouns.has(word) ? ['noun'] : undefined), ...derivations(word), ...(phrase.get(word) ?? []), ...(base ? [base] : [])]) synonymWords.add(syn);
    synonymWords.delete(word);
    if (word === 'minimum' || word === 'maximum') synonymWords.add(RANGE_LIMIT);
    const alternatives = new Set([...synonymWords].flatMap((w) => words(w)).map(stem));
    alternatives.delete(s);
    // "the ones I'm not using", "boxes not opened": what a site calls unused, unopened ("Bring back unused boxes").
    const negated = !proper.has(word) && /^(not|never|without)$|n't$/.test(after) ? unPrefixed(word) : [];
    const derived = new Set(proper.has(word) ? [] : [...derivations(word), ...(base ? [base] : []), ...negated].map(stem));
    derived.delete(s);
    // Precise class words only: "drink" (ten senses) or "food" would relate too much.
    const classWords = nouns.has(word) && !proper.has(word) && !typeWords.has(s)
      ? [...nounClasses(word, 2, true).filter((w) => !STOPWORDS.has(w) && senseCount(w) < VAGUE && stem(w) !== s), ...(DOMAIN_CLASSES[s] ?? [])] : [];
    const classes = new Set(classWords.map(stem));
    const opposites = adjectives.has(word) && !proper.has(word) ? antonyms(word).map(stem) : [];
    terms.push({
      word, stem: s, alternatives, derived, synonymWords: [...synonymWords], proper: proper.has(word), typeWord: typeWords.has(s),
      senses: proper.has(word) ? 1 : senseCount(word), incidental: !proper.has(word) && (adverbs.has(word) || MAY.has(word) || ANY_OF.has(word) || (word === 'bring' && MAY_BRING.test(fold(text))) || (isPremisesNoun(word) && !INDEFINITE.has(after))),
      premises: !proper.has(word) && isPremises(word),
      ...(OBJECT_KINDS[s] ? { kinds: OBJECT_KINDS[s] } : {}),
      ...(classes.size ? { classes, classWords } : {}),
      ...(opposites.length ? { antonyms: new Set(opposites) } : {}),
      ...(!proper.has(word) && word.length > 2 && isChildNoun(word) ? { young: true } : {}),
      ...(/^\d+$/.test(word) ? { money: moneyNumbers.has(word) } : {}),
      // "the Riverside gym": the word after a name is what it names; not after a people's name ("French butter").
      ...(proper.has(after) && !proper.has(word) && /^[a-z]{3,}$/.test(word) && !isDemonym(after) ? { namedBy: stem(after) } : {}),
    });
  }
  // "If I chip a tooth, can I be seen today?": asked yes or no, after what it tells.
  const yesNoPart = preamble(text)?.ask ?? text;
  return {
    text: asked, terms: withImpliedObjects(terms, text), want,
    yesNo: (YES_NO_START.test(fold(yesNoPart).trim()) && !/\b(what|which|when|where|who|how)\b/.test(fold(withoutRelativeClauses(yesNoPart)))) || frenchYesNo(yesNoPart),
    forChild: asksAboutChild(text),
    lead: want === 'duration' && (LEAD_ASKED.test(fold(text)) || ARRIVE_EARLY.test(fold(text))),
    whereTo: want === 'address' && WHERE_TO.test(fold(text)),
  };
}
