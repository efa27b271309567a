import { askedField, captureFrom, humanize } from './capture.ts';
import { PROHIBITION, RULE_WORDS, TOPIC_MATCHERS, topicsOf } from './guardrails.ts';
import { defaultCountry, EMAIL, type ParseContext } from './parsers.ts';
import { languageOfText, pageLanguage } from '../answers/phrases.ts';
import {
  AFFIRMATIVE, agentSide, BOOKING, GOODBYE, GREETING_ONLY, HANDOFF_OFFER, HANDOFF_REQUEST, isQuestion, NEGATIVE, THANKS, visitorSide,
} from './signals.ts';
import { trackingLabels } from './tracking.ts';
import { escapeRegExp, fold, overlap, terms, truncate } from '../answers/text.ts';
import type { DataField, Evaluation, Outcome, RuntimeAgent, TranscriptMessage, Verdict } from './types.ts';

/**
 * Evaluation without a model: what a finished conversation captured, a verdict per goal and
 * acceptance criterion, the visitor's intent and the outcome. Both runtimes use it (the LLM one
 * as its fallback).
 */

// Patterns that read any runtime's transcript (ours, an LLM's, a human's), in English and French.
const DONT_KNOW = /\b(i don'?t know|i do not know|i'?m not sure|i am not sure|don'?t have (that|this|any|the) information|do not have (that|this|any|the) information|couldn'?t find|could not find|unable to find|no information (on|about)|je ne (sais|connais) pas|je n'ai pas (cette|d')\s?information|je ne suis pas sur)/;
const GROUNDED = /\bsources?\s?:|https?:\/\//;
const DECLINED = /(can'?t help with (that|this)|cannot help with (that|this)|our policy|not (able|allowed) to (discuss|provide|share|quote)|je ne peux pas vous aider|notre politique)/;
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

/** What every rule reads: the criterion (raw and folded) and the analysed conversation. */
interface Case { criterion: string; c: string; a: Analysis; agentText: string[] }

/**
 * One heuristic of `judge`: `match` says whether it recognises the criterion and hands its
 * judgement what it found there (topics, fields, a language); `judge` gives the verdict.
 */
interface Rule<T> { name: string; match(k: Case): T | null | undefined | false; judge(k: Case, found: T): Judgement }

const rule = <T>(r: Rule<T>): Rule<unknown> => r as Rule<unknown>;
const NA = (reason: string): Judgement => ({ verdict: 'not_applicable', reason });
const verdict = (ok: boolean, pass: string, fail: string): Judgement => (ok ? { verdict: 'pass', reason: pass } : { verdict: 'fail', reason: fail });

/**
 * The verdict on one goal or acceptance criterion comes from the first rule that recognises it,
 * in this order:
 *
 * 1. greeting ("Greets the visitor"): pass when the first message is the agent's and reads as a
 *    greeting; not_applicable without any agent message.
 * 2. prohibition with a topic ("Never quotes prices"): not_applicable when nobody touched the
 *    topic; fail when an agent message (other than a refusal) went into it (for prices: stated an
 *    amount); pass otherwise.
 * 3. not knowing ("Admits when it does not know and offers a transfer"): not_applicable when the
 *    agent always knew; pass when every "I don't know" was honest and, if the criterion asks for
 *    it, came with an offer of a person or of a call back.
 * 4. handoff ("Transfers to a human when asked"): not_applicable unless the visitor asked for a
 *    person; pass when the agent then offered or made the connection.
 * 5. capturing data (names a data_schema field, an email, a phone, contact details): not_applicable
 *    without any visitor message; pass when the values were captured.
 * 6. booking ("Book a demo"): not_applicable when nobody mentioned booking; pass when the contact
 *    data needed to follow up (the required fields, else an email or phone) was captured.
 * 7. answering ("Answers questions from the knowledge base"): not_applicable without a question;
 *    pass when every question got a grounded answer (a source cited) or a policy refusal.
 * 8. language ("Replies in French"): pass when the agent's messages read in that language.
 * 9. tone ("Is polite"): pass unless an agent message is rude.
 * 10. anything else (`judgeByWords`): its content words; not_applicable when the conversation
 *     never used them, pass when the agent's messages did, fail when only the visitor's did.
 */
const RULES: Rule<unknown>[] = [
  rule({
    name: 'greeting',
    match: ({ c }) => /\b(greet\w*|welcome\w*|salue\w*|accueil\w*)\b/.test(c),
    judge: ({ a }) => {
      const first = a.messages.find((m) => agentSide(m) || visitorSide(m));
      if (!a.agentMessages.length) return NA('the agent sent no message');
      return verdict(!!first && agentSide(first) && GREETING_WORDS.test(fold(first.text).trim()),
        'the conversation opens with the agent greeting the visitor', 'the first message is not a greeting from the agent');
    },
  }),
  rule<Set<string>>({
    name: 'prohibition',
    match: ({ criterion, c }) => {
      const topics = topicsOf(criterion);
      return PROHIBITION.test(c) && topics.size > 0 && topics;
    },
    judge: ({ a, agentText }, topics) => {
      const matchers = TOPIC_MATCHERS.filter(([t]) => topics.has(t)).map(([, re]) => re);
      const named = [...topics].join(', ');
      const allText = a.messages.map((m) => fold(m.text)).join('\n');
      if (!matchers.some((re) => re.test(allText))) return NA(`the conversation never touched ${named}`);
      const breach = agentText.find((t) => !DECLINED.test(t) && (topics.has('pricing') ? MONEY.test(t) : matchers.some((re) => re.test(t))));
      return verdict(!breach, `${named} came up and the agent stayed within the rule`, `an agent message went into ${named}: "${truncate(breach ?? '', 80)}"`);
    },
  }),
  rule({
    name: 'not knowing',
    match: ({ c }) => /(don'?t know|do not know|does not know|doesn'?t know|not know|unknown|can'?t answer|cannot answer|unable to answer|no answer|honest|admit|ne sait pas|ne connait pas)/.test(c),
    judge: ({ c, a }) => {
      const unknown = a.turns.filter((t) => t.kind === 'dont_know');
      if (!unknown.length) return NA('the agent never had to say it did not know');
      const wantsOffer = /(transfer|human|person|team|contact|offer|escalat|hand ?off|relation|conseiller)/.test(c);
      const bare = unknown.filter((t) => !HANDOFF_OFFER.test(fold(t.replies.join(' '))) && !CONTACT_OFFER.test(fold(t.replies.join(' '))));
      return verdict(!(wantsOffer && bare.length), `the agent said honestly it did not know${wantsOffer ? ' and offered a next step' : ''}`,
        `${bare.length} "I don't know" without an offer of a person or a call back`);
    },
  }),
  rule({
    name: 'handoff',
    match: ({ c }) => /\b(transfer\w*|hand ?off|handover|human|escalat\w*|live agent|(a|real) person|mise en relation|conseiller|humain)\b/.test(c),
    judge: ({ a, agentText }) => {
      if (!a.handoffRequested) return NA('the visitor never asked for a person');
      return verdict(a.messages.some((m) => m.role === 'human_agent') || agentText.some((t) => HANDOFF_OFFER.test(t)),
        'the visitor asked for a person and the agent connected or offered to connect them', 'the visitor asked for a person and was not offered one');
    },
  }),
  rule<{ list: DataField[]; kind: 'all' | 'any' }>({
    name: 'capturing data',
    match: ({ c, a }) => referencedFields(c, a.agent.data_schema ?? []),
    judge: ({ a }, fields) => {
      if (!a.visitorMessages.length) return NA('the visitor never wrote');
      if (!fields.list.length) {
        const any = a.visitorMessages.some((m) => EMAIL.test(m.text) || (fields.kind === 'any' && /\+?\d[\d\s().-]{7,}\d/.test(m.text)));
        return verdict(any, 'the visitor gave their contact details', 'no contact details were given');
      }
      const got = fields.list.filter((f) => a.captured[f.name] !== undefined);
      const missing = fields.list.filter((f) => a.captured[f.name] === undefined).map((f) => f.name);
      return verdict(fields.kind === 'any' ? got.length > 0 : got.length === fields.list.length,
        `captured ${got.map((f) => f.name).join(', ')}`, `not captured: ${missing.join(', ')}`);
    },
  }),
  rule({
    name: 'booking',
    match: ({ c }) => BOOKING.test(c),
    judge: ({ a, agentText }) => {
      const touched = a.visitorMessages.some((m) => BOOKING.test(fold(m.text))) || agentText.some((t) => BOOKING.test(t));
      if (!touched) return NA('booking never came up');
      const schema = a.agent.data_schema ?? [];
      const required = schema.filter((f) => f.required);
      const contactFields = schema.filter((f) => f.type === 'email' || f.type === 'phone');
      const ok = required.length
        ? required.every((f) => a.captured[f.name] !== undefined)
        : contactFields.length ? contactFields.some((f) => a.captured[f.name] !== undefined) : a.visitorMessages.some((m) => EMAIL.test(m.text));
      return verdict(ok, 'booking came up and the details to follow up were captured', 'booking came up but the details to follow up were not all captured');
    },
  }),
  rule({
    name: 'answering',
    match: ({ c }) => /\b(answer\w*|question\w*|accura\w*|grounded|knowledge|source\w*|cite\w*|inform\w*|repond\w*|reponse\w*)\b/.test(c),
    judge: ({ a }) => {
      const questions = a.turns.filter((t) => t.question);
      if (!questions.length) return NA('the visitor asked no question');
      const unanswered = questions.filter((t) => t.kind !== 'grounded' && t.kind !== 'declined');
      return verdict(!unanswered.length, `${questions.length} question(s) answered from the agent's knowledge`,
        `${unanswered.length} of ${questions.length} questions got no grounded answer`);
    },
  }),
  rule<'fr' | 'en' | 'visitor'>({
    name: 'language',
    match: ({ c }) => (/\b(french|francais)\b/.test(c) ? 'fr' : /\b(english|anglais)\b/.test(c) ? 'en' : /\b(language|langue)\b/.test(c) ? 'visitor' : null),
    judge: ({ a }, language) => {
      if (!a.agentMessages.length) return NA('the agent sent no message');
      const wanted = language === 'visitor' ? (a.visitorMessages.length ? languageOfText(a.visitorMessages.map((m) => m.text).join(' ')) : null) : language;
      if (!wanted) return NA('the visitor never wrote');
      const inLanguage = a.agentMessages.filter((m) => languageOfText(m.text) === wanted).length;
      return verdict(inLanguage * 2 >= a.agentMessages.length, `the agent replied in ${wanted}`, `the agent did not reply in ${wanted}`);
    },
  }),
  rule({
    name: 'tone',
    match: ({ c }) => /\b(polite\w*|friendly|courteous|professional\w*|tone|respectful|poli|polie|courtois\w*|aimable)\b/.test(c),
    judge: ({ a, agentText }) => {
      if (!a.agentMessages.length) return NA('the agent sent no message');
      return verdict(!agentText.some((t) => RUDE.test(t)), 'the agent stayed polite', 'an agent message is rude');
    },
  }),
];

/** The last resort: the criterion's content words, in the agent's messages or only in the visitor's. */
function judgeByWords({ criterion, a }: Case): Judgement {
  const words = [...terms(criterion)].filter((t) => !RULE_WORDS.has(t) && t.length >= 3);
  const inAgent = words.filter((w) => a.agentMessages.some((m) => terms(m.text).has(w)));
  const inVisitor = words.filter((w) => a.visitorMessages.some((m) => terms(m.text).has(w)));
  if (!inAgent.length && !inVisitor.length) return NA('the conversation never touched this');
  return verdict(inAgent.length > 0, `the agent addressed ${inAgent.slice(0, 3).join(', ')}`,
    `the visitor raised ${inVisitor.slice(0, 3).join(', ')} but the agent did not address it`);
}

function judge(criterion: string, a: Analysis): Judgement {
  const k: Case = { criterion, c: fold(criterion), a, agentText: a.agentMessages.map((m) => fold(m.text)) };
  for (const r of RULES) {
    const found = r.match(k);
    if (found !== null && found !== undefined && found !== false) return r.judge(k, found);
  }
  return judgeByWords(k);
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
  const labels = trackingLabels(input.agent, input.messages);
  return {
    extracted_data: extracted,
    criteria_results: criteria.map((criterion) => ({ criterion, ...judge(criterion, analysis) })),
    intent: intentOf(input.messages),
    outcome: outcomeOf(analysis),
    ...(labels ? { labels } : {}),
  };
}
