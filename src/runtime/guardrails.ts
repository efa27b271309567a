import { fold, phraseMatcher, terms } from '../answers/text.ts';

/** Guardrails: which prohibition a request runs into, by topic synonym groups or shared subject words. */

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
export const TOPIC_MATCHERS = Object.entries(TOPICS).map(([topic, words]) => [topic, phraseMatcher(words)] as const);

export function topicsOf(text: string): Set<string> {
  const f = fold(text);
  return new Set(TOPIC_MATCHERS.filter(([, re]) => re.test(f)).map(([topic]) => topic));
}

export const PROHIBITION = /\b(never|not|don'?t|no|avoid|refuse|mustn'?t|cannot|can'?t|shouldn'?t|forbidden|prohibited|jamais|ne|pas|aucun|aucune|interdit|eviter|evite|refuser|refuse)\b/;
/** Words of a guardrail that say how, not what: they never make a request match a rule. */
export const RULE_WORDS = terms(`never always discuss discussing give giving provide providing share sharing mention mentioning talk talking answer answering
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
