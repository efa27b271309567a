import { findPhoneNumbersInText, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import type { Passage } from '../knowledge/retrieval.ts';
import type {
  AgentRuntime, DataField, Evaluation, Outcome, RuntimeAgent, RuntimeTools, ToolCall, TranscriptMessage, TurnInput, TurnResult, Verdict,
} from './types.ts';

/**
 * The offline runtime: deterministic, no network. It answers from the agent's knowledge by
 * picking the passage sentences that share the most terms with the question, says so honestly
 * when nothing matches, declines what a guardrail forbids, and asks for the data_schema fields
 * one at a time. Everything it needs to remember between turns it reads back from the
 * transcript (which field it last asked for, what it offered), so it keeps no state.
 */

export type Lang = 'en' | 'fr';

export interface OfflineRuntimeOptions {
  /** The clock for tool-call timestamps and relative dates ("tomorrow"); tests pin it. */
  now?: () => Date;
}

/** `en` unless the page language is French (`fr`, `fr-CA`...): the two phrase tables we ship. */
export function pageLanguage(language: string | null | undefined): Lang {
  return /^fr(\b|[-_])/i.test(language?.trim() ?? '') ? 'fr' : 'en';
}

// ---------------------------------------------------------------------------------------------
// Text helpers

/** Lower case, accents dropped, typographic apostrophes made plain: what every matcher reads. */
export function fold(text: string): string {
  return text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[’‘`´]/g, "'");
}

const STOPWORDS = new Set(`a an the and or but if of to in on at by for with about from into over under is are was were be been
being am do does did done have has had i me my mine we our ours us you your yours he him his she her it its they them their
this that these those what which who whom whose when where why how can could would should will shall may might must not no
yes so than too very just also there here any some all please hi hello hey thanks thank tell know like want need get got let
im ive id dont doesnt didnt isnt arent cant much many more most out up down as then ok okay s t d ll re ve m one ones
le la les l un une des de du d et ou mais au aux en dans sur pour par avec sans sous est sont etre ai as avez avons ont suis es
je j tu il elle on nous vous ils elles me m te se ce cet cette ces c ca qui que qu quoi quel quelle quels quelles quand comment
pourquoi combien mon ma mes ton ta tes son sa ses notre nos votre vos leur leurs ne n pas plus y bonjour merci svp peux pouvez
puis voudrais veux savoir si tres aussi faire fait`.split(/\s+/));

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

function overlap(a: Set<string>, b: Set<string>): string[] {
  return [...a].filter((t) => b.has(t));
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A matcher for whole words or phrases (optionally plural) in folded text. */
function phraseMatcher(phrases: string[]): RegExp {
  const alternatives = phrases.map((p) => escapeRegExp(fold(p)).replace(/ /g, '\\s+')).join('|');
  return new RegExp(`(?:^|[^a-z0-9])(?:${alternatives})(?:e?s)?(?=[^a-z0-9]|$)`);
}

function splitSentences(text: string): string[] {
  return text
    .split(/\n+|(?<=[.!?])\s+(?=["“(«]?[\p{Lu}\d])/u)
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter((s) => s.length > 1);
}

function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), max - 20)).replace(/[\s,;:]+$/, '')}…`;
}

/** Replaces `{{name}}` from config_variables, `{{agent_name}}` with the agent's name, then contact facts; unknown names vanish. */
export function renderTemplate(template: string, agent: RuntimeAgent, contactFacts: Record<string, unknown> = {}): string {
  const rendered = template.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (_match, name: string) => {
    if (name === 'agent_name') return agent.name;
    const configured = agent.config_variables?.[name];
    if (typeof configured === 'string') return configured;
    const fact = contactFacts[name];
    return typeof fact === 'string' || typeof fact === 'number' ? String(fact) : '';
  });
  // "Hi {{first_name}}, welcome" without a first name reads "Hi, welcome", not "Hi , welcome".
  return rendered.replace(/[ \t]+([,.])/g, '$1').replace(/([,.])(?:[ \t]*,)+/g, '$1').replace(/[ \t]{2,}/g, ' ').trim();
}

// ---------------------------------------------------------------------------------------------
// Phrase tables (en, fr)

interface Phrases {
  greeting(name: string, firstName: string | null): string;
  greetingBack: string;
  thanks: string;
  goodbye: string;
  dontKnow: string;
  offerTransfer: string;
  offerContact: string;
  contactFollowUp: (question: string) => string;
  handoffYes: string;
  handoffNo: string;
  declineHandoff: string;
  decline: (rule: string) => string;
  declineTransfer: string;
  noted: (labels: string[]) => string;
  notUnderstood: (label: string) => string;
  skipped: (label: string) => string;
  happyToHelp: string;
  anythingElse: string;
  source: (urls: string[]) => string;
  ask: (label: string) => string;
  askWhether: (clause: string) => string;
  steer: Record<SteerTopic, string>;
  typeLabel: Record<'email' | 'phone', string>;
  and: string;
}

type SteerTopic = 'demo' | 'booking' | 'contact';

const PHRASES: Record<Lang, Phrases> = {
  en: {
    greeting: (name, first) => `Hi${first ? ` ${first}` : ''}! I'm ${name}. How can I help you today?`,
    greetingBack: 'Hello! How can I help you today?',
    thanks: "You're welcome! Is there anything else I can help you with?",
    goodbye: 'Thank you for chatting with us. Have a great day!',
    dontKnow: "I'm sorry, I don't know the answer to that.",
    offerTransfer: 'Would you like me to connect you with someone from our team?',
    offerContact: 'If you leave your contact details, our team will get back to you.',
    contactFollowUp: (q) => `Our team can get back to you. ${q}`,
    handoffYes: "Of course. I'm connecting you with a member of our team; someone will be with you shortly.",
    handoffNo: "I'm sorry, no one from our team is available in this chat right now.",
    declineHandoff: 'No problem.',
    decline: (rule) => `I'm sorry, but I can't help with that. Our policy: "${rule}"`,
    declineTransfer: 'A member of our team can help you with this; would you like me to connect you?',
    noted: (labels) => (labels.length ? `Thanks, I've noted your ${labels.join(' and ')}.` : "Thanks, I've noted that."),
    notUnderstood: (label) => `Sorry, I couldn't read that as a valid ${label}.`,
    skipped: (label) => `No problem, we can skip your ${label}.`,
    happyToHelp: "I'd be happy to help with that.",
    anythingElse: 'Is there anything else I can help you with?',
    source: (urls) => `${urls.length > 1 ? 'Sources' : 'Source'}: ${urls.join(', ')}`,
    ask: (label) => `Could you share your ${label}?`,
    askWhether: (clause) => `Could you tell me ${clause}?`,
    steer: { demo: 'I can also help you book a demo.', booking: 'I can also help you book an appointment.', contact: 'I can also have our team contact you.' },
    typeLabel: { email: 'email address', phone: 'phone number' },
    and: 'and',
  },
  fr: {
    greeting: (name, first) => `Bonjour${first ? ` ${first}` : ''} ! Je suis ${name}. Comment puis-je vous aider aujourd'hui ?`,
    greetingBack: "Bonjour ! Comment puis-je vous aider aujourd'hui ?",
    thanks: 'Avec plaisir ! Puis-je vous aider pour autre chose ?',
    goodbye: "Merci de nous avoir contactés. Bonne journée !",
    dontKnow: 'Je suis désolé, je ne connais pas la réponse à cette question.',
    offerTransfer: "Souhaitez-vous que je vous mette en relation avec un membre de notre équipe ?",
    offerContact: 'Si vous nous laissez vos coordonnées, notre équipe vous recontactera.',
    contactFollowUp: (q) => `Notre équipe peut vous recontacter. ${q}`,
    handoffYes: "Bien sûr. Je vous mets en relation avec un membre de notre équipe ; quelqu'un va vous répondre très vite.",
    handoffNo: "Je suis désolé, personne de notre équipe n'est disponible dans cette conversation pour le moment.",
    declineHandoff: 'Pas de problème.',
    decline: (rule) => `Je suis désolé, je ne peux pas vous aider sur ce point. Notre politique : « ${rule} »`,
    declineTransfer: 'Un membre de notre équipe peut vous aider ; souhaitez-vous que je vous mette en relation ?',
    noted: (labels) => (labels.length ? `Merci, j'ai bien noté votre ${labels.join(' et votre ')}.` : "Merci, c'est noté."),
    notUnderstood: (label) => `Désolé, je n'ai pas pu lire cela comme ${label} valide.`,
    skipped: (label) => `Pas de problème, nous pouvons passer votre ${label}.`,
    happyToHelp: 'Avec plaisir, je peux vous aider.',
    anythingElse: 'Puis-je vous aider pour autre chose ?',
    source: (urls) => `${urls.length > 1 ? 'Sources' : 'Source'} : ${urls.join(', ')}`,
    ask: (label) => `Pourriez-vous m'indiquer votre ${label} ?`,
    askWhether: (clause) => `Pourriez-vous me dire ${clause} ?`,
    steer: { demo: 'Je peux aussi vous aider à réserver une démo.', booking: 'Je peux aussi vous aider à prendre rendez-vous.', contact: 'Je peux aussi demander à notre équipe de vous contacter.' },
    typeLabel: { email: 'adresse e-mail', phone: 'numéro de téléphone' },
    and: 'et',
  },
};

/** The apology the runtimes fall back to when they have nothing grounded to say. */
export function dontKnowReply(lang: Lang, canTransfer: boolean): string {
  const p = PHRASES[lang];
  return `${p.dontKnow} ${canTransfer ? p.offerTransfer : p.offerContact}`;
}

/** The agent's greeting rendered, or a default one in the page language. */
export function greetingFor(agent: RuntimeAgent, language: string, contactFacts: Record<string, unknown> = {}): string {
  if (agent.greeting?.trim()) return renderTemplate(agent.greeting, agent, contactFacts);
  const first = typeof contactFacts.first_name === 'string' && contactFacts.first_name.trim() ? contactFacts.first_name.trim() : null;
  return PHRASES[pageLanguage(language)].greeting(agent.name, first);
}

// ---------------------------------------------------------------------------------------------
// Recognising what the visitor said (all on folded text)

const HANDOFF_REQUEST = /\b(human|real person|a person|live agent|real agent|an agent|representative|operator|(talk|speak|chat) (to|with) (a|an|someone|somebody|your|the|sales|support|staff|team)|humain|conseiller|conseillere|quelqu'un|une personne|un agent|parler a)\b/;
const GREETING_ONLY = /^(hi|hello|hey|hiya|good (morning|afternoon|evening)|bonjour|bonsoir|salut|coucou)( there)?[\s!.,]*$/;
const THANKS = /^(thanks?|thank you|thx|ty|cheers|merci)\b/;
const GOODBYE = /^(bye|goodbye|good bye|see you|that'?s all|au revoir|a bientot|bonne journee)\b/;
const QUESTION_START = /^(what|whats|how|when|where|why|who|which|can|could|do|does|did|is|are|will|would|should|may|tell me|explain|quel|quelle|quels|quelles|comment|combien|ou|quand|pourquoi|qui|est-ce|est ce|pouvez|puis-je|avez|faites|y a-t-il)\b/;
const BOOKING = /\b(book|booking|demo|demos|demonstration|schedule|appointment|meeting|call ?back|trial|reserve|reservation|rendez-vous|rdv|demonstration|reserver|planifier|essai)\b/;
const AFFIRMATIVE = /^(yes|yeah|yep|yup|sure|ok|okay|please|of course|absolutely|definitely|correct|right|indeed|oui|ouais|bien sur|d'accord|absolument|volontiers|exact|tout a fait|avec plaisir)\b/;
const NEGATIVE = /^(no|nope|nah|not really|never|no thanks|non|pas vraiment|jamais|non merci)\b/;
const DECLINE_FIELD = /^(no|nope|nah|i'?d rather not|rather not|i prefer not|prefer not|skip|pass|no thanks|non|je prefere pas|je prefere ne pas|pas question|non merci)\b/;

function isQuestion(text: string): boolean {
  const f = fold(text).trim();
  return f.includes('?') || QUESTION_START.test(f) || /\b(i (want|need|would like) to know|i'?m looking for|i am looking for|je cherche|je voudrais savoir|j'aimerais savoir)\b/.test(f);
}

// ---------------------------------------------------------------------------------------------
// Guardrails: topic synonym groups

/** Common topics a guardrail forbids, with the words a visitor uses for them (folded). */
const TOPICS: Record<string, string[]> = {
  pricing: ['price', 'pricing', 'priced', 'cost', 'quote', 'quotation', 'fee', 'tariff', 'expensive', 'cheap', 'budget', 'how much does',
    'how much do', 'how much is', 'how much are', 'how much for', 'how much will', 'how much would',
    'prix', 'tarif', 'tarification', 'cout', 'coute', 'combien coute', "combien ca coute", "c'est combien", 'devis'],
  discount: ['discount', 'promo', 'promotion', 'coupon', 'voucher', 'rebate', 'reduction', 'remise', 'code promo', 'rabais', 'solde'],
  legal: ['legal', 'lawyer', 'law', 'lawsuit', 'sue', 'suing', 'attorney', 'liability', 'litigation', 'juridique', 'avocat', 'loi', 'proces', 'contentieux'],
  medical: ['medical', 'medicine', 'medication', 'diagnosis', 'diagnose', 'symptom', 'doctor', 'treatment', 'prescription', 'drug', 'disease',
    'illness', 'headache', 'medecin', 'medicament', 'symptome', 'traitement', 'maladie', 'ordonnance', 'sante'],
  competitors: ['competitor', 'competition', 'rival', 'versus', 'vs', 'concurrent', 'concurrence'],
  financial: ['invest', 'investment', 'investing', 'stock market', 'stock tip', 'crypto', 'bitcoin', 'financial advice', 'tax', 'investissement', 'bourse', 'impot'],
  politics: ['politics', 'political', 'election', 'voting', 'politique'],
  refund: ['refund', 'money back', 'reimburse', 'reimbursement', 'chargeback', 'remboursement', 'rembourser'],
  personal_data: ['password', 'credit card', 'card number', 'social security', 'ssn', 'mot de passe', 'carte bancaire'],
  roadmap: ['roadmap', 'release date', 'upcoming feature', 'future feature', 'feuille de route'],
};
const TOPIC_MATCHERS = Object.entries(TOPICS).map(([topic, words]) => [topic, phraseMatcher(words)] as const);

function topicsOf(text: string): Set<string> {
  const f = fold(text);
  return new Set(TOPIC_MATCHERS.filter(([, re]) => re.test(f)).map(([topic]) => topic));
}

const PROHIBITION = /\b(never|not|don'?t|no|avoid|refuse|mustn'?t|cannot|can'?t|shouldn'?t|forbidden|prohibited|jamais|ne|pas|aucun|aucune|interdit|eviter|evite|refuser|refuse)\b/;
/** Words of a guardrail that say how, not what: they never make a request match a rule. */
const RULE_WORDS = terms(`never always discuss discussing give giving provide providing share sharing mention mentioning talk talking answer answering
  question questions visitor visitors customer customers user users caller callers agent information info advice any about reveal revealing disclose
  make making offer offering promise promising say saying tell telling our company product products number numbers detail details specific exact
  respond reply replies topic topics matter matters thing things people person client clients parler donner dire jamais sujet sujets
  information informations conseil conseils client clients`);

interface GuardrailHit { rule: string; why: string[] }

/**
 * The guardrail a request runs into, if any: only prohibitions ("Never...", "Do not...") count,
 * and they match by topic (the synonym groups above, so "Never quote prices" covers "how much
 * does it cost") or by a content word they share with the request (ignoring the rule's verbs).
 */
export function guardrailHit(guardrails: string[] | null, request: string): GuardrailHit | null {
  const requestTopics = topicsOf(request);
  const requestTerms = terms(request);
  for (const rule of guardrails ?? []) {
    if (!PROHIBITION.test(fold(rule))) continue;
    const shared = [...topicsOf(rule)].filter((t) => requestTopics.has(t));
    if (shared.length) return { rule, why: shared };
    // A rule's own subject words: the request must share all of them, or two when it names more
    // ("Never talk about the CEO's salary" covers a question on the salary of the CEO, not "who is the CEO").
    const subject = [...terms(rule)].filter((t) => !RULE_WORDS.has(t) && t.length >= 3);
    const words = subject.filter((t) => requestTerms.has(t));
    if (subject.length && words.length >= Math.min(2, subject.length)) return { rule, why: words };
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Data capture: parsers per data_schema type

export interface ParseContext { lang: Lang; country: CountryCode; now: Date }

// The lookbehind makes a match start only where a local part can start: without it a long run of
// digits is scanned again from every position (quadratic).
const EMAIL = /(?<![a-z0-9._%+-])[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}/i;
/** What the parsers read of one message: a data answer is never longer, and it bounds their work. */
const MAX_PARSED_CHARS = 4000;

export function parseEmail(text: string): string | undefined {
  return EMAIL.exec(text)?.[0].toLowerCase();
}

/** The first valid phone number in the text, in E.164 (national numbers read in the default country). */
export function parsePhone(text: string, country: CountryCode): string | undefined {
  const found = findPhoneNumbersInText(text, { defaultCountry: country });
  const valid = found.find((f) => f.number.isValid());
  if (valid) return valid.number.number;
  const whole = parsePhoneNumberFromString(text.trim(), country);
  return whole?.isValid() ? whole.number : undefined;
}

const SMALL_NUMBERS: Record<string, number> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12,
  fifteen: 15, twenty: 20, thirty: 30, fifty: 50, hundred: 100, thousand: 1000,
  un: 1, une: 1, deux: 2, trois: 3, quatre: 4, cinq: 5, sept: 7, huit: 8, neuf: 9, dix: 10, onze: 11, douze: 12, quinze: 15,
  vingt: 20, trente: 30, cinquante: 50, cent: 100, mille: 1000,
};

/**
 * The first number in the text: "1,250" and "1 250" are thousands, "3,5" is a decimal in French,
 * "10k" is 10000, and a few number words ("ten", "dix") are read too.
 */
export function parseNumber(text: string, lang: Lang): number | undefined {
  const m = /(-?\d{1,3}(?:[\s\u00a0\u202f.,']\d{3})+(?:[.,]\d+)?|-?\d+(?:[.,]\d+)?)(\s?k\b)?/i.exec(text);
  if (m) {
    let raw = m[1]!.replace(/[\s\u00a0\u202f']/g, '');
    const lastComma = raw.lastIndexOf(',');
    const lastDot = raw.lastIndexOf('.');
    if (lastComma >= 0 && lastDot >= 0) {
      // Both: the later one is the decimal separator.
      const [thousands, decimal] = lastComma > lastDot ? ['.', ','] : [',', '.'];
      raw = raw.split(thousands).join('').replace(decimal, '.');
    } else if (lastComma >= 0) {
      const groups = raw.split(',');
      const thousands = lang !== 'fr' && groups.slice(1).every((g) => g.length === 3);
      raw = thousands || groups.length > 2 ? groups.join('') : groups.join('.');
    } else if (lastDot >= 0) {
      const groups = raw.split('.');
      if (groups.length > 2 || (lang === 'fr' && groups[1]!.length === 3)) raw = groups.join('');
    }
    const n = Number(raw);
    if (Number.isFinite(n)) return m[2] ? n * 1000 : n;
  }
  for (const word of fold(text).split(/[^a-z]+/)) {
    const n = SMALL_NUMBERS[word];
    if (n !== undefined) return n;
  }
  return undefined;
}

const YES_WORDS = /\b(yes|yeah|yep|yup|sure|of course|absolutely|definitely|correct|indeed|true|oui|ouais|bien sur|absolument|exact|tout a fait|affirmative)\b/;
const NO_WORDS = /\b(no|nope|nah|not|never|false|don'?t|doesn'?t|isn'?t|aren'?t|non|pas|jamais|aucun)\b/;

/** yes/no in English or French; the first one said wins ("no, not yet" is false, "yes, not sure when" is true). */
export function parseBoolean(text: string): boolean | undefined {
  const f = fold(text);
  const yes = YES_WORDS.exec(f);
  const no = NO_WORDS.exec(f);
  if (yes && (!no || yes.index <= no.index)) return true;
  if (no) return false;
  return undefined;
}

const MONTHS: Record<string, number> = {
  january: 1, jan: 1, february: 2, feb: 2, march: 3, mar: 3, april: 4, apr: 4, may: 5, june: 6, jun: 6, july: 7, jul: 7,
  august: 8, aug: 8, september: 9, sept: 9, sep: 9, october: 10, oct: 10, november: 11, nov: 11, december: 12, dec: 12,
  janvier: 1, janv: 1, fevrier: 2, fevr: 2, fev: 2, mars: 3, avril: 4, avr: 4, mai: 5, juin: 6, juillet: 7, juil: 7,
  aout: 8, septembre: 9, octobre: 10, novembre: 11, decembre: 12,
};
const MONTH_NAMES = Object.keys(MONTHS).sort((a, b) => b.length - a.length).join('|');
const WEEKDAYS: Record<string, number> = {
  sunday: 0, monday: 1, tuesday: 2, wednesday: 3, thursday: 4, friday: 5, saturday: 6,
  dimanche: 0, lundi: 1, mardi: 2, mercredi: 3, jeudi: 4, vendredi: 5, samedi: 6,
};

function isoDate(year: number, month: number, day: number): string | undefined {
  const d = new Date(Date.UTC(year, month - 1, day));
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) return undefined;
  return d.toISOString().slice(0, 10);
}

const fullYear = (y: string) => (y.length === 2 ? 2000 + Number(y) : Number(y));

/**
 * A calendar date as `YYYY-MM-DD`: ISO dates, 14/03/2026 (day first in French and whenever the
 * first number cannot be a month, month first otherwise), "March 14, 2026", "14 mars 2026",
 * a month and day without a year (the next such day), today / tomorrow / next Monday (and French).
 */
export function parseDate(text: string, lang: Lang, now: Date): string | undefined {
  const f = fold(text);
  let m = /\b(\d{4})-(\d{1,2})-(\d{1,2})\b/.exec(f);
  if (m) return isoDate(Number(m[1]), Number(m[2]), Number(m[3]));
  m = /\b(\d{1,2})[/.-](\d{1,2})[/.-](\d{4}|\d{2})\b/.exec(f);
  if (m) {
    const a = Number(m[1]);
    const b = Number(m[2]);
    const dayFirst = lang === 'fr' || a > 12;
    return isoDate(fullYear(m[3]!), dayFirst ? b : a, dayFirst ? a : b);
  }
  const withYear = (month: number, day: number, year?: string) => {
    if (year) return isoDate(fullYear(year), month, day);
    const thisYear = now.getUTCFullYear();
    const candidate = isoDate(thisYear, month, day);
    return candidate && candidate >= now.toISOString().slice(0, 10) ? candidate : isoDate(thisYear + 1, month, day);
  };
  m = new RegExp(`\\b(${MONTH_NAMES})\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b(?:,?\\s+(\\d{4}))?`).exec(f);
  if (m) return withYear(MONTHS[m[1]!]!, Number(m[2]), m[3]);
  m = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th|er)?\\s+(?:of\\s+)?(${MONTH_NAMES})\\b\\.?(?:,?\\s+(\\d{4}))?`).exec(f);
  if (m) return withYear(MONTHS[m[2]!]!, Number(m[1]), m[3]);
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const plusDays = (n: number) => new Date(today + n * 86_400_000).toISOString().slice(0, 10);
  if (/\b(day after tomorrow|apres-demain|apres demain)\b/.test(f)) return plusDays(2);
  if (/\b(tomorrow|demain)\b/.test(f)) return plusDays(1);
  if (/\b(today|aujourd'hui|aujourdhui)\b/.test(f)) return plusDays(0);
  m = new RegExp(`\\b(${Object.keys(WEEKDAYS).join('|')})\\b`).exec(f);
  if (m) {
    const delta = (WEEKDAYS[m[1]!]! - new Date(today).getUTCDay() + 7) % 7 || 7;
    return plusDays(delta);
  }
  return undefined;
}

const STRING_LEAD_INS = [
  /^(?:my|our)\s+[\p{L}\s]{1,30}?\s+(?:is|are|would be)\s+/iu,
  /^(?:it'?s|it is|this is|i am|i'm|call me|we are|we're|that'?s|sure,?|yes,?|ok,?)\s+/iu,
  /^(?:je m'appelle|je suis|c'est|nous sommes|mon\s+[\p{L}\s]{1,30}?\s+est|notre\s+[\p{L}\s]{1,30}?\s+est)\s+/iu,
];

/** A free-text answer to a question the agent just asked: the message minus lead-ins like "my name is". */
export function parseAnswer(text: string): string | undefined {
  let value = text.trim().replace(/[’]/g, "'");
  for (let i = 0; i < 2; i += 1) for (const re of STRING_LEAD_INS) value = value.replace(re, '');
  value = value.replace(/^["'«“\s]+|["'»”.!\s]+$/g, '').trim();
  if (!value || value.length > 200 || isQuestion(value)) return undefined;
  if (DECLINE_FIELD.test(fold(value)) && value.split(/\s+/).length <= 4) return undefined;
  return value;
}

/** The value of `field` in a free-text message; `asked` says the agent has just asked for this very field. */
export function extractField(field: DataField, message: string, asked: boolean, ctx: ParseContext): unknown {
  const text = message.slice(0, MAX_PARSED_CHARS);
  switch (field.type) {
    case 'email':
      return parseEmail(text);
    case 'phone': {
      // Unprompted, only an international number or one introduced as a phone number counts.
      const introduced = /\+\d|\b(phone|mobile|cell|tel|call|reach|text|whatsapp|numero|telephone|portable|joindre|appeler)\b/.test(fold(text));
      return asked || introduced ? parsePhone(withoutEmails(text), ctx.country) : undefined;
    }
    case 'date':
      return parseDate(withoutEmails(text), ctx.lang, ctx.now);
    case 'number': {
      const clean = withoutPhonesAndDates(text, ctx);
      if (asked) return parseNumber(clean, ctx.lang);
      // Unprompted: a number said next to a word of the field ("we are 50 employees").
      const fieldTerms = terms(`${field.name.replace(/_/g, ' ')} ${field.description ?? ''}`);
      return overlap(fieldTerms, terms(clean)).length && /\d/.test(clean) ? parseNumber(clean, ctx.lang) : undefined;
    }
    case 'boolean':
      return asked ? parseBoolean(text) : undefined;
    case 'string': {
      if (asked) return parseAnswer(text);
      if (/name|nom/.test(field.name)) {
        const m = /\b(?:my name is|i am|i'm|this is|je m'appelle|je suis)\s+(\p{Lu}[\p{L}'-]+(?:\s+\p{Lu}[\p{L}'-]+)?)/u.exec(text.replace(/’/g, "'"));
        return m?.[1];
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

function withoutEmails(text: string): string {
  return text.replace(new RegExp(EMAIL.source, 'gi'), ' ').replace(/https?:\/\/\S+/g, ' ');
}

function withoutPhonesAndDates(text: string, ctx: ParseContext): string {
  let out = withoutEmails(text);
  for (const found of findPhoneNumbersInText(out, { defaultCountry: ctx.country }).reverse()) {
    out = `${out.slice(0, found.startsAt)} ${out.slice(found.endsAt)}`;
  }
  return out.replace(/\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}\b/g, ' ');
}

/**
 * Checks and normalizes a value captured for a field (the LLM runtime's capture_data tool): phone
 * numbers to E.164, emails lower-cased, dates to YYYY-MM-DD, numbers and booleans from text too.
 */
export function normalizeFieldValue(field: DataField, value: unknown, ctx: ParseContext): { ok: true; value: unknown } | { ok: false; error: string } {
  if (value === null || value === undefined || value === '') return { ok: false, error: 'empty value' };
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  let parsed: unknown;
  if (field.type === 'number' && typeof value === 'number') parsed = Number.isFinite(value) ? value : undefined;
  else if (field.type === 'boolean' && typeof value === 'boolean') parsed = value;
  else if (field.type === 'string') parsed = text.trim().slice(0, 500) || undefined;
  else if (field.type === 'phone') parsed = parsePhone(text, ctx.country);
  else if (field.type === 'number') parsed = parseNumber(text, ctx.lang);
  else if (field.type === 'boolean') parsed = parseBoolean(text);
  else parsed = extractField(field, text, true, ctx);
  return parsed === undefined ? { ok: false, error: `not a valid ${field.type}` } : { ok: true, value: parsed };
}

/** The country national phone numbers are read in: config variable `country` (ISO 3166 alpha-2), else FR for French pages, else US. */
export function defaultCountry(agent: RuntimeAgent, lang: Lang): CountryCode {
  const configured = agent.config_variables?.country ?? agent.config_variables?.default_country;
  if (configured && /^[A-Za-z]{2}$/.test(configured)) return configured.toUpperCase() as CountryCode;
  return lang === 'fr' ? 'FR' : 'US';
}

// ---------------------------------------------------------------------------------------------
// Asking for fields

function humanize(name: string): string {
  return name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ').toLowerCase().trim();
}

/** "you" for "the visitor", so a description written about the visitor reads as a question to them. */
function youify(text: string): string {
  return text
    .replace(/\b(?:the\s+)?(?:visitor|customer|user|caller|lead|prospect|client)(?:'s|’s)\s+/gi, 'your ')
    .replace(/\b(?:the\s+)?(?:visitor|customer|user|caller|lead|prospect|client)\s+(is|has|was|wants|needs)\b/gi, (_m, verb: string) =>
      `you ${({ is: 'are', has: 'have', was: 'were', wants: 'want', needs: 'need' } as Record<string, string>)[verb.toLowerCase()]}`);
}

/** What the field is called in a question: its description tidied up, else its name. */
export function fieldLabel(field: DataField, lang: Lang): string {
  const description = field.description?.trim().replace(/[.!:;]+$/, '');
  if (description && description.length <= 100 && !description.endsWith('?')) {
    const label = youify(description)
      .replace(/^(?:please\s+)?(?:ask\s+(?:the\s+\w+\s+)?for|collect|capture|get|obtain|record)\s+/i, '')
      .replace(/^(?:your|their|the|a|an|his|her)\s+/i, '');
    if (label) return /^[A-Z]{2}/.test(label) ? label : label.charAt(0).toLowerCase() + label.slice(1);
  }
  const name = humanize(field.name);
  if (field.type === 'email' && !/mail/.test(name)) return `${name} (${PHRASES[lang].typeLabel.email})`;
  if (field.type === 'email' && name === 'email') return PHRASES[lang].typeLabel.email;
  if (field.type === 'phone' && /^(phone|tel|telephone|mobile)$/.test(name)) return PHRASES[lang].typeLabel.phone;
  return name;
}

/** The question asking for a field; the offline runtime recognises it later in the transcript. */
export function askFor(field: DataField, lang: Lang): string {
  const description = field.description?.trim();
  if (description?.endsWith('?')) return description;
  const label = fieldLabel(field, lang);
  return /^(whether|if|si)\b/i.test(label) ? PHRASES[lang].askWhether(label) : PHRASES[lang].ask(label);
}

function lastIndexOf<T>(items: T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i -= 1) if (test(items[i]!)) return i;
  return -1;
}

const agentSide = (m: TranscriptMessage) => m.role === 'agent' || m.role === 'human_agent';
const visitorSide = (m: TranscriptMessage) => m.role === 'visitor' || m.role === 'caller';

/** The field the agent's message asked for (it contains our question for it, in either language). */
function askedField(schema: DataField[], agentText: string | undefined): DataField | undefined {
  if (!agentText) return undefined;
  return schema.find((f) => agentText.includes(askFor(f, 'en')) || agentText.includes(askFor(f, 'fr')));
}

/** The next required field to ask for: not captured, not declined, not asked twice already. */
function timesAsked(field: DataField, messages: TranscriptMessage[]): number {
  return messages.filter((m) => agentSide(m) && (m.text.includes(askFor(field, 'en')) || m.text.includes(askFor(field, 'fr')))).length;
}

function nextField(schema: DataField[], captured: Record<string, unknown>, messages: TranscriptMessage[], skip: Set<string>): DataField | undefined {
  const agentTexts = messages.filter(agentSide).map((m) => m.text);
  return schema.find((f) => {
    if (!f.required || captured[f.name] !== undefined || skip.has(f.name)) return false;
    const asks = timesAsked(f, messages);
    const declined = agentTexts.some((t) => t.includes(PHRASES.en.skipped(fieldLabel(f, 'en'))) || t.includes(PHRASES.fr.skipped(fieldLabel(f, 'fr'))));
    // Asked twice and still not given: the visitor is not going to; do not nag.
    return asks < 2 && !declined;
  });
}

/**
 * Reads data_schema values out of one visitor message. The field the agent just asked for is
 * read first and most leniently; other fields only from unambiguous forms (an email, a phone
 * number introduced as one...), each value going to one field only.
 */
function captureFrom(schema: DataField[], text: string, asked: DataField | undefined, captured: Record<string, unknown>, ctx: ParseContext): { field: string; value: unknown }[] {
  const out: { field: string; value: unknown }[] = [];
  const used = new Set<string>();
  const order = asked ? [asked, ...schema.filter((f) => f !== asked)] : schema;
  for (const field of order) {
    const isAsked = field === asked;
    if (!isAsked && captured[field.name] !== undefined) continue;
    // "Are you open on Monday?" names a day but gives no appointment date.
    if (!isAsked && (field.type === 'date' || field.type === 'number') && isQuestion(text)) continue;
    const value = extractField(field, text, isAsked, ctx);
    if (value === undefined || value === null || value === '') continue;
    const key = `${field.type}:${JSON.stringify(value)}`;
    if (used.has(key) || (field.type === 'string' && !isAsked && out.length)) continue;
    used.add(key);
    out.push({ field: field.name, value });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Answering from knowledge

/** Words of a question that do not say what it is about. */
const QUERY_NOISE = terms('information info question questions detail details explain please help like love wonder wondering tell');

interface Answer { text: string; urls: string[] }

/**
 * The 1 to 3 sentences of the passages that best answer the question, or null when nothing is
 * relevant: the best passage (title included) must share at least 40% of the question's content
 * terms (at least one), and each sentence kept must share at least one of them.
 */
export function composeAnswer(question: string, passages: Passage[]): Answer | null {
  const q = new Set([...terms(question)].filter((t) => !QUERY_NOISE.has(t)));
  if (!q.size) return null;
  const needed = Math.max(1, Math.ceil(0.4 * q.size));
  const scored: { sentence: string; url: string; score: number; rank: number; ord: number }[] = [];
  passages.slice(0, 5).forEach((p, rank) => {
    const coverage = overlap(q, terms(`${p.title ?? ''} ${p.text}`)).length;
    if (coverage < needed) return;
    splitSentences(p.text).forEach((sentence, ord) => {
      const hits = overlap(q, terms(sentence)).length;
      if (hits) scored.push({ sentence, url: p.url, score: hits + coverage / (q.size * 2) - rank * 0.01, rank, ord });
    });
  });
  if (!scored.length) return null;
  const best = scored.sort((a, b) => b.score - a.score).slice(0, 3);
  // Keep the passage's own order so the sentences still read as a paragraph.
  best.sort((a, b) => a.rank - b.rank || a.ord - b.ord);
  let text = '';
  for (const s of best) {
    const sentence = truncate(s.sentence, 300);
    if (text && text.length + sentence.length > 500) break;
    text = text ? `${text} ${sentence}` : sentence;
  }
  const urls = [...new Set(best.map((s) => s.url))].slice(0, 2);
  return { text, urls };
}

// ---------------------------------------------------------------------------------------------
// Goals

function steerTopic(goals: string[] | null): SteerTopic | null {
  for (const goal of goals ?? []) {
    const f = fold(goal);
    if (/\bdemo|demonstration/.test(f)) return 'demo';
    if (/\b(book|appointment|meeting|schedule|rendez-vous|reserv)/.test(f)) return 'booking';
    if (/\b(contact|call ?back|lead|rappel|recontact)/.test(f)) return 'contact';
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// The runtime

/**
 * The default runtime: no network, the same answer for the same conversation.
 * @example
 * const runtime = createOfflineRuntime();
 * const turn = await runtime.reply({ agent, messages, captured: {}, contactFacts: {}, language: 'en' }, { searchKnowledge });
 */
export function createOfflineRuntime(options: OfflineRuntimeOptions = {}): AgentRuntime {
  const now = options.now ?? (() => new Date());
  return {
    kind: 'offline',
    async greet(agent, opts) {
      return greetingFor(agent, opts.language || agent.default_language || 'en', opts.contactFacts);
    },
    reply: (input, tools) => replyOffline(input, tools, now),
    async evaluate(input) {
      return evaluateOffline(input, now());
    },
  };
}

async function replyOffline(input: TurnInput, tools: RuntimeTools, now: () => Date): Promise<TurnResult> {
  const { agent, messages } = input;
  const lang = pageLanguage(input.language || agent.default_language);
  const p = PHRASES[lang];
  const captured = { ...input.captured };
  const toolCalls: ToolCall[] = [];
  const record = (name: string, args: Record<string, unknown>) => toolCalls.push({ name, args, ts: now().toISOString() });
  const lastVisitorIndex = lastIndexOf(messages, visitorSide);
  const visitor = messages[lastVisitorIndex];
  if (!visitor?.text.trim()) return { replies: [greetingFor(agent, lang, input.contactFacts)], toolCalls, captured };

  const schema = agent.data_schema ?? [];
  const lastAgent = messages[lastIndexOf(messages.slice(0, lastVisitorIndex), agentSide)]?.text;
  const asked = askedField(schema, lastAgent);
  const ctx: ParseContext = { lang, country: defaultCountry(agent, lang), now: now() };
  const captures = captureFrom(schema, visitor.text, asked, captured, ctx);
  for (const c of captures) {
    captured[c.field] = c.value;
    record('capture_data', { field: c.field, value: c.value });
  }

  const text = visitor.text.trim();
  const f = fold(text);
  const question = isQuestion(text);
  const skip = new Set<string>();
  const parts: string[] = [];
  const followUp = (fallback: string | null) => {
    const next = nextField(schema, captured, messages, skip);
    const topic = steerTopic(agent.goals);
    const steered = topic !== null && messages.some((m) => agentSide(m) && m.text.includes(p.steer[topic!]));
    if (next) parts.push(topic && !steered && !captures.length ? `${p.steer[topic]} ${askFor(next, lang)}` : askFor(next, lang));
    else if (topic && !steered && !captures.length && topic !== 'contact' && schema.length === 0) parts.push(p.steer[topic]);
    else if (fallback) parts.push(fallback);
  };
  const done = () => ({ replies: [parts.join(' ')], toolCalls, captured });

  // A yes/no to our offer of a person, or an explicit request for one.
  const offeredTransfer = lastAgent !== undefined && (lastAgent.includes(p.offerTransfer) || lastAgent.includes(p.declineTransfer));
  if ((offeredTransfer && AFFIRMATIVE.test(f)) || (HANDOFF_REQUEST.test(f) && !captures.length)) {
    if (agent.can_transfer) parts.push(p.handoffYes);
    else {
      parts.push(p.handoffNo);
      const contact = nextField(schema.filter((x) => x.type === 'email' || x.type === 'phone').map((x) => ({ ...x, required: true })), captured, messages, skip);
      parts.push(contact ? p.contactFollowUp(askFor(contact, lang)) : p.offerContact);
    }
    return done();
  }
  if (offeredTransfer && NEGATIVE.test(f) && !question) {
    parts.push(p.declineHandoff);
    followUp(p.anythingElse);
    return done();
  }

  // An answer to the field we asked for: noted, unreadable, or declined.
  if (captures.length && !question) {
    const labels = captures.map((c) => schema.find((x) => x.name === c.field)).filter((x) => x !== undefined).map((x) => fieldLabel(x, lang));
    // "your whether you are a customer" would not read: name the fields only when they are nouns.
    parts.push(p.noted(labels.length <= 2 && labels.every((l) => !/^(whether|if|si)\b/i.test(l)) ? labels : []));
    followUp(p.anythingElse);
    return done();
  }
  if (asked && !captures.length && !question) {
    if (DECLINE_FIELD.test(f) && asked.type !== 'boolean') {
      skip.add(asked.name);
      parts.push(p.skipped(fieldLabel(asked, lang)));
      followUp(p.anythingElse);
      return done();
    }
    const looksLikeAttempt = /[@\d]/.test(text) || text.split(/\s+/).length <= 4;
    if (looksLikeAttempt && asked.type !== 'string' && timesAsked(asked, messages) < 2) {
      parts.push(asked.type === 'boolean' ? askFor(asked, lang) : `${p.notUnderstood(fieldLabel(asked, lang))} ${askFor(asked, lang)}`);
      return done();
    }
  }

  if (GREETING_ONLY.test(f)) {
    parts.push(p.greetingBack);
    return done();
  }
  if (!question && THANKS.test(f) && text.split(/\s+/).length <= 6) {
    parts.push(p.thanks);
    return done();
  }
  if (!question && GOODBYE.test(f)) {
    parts.push(p.goodbye);
    return done();
  }

  const hit = guardrailHit(agent.guardrails, text);
  if (hit) {
    parts.push(p.decline(hit.rule), agent.can_transfer ? p.declineTransfer : p.offerContact);
    return done();
  }

  const query = withoutEmails(text).replace(/\s+/g, ' ').trim().slice(0, 500);
  record('search_knowledge', { query });
  const answer = composeAnswer(query, await tools.searchKnowledge(query, 5));
  if (answer) {
    parts.push(`${answer.text}\n${p.source(answer.urls)}`);
    followUp(null);
    return done();
  }
  // Asking to book with fields to fill: that is the way forward, not an apology.
  if (BOOKING.test(f) && nextField(schema, captured, messages, skip)) {
    parts.push(p.happyToHelp);
    followUp(null);
    return done();
  }
  parts.push(p.dontKnow);
  if (agent.can_transfer) parts.push(p.offerTransfer);
  else {
    const next = nextField(schema, captured, messages, skip);
    parts.push(next ? p.contactFollowUp(askFor(next, lang)) : p.offerContact);
  }
  return done();
}

// ---------------------------------------------------------------------------------------------
// Evaluation

// Patterns that read any runtime's transcript (ours, an LLM's, a human's), in English and French.
const DONT_KNOW = /\b(i don'?t know|i do not know|i'?m not sure|i am not sure|don'?t have (that|this|any|the) information|do not have (that|this|any|the) information|couldn'?t find|could not find|unable to find|no information (on|about)|je ne (sais|connais) pas|je n'ai pas (cette|d')\s?information|je ne suis pas sur)/;
const GROUNDED = /\bsources?\s?:|https?:\/\//;
const DECLINED = /(can'?t help with (that|this)|cannot help with (that|this)|our policy|not (able|allowed) to (discuss|provide|share|quote)|je ne peux pas vous aider|notre politique)/;
const HANDOFF_OFFER = /(connect(ing)? you|transfer(ring)? you|put you in touch|someone from our team|member of our team|mettre en relation|mets en relation|membre de notre equipe)/;
const CONTACT_OFFER = /(leave your|contact details|get back to you|follow up|vos coordonnees|vous recontacter|recontactera|laissez|could you share your|pourriez-vous m'indiquer)/;
const GREETING_WORDS = /^(hi|hello|hey|good (morning|afternoon|evening)|welcome|greetings|bonjour|bonsoir|salut|bienvenue)\b|welcome|bienvenue|how can i help|comment puis-je vous aider/;
const MONEY = /([$€£]\s?\d|\d\s?([$€£]|usd|eur|euros?|dollars?|gbp)\b|\d\s?\/\s?(month|mo|year|yr|an|mois)\b|per (month|year|user|seat))/;
const NOTED = /(i'?ve noted|noted your|j'ai bien note|c'est note|thanks, noted)/;
const RUDE = /\b(stupid|idiot|dumb|shut up|whatever|imbecile|idiote|tais-toi|ta gueule)\b/;

interface Turn { visitor: TranscriptMessage; replies: string[]; question: boolean; kind: 'grounded' | 'dont_know' | 'declined' | 'other' }

interface Analysis {
  agent: RuntimeAgent;
  messages: TranscriptMessage[];
  visitorMessages: TranscriptMessage[];
  agentMessages: TranscriptMessage[];
  turns: Turn[];
  handoffRequested: boolean;
  captured: Record<string, unknown>;
}

function analyze(agent: RuntimeAgent, messages: TranscriptMessage[], captured: Record<string, unknown>): Analysis {
  const turns: Turn[] = [];
  let handoffRequested = messages.some((m) => m.role === 'human_agent');
  let previousAgent = '';
  for (const m of messages) {
    if (visitorSide(m)) {
      const f = fold(m.text);
      const offered = HANDOFF_OFFER.test(fold(previousAgent)) && /\?/.test(previousAgent);
      if (HANDOFF_REQUEST.test(f) || (offered && AFFIRMATIVE.test(f))) handoffRequested = true;
      // A question, or a request stated without a question mark; not data, a booking wish, small talk.
      const asksSomething = isQuestion(m.text) || (!GREETING_ONLY.test(f) && !THANKS.test(f) && !GOODBYE.test(f) && m.text.split(/\s+/).length >= 4
        && !EMAIL.test(m.text) && !AFFIRMATIVE.test(f) && !NEGATIVE.test(f) && !BOOKING.test(f));
      turns.push({ visitor: m, replies: [], question: asksSomething && !HANDOFF_REQUEST.test(f), kind: 'other' });
    } else if (agentSide(m)) {
      previousAgent = m.text;
      const turn = turns.at(-1);
      if (turn) turn.replies.push(m.text);
    }
  }
  for (const turn of turns) {
    const replies = fold(turn.replies.join('\n'));
    if (NOTED.test(replies) && !isQuestion(turn.visitor.text)) turn.question = false;
    turn.kind = DECLINED.test(replies) ? 'declined' : DONT_KNOW.test(replies) ? 'dont_know' : GROUNDED.test(replies) ? 'grounded' : 'other';
  }
  return {
    agent, messages, captured, turns, handoffRequested,
    visitorMessages: messages.filter(visitorSide), agentMessages: messages.filter(agentSide),
  };
}

/** Replays the capture of every visitor message, with the field the agent had asked for at that point. */
function extractFromTranscript(agent: RuntimeAgent, messages: TranscriptMessage[], captured: Record<string, unknown>, now: Date): Record<string, unknown> {
  const schema = agent.data_schema ?? [];
  const lang = agent.default_language ? pageLanguage(agent.default_language) : languageOfText(messages.map((m) => m.text).join(' '));
  const ctx: ParseContext = { lang, country: defaultCountry(agent, lang), now };
  const found: Record<string, unknown> = {};
  let lastAgent: string | undefined;
  for (const m of messages) {
    if (agentSide(m)) lastAgent = m.text;
    if (!visitorSide(m)) continue;
    for (const c of captureFrom(schema, m.text, askedField(schema, lastAgent), found, ctx)) found[c.field] ??= c.value;
  }
  const out: Record<string, unknown> = {};
  for (const field of schema) {
    const value = captured[field.name] ?? found[field.name];
    if (value !== undefined && value !== null) out[field.name] = value;
  }
  return out;
}

type Judgement = { verdict: Verdict; reason: string };

/**
 * The verdict on one goal or acceptance criterion, by the first heuristic that recognises it:
 *
 * 1. Greeting ("Greets the visitor"): pass when the first message is the agent's and reads as a
 *    greeting; not_applicable without any agent message.
 * 2. A prohibition with a topic ("Never quotes prices"): not_applicable when nobody touched the
 *    topic; fail when an agent message (other than a refusal) went into it (for prices: stated an
 *    amount); pass otherwise.
 * 3. Not knowing ("Admits when it does not know and offers a transfer"): not_applicable when the
 *    agent always knew; pass when every "I don't know" was honest and, if the criterion asks for
 *    it, came with an offer of a person or of a call back.
 * 4. Handoff ("Transfers to a human when asked"): not_applicable unless the visitor asked for a
 *    person; pass when the agent then offered or made the connection.
 * 5. Capturing data (names a data_schema field, an email, a phone, contact details): not_applicable
 *    without any visitor message; pass when the values were captured.
 * 6. Booking ("Book a demo"): not_applicable when nobody mentioned booking; pass when the contact
 *    data needed to follow up (the required fields, else an email or phone) was captured.
 * 7. Answering ("Answers questions from the knowledge base"): not_applicable without a question;
 *    pass when every question got a grounded answer (a source cited) or a policy refusal.
 * 8. Language ("Replies in French"): pass when the agent's messages read in that language.
 * 9. Tone ("Is polite"): pass unless an agent message is rude.
 * 10. Anything else: its content words; not_applicable when the conversation never used them,
 *     pass when the agent's messages did, fail when only the visitor's did.
 */
function judge(criterion: string, a: Analysis): Judgement {
  const c = fold(criterion);
  const agentText = a.agentMessages.map((m) => fold(m.text));
  const allText = a.messages.map((m) => fold(m.text)).join('\n');
  const questions = a.turns.filter((t) => t.question);
  const schema = a.agent.data_schema ?? [];

  if (/\b(greet\w*|welcome\w*|salue\w*|accueil\w*)\b/.test(c)) {
    const first = a.messages.find((m) => agentSide(m) || visitorSide(m));
    if (!a.agentMessages.length) return { verdict: 'not_applicable', reason: 'the agent sent no message' };
    return first && agentSide(first) && GREETING_WORDS.test(fold(first.text).trim())
      ? { verdict: 'pass', reason: 'the conversation opens with the agent greeting the visitor' }
      : { verdict: 'fail', reason: 'the first message is not a greeting from the agent' };
  }

  const topics = topicsOf(criterion);
  if (PROHIBITION.test(c) && topics.size) {
    const matchers = TOPIC_MATCHERS.filter(([t]) => topics.has(t)).map(([, re]) => re);
    if (!matchers.some((re) => re.test(allText))) return { verdict: 'not_applicable', reason: `the conversation never touched ${[...topics].join(', ')}` };
    const breach = agentText.find((t) => !DECLINED.test(t) && (topics.has('pricing') ? MONEY.test(t) : matchers.some((re) => re.test(t))));
    return breach
      ? { verdict: 'fail', reason: `an agent message went into ${[...topics].join(', ')}: "${truncate(breach, 80)}"` }
      : { verdict: 'pass', reason: `${[...topics].join(', ')} came up and the agent stayed within the rule` };
  }

  if (/(don'?t know|do not know|does not know|doesn'?t know|not know|unknown|can'?t answer|cannot answer|unable to answer|no answer|honest|admit|ne sait pas|ne connait pas)/.test(c)) {
    const unknown = a.turns.filter((t) => t.kind === 'dont_know');
    if (!unknown.length) return { verdict: 'not_applicable', reason: 'the agent never had to say it did not know' };
    const wantsOffer = /(transfer|human|person|team|contact|offer|escalat|hand ?off|relation|conseiller)/.test(c);
    const bare = unknown.filter((t) => !HANDOFF_OFFER.test(fold(t.replies.join(' '))) && !CONTACT_OFFER.test(fold(t.replies.join(' '))));
    return wantsOffer && bare.length
      ? { verdict: 'fail', reason: `${bare.length} "I don't know" without an offer of a person or a call back` }
      : { verdict: 'pass', reason: `the agent said honestly it did not know${wantsOffer ? ' and offered a next step' : ''}` };
  }

  if (/\b(transfer\w*|hand ?off|handover|human|escalat\w*|live agent|(a|real) person|mise en relation|conseiller|humain)\b/.test(c)) {
    if (!a.handoffRequested) return { verdict: 'not_applicable', reason: 'the visitor never asked for a person' };
    const offered = a.messages.some((m) => m.role === 'human_agent') || agentText.some((t) => HANDOFF_OFFER.test(t));
    return offered
      ? { verdict: 'pass', reason: 'the visitor asked for a person and the agent connected or offered to connect them' }
      : { verdict: 'fail', reason: 'the visitor asked for a person and was not offered one' };
  }

  const fields = referencedFields(c, schema);
  if (fields) {
    if (!a.visitorMessages.length) return { verdict: 'not_applicable', reason: 'the visitor never wrote' };
    if (!fields.list.length) {
      const any = a.visitorMessages.some((m) => EMAIL.test(m.text) || (fields.kind === 'any' && /\+?\d[\d\s().-]{7,}\d/.test(m.text)));
      return any ? { verdict: 'pass', reason: 'the visitor gave their contact details' } : { verdict: 'fail', reason: 'no contact details were given' };
    }
    const got = fields.list.filter((f) => a.captured[f.name] !== undefined);
    const ok = fields.kind === 'any' ? got.length > 0 : got.length === fields.list.length;
    const missing = fields.list.filter((f) => a.captured[f.name] === undefined).map((f) => f.name);
    return ok
      ? { verdict: 'pass', reason: `captured ${got.map((f) => f.name).join(', ')}` }
      : { verdict: 'fail', reason: `not captured: ${missing.join(', ')}` };
  }

  if (BOOKING.test(c)) {
    const touched = a.visitorMessages.some((m) => BOOKING.test(fold(m.text))) || agentText.some((t) => BOOKING.test(t));
    if (!touched) return { verdict: 'not_applicable', reason: 'booking never came up' };
    const required = schema.filter((f) => f.required);
    const contactFields = schema.filter((f) => f.type === 'email' || f.type === 'phone');
    const ok = required.length
      ? required.every((f) => a.captured[f.name] !== undefined)
      : contactFields.length ? contactFields.some((f) => a.captured[f.name] !== undefined) : a.visitorMessages.some((m) => EMAIL.test(m.text));
    return ok
      ? { verdict: 'pass', reason: 'booking came up and the details to follow up were captured' }
      : { verdict: 'fail', reason: 'booking came up but the details to follow up were not all captured' };
  }

  if (/\b(answer\w*|question\w*|accura\w*|grounded|knowledge|source\w*|cite\w*|inform\w*|repond\w*|reponse\w*)\b/.test(c)) {
    if (!questions.length) return { verdict: 'not_applicable', reason: 'the visitor asked no question' };
    const unanswered = questions.filter((t) => t.kind !== 'grounded' && t.kind !== 'declined');
    return unanswered.length
      ? { verdict: 'fail', reason: `${unanswered.length} of ${questions.length} questions got no grounded answer` }
      : { verdict: 'pass', reason: `${questions.length} question(s) answered from the agent's knowledge` };
  }

  const language = /\b(french|francais)\b/.test(c) ? 'fr' : /\b(english|anglais)\b/.test(c) ? 'en' : /\b(language|langue)\b/.test(c) ? 'visitor' : null;
  if (language) {
    if (!a.agentMessages.length) return { verdict: 'not_applicable', reason: 'the agent sent no message' };
    const wanted = language === 'visitor' ? (a.visitorMessages.length ? languageOfText(a.visitorMessages.map((m) => m.text).join(' ')) : null) : language;
    if (!wanted) return { verdict: 'not_applicable', reason: 'the visitor never wrote' };
    const inLanguage = a.agentMessages.filter((m) => languageOfText(m.text) === wanted).length;
    return inLanguage * 2 >= a.agentMessages.length
      ? { verdict: 'pass', reason: `the agent replied in ${wanted}` }
      : { verdict: 'fail', reason: `the agent did not reply in ${wanted}` };
  }

  if (/\b(polite\w*|friendly|courteous|professional\w*|tone|respectful|poli|polie|courtois\w*|aimable)\b/.test(c)) {
    if (!a.agentMessages.length) return { verdict: 'not_applicable', reason: 'the agent sent no message' };
    const rude = agentText.find((t) => RUDE.test(t));
    return rude ? { verdict: 'fail', reason: 'an agent message is rude' } : { verdict: 'pass', reason: 'the agent stayed polite' };
  }

  const words = [...terms(criterion)].filter((t) => !RULE_WORDS.has(t) && t.length >= 3);
  const inAgent = words.filter((w) => a.agentMessages.some((m) => terms(m.text).has(w)));
  const inVisitor = words.filter((w) => a.visitorMessages.some((m) => terms(m.text).has(w)));
  if (!inAgent.length && !inVisitor.length) return { verdict: 'not_applicable', reason: 'the conversation never touched this' };
  return inAgent.length
    ? { verdict: 'pass', reason: `the agent addressed ${inAgent.slice(0, 3).join(', ')}` }
    : { verdict: 'fail', reason: `the visitor raised ${inVisitor.slice(0, 3).join(', ')} but the agent did not address it` };
}

/** The data_schema fields a criterion talks about, or null when it is not about capturing data. */
function referencedFields(c: string, schema: DataField[]): { list: DataField[]; kind: 'all' | 'any' } | null {
  const named = schema.filter((f) => {
    const name = fold(humanize(f.name));
    return new RegExp(`\\b${escapeRegExp(name)}\\b`).test(c) || c.includes(fold(f.name));
  });
  const byType = schema.filter((f) => (f.type === 'email' && /\be-?mail/.test(c)) || (f.type === 'phone' && /\b(phone|telephone|mobile)\b/.test(c)));
  const list = [...new Set([...named, ...byType])];
  if (list.length) return { list, kind: 'all' };
  if (/\b(contact (details|info\w*)|coordonnees|lead)\b/.test(c) || (/\b(e-?mail|phone|telephone)\b/.test(c))) {
    return { list: schema.filter((f) => f.type === 'email' || f.type === 'phone'), kind: 'any' };
  }
  if (/\b(captur\w*|collect\w*|gather\w*|qualif\w*|recueill\w*|collecte\w*)\b/.test(c) && schema.length) {
    return { list: schema.filter((f) => f.required).length ? schema.filter((f) => f.required) : schema, kind: 'all' };
  }
  return null;
}

const FR_MARKERS = new Set('le la les des est vous nous une et pour pas je votre avec sur merci bonjour que qui dans'.split(' '));
const EN_MARKERS = new Set('the is are you we a an and for not i your with on thanks hello that who in to'.split(' '));

function languageOfText(text: string): Lang {
  const words = fold(text).split(/[^a-z']+/);
  const fr = words.filter((w) => FR_MARKERS.has(w)).length;
  const en = words.filter((w) => EN_MARKERS.has(w)).length;
  return fr > en ? 'fr' : 'en';
}

const INTENTS: [string, RegExp][] = [
  ['book_demo', BOOKING],
  ['pricing_question', TOPIC_MATCHERS.find(([t]) => t === 'pricing')![1]],
  ['support_request', /\b(help|problem|issue|error|broken|not working|doesn'?t work|bug|support|crash\w*|fix|trouble|panne|probleme|erreur|marche pas|fonctionne pas|bloque)\b/],
  ['contact_request', /\b(contact|call me|email me|reach (me|you)|get in touch|call back|human|person|someone|speak (to|with)|talk to|rappel\w*|contacter|joindre|conseiller)\b/],
];

/** A snake_case label of what the visitor wanted, from keywords: the first family that matches, in priority order. */
export function intentOf(messages: TranscriptMessage[]): string {
  const visitorText = messages.filter(visitorSide).map((m) => fold(m.text)).join('\n');
  if (!visitorText.trim()) return 'other';
  for (const [intent, re] of INTENTS) if (re.test(visitorText)) return intent;
  return messages.some((m) => visitorSide(m) && isQuestion(m.text)) ? 'general_question' : 'other';
}

/**
 * abandoned: no visitor message; handoff_requested: the visitor asked for a person. Otherwise the
 * last thing that settled a turn decides: a grounded answer (unless the visitor asked the same
 * again later) or the completion of the required data make it resolved; "I don't know" or a
 * refusal make it unresolved; nothing settled at all is unresolved.
 */
function outcomeOf(a: Analysis): Outcome {
  if (!a.visitorMessages.length) return 'abandoned';
  if (a.handoffRequested) return 'handoff_requested';
  const required = (a.agent.data_schema ?? []).filter((f) => f.required);
  const dataComplete = required.length > 0 && required.every((f) => a.captured[f.name] !== undefined);
  // The same question asked again after a grounded answer, and not answered differently this time.
  const repeated = new Set(a.turns.filter((t, j) => t.question && a.turns.slice(0, j).some((before) => before.kind === 'grounded'
    && before.question && similar(before.visitor.text, t.visitor.text) && (t.kind !== 'grounded' || t.replies.join() === before.replies.join()))));
  let last: 'good' | 'bad' | null = null;
  a.turns.forEach((t) => {
    if (repeated.has(t)) last = 'bad';
    else if (t.kind === 'grounded') last = 'good';
    else if (t.kind === 'dont_know' || t.kind === 'declined') last = 'bad';
    else if (dataComplete && NOTED.test(fold(t.replies.join(' ')))) last = 'good';
  });
  return last === 'good' ? 'resolved' : 'unresolved';
}

function similar(x: string, y: string): boolean {
  const a = terms(x);
  const b = terms(y);
  if (!a.size || !b.size) return false;
  return overlap(a, b).length / Math.min(a.size, b.size) >= 0.6;
}

/**
 * Evaluates a finished conversation without a model: extracted_data from what was captured plus
 * what the transcript holds, a verdict per goal and acceptance criterion (heuristics on `judge`),
 * the visitor's intent and the outcome. The LLM runtime falls back to it.
 */
export function evaluateOffline(input: { agent: RuntimeAgent; messages: TranscriptMessage[]; captured: Record<string, unknown> }, now: Date = new Date()): Evaluation {
  const extracted = extractFromTranscript(input.agent, input.messages, input.captured, now);
  const analysis = analyze(input.agent, input.messages, { ...input.captured, ...extracted });
  const criteria = [...(input.agent.goals ?? []), ...(input.agent.acceptance_criteria ?? [])];
  return {
    extracted_data: extracted,
    criteria_results: criteria.map((criterion) => ({ criterion, ...judge(criterion, analysis) })),
    intent: intentOf(input.messages),
    outcome: outcomeOf(analysis),
  };
}
