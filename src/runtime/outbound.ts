import { languageOfText, pageLanguage, renderTemplate, type Lang } from '../answers/phrases.ts';
import { fold } from '../answers/text.ts';
import type { OutboundCall, RuntimeAgent } from './types.ts';

/**
 * A call the agent placed (a campaign call, issue 43): how it opens, what the callee's usual
 * answers to a cold call mean (who is this, why are you calling, not interested, take me off your
 * list, call me later), and what the agent says to each. Pure: the campaign side acts on them.
 */

/** When the callee asked to be called back: a clock time (their own), a delay, or nothing said ("later"). */
export type CallbackTime = { hour: number; minute: number } | { inSeconds: number } | null;

export type OutboundIntent =
  | { kind: 'identify' }
  | { kind: 'not_interested' }
  | { kind: 'do_not_call' }
  | { kind: 'callback'; at: CallbackTime };

// Each reads folded text (lower case, no accents, plain apostrophes).
const DO_NOT_CALL = new RegExp([
  String.raw`\b(take|remove|delete|scratch|cross|get) (me|my (phone )?number|this number) (off|from|out of)\b`,
  String.raw`\b(put|add) (me|my number|this number) (on|to) (your|the) do[- ]not[- ]call`,
  String.raw`\b(don'?t|do not|never|stop|quit) (ever )?(call|calling|phone|phoning|ring|ringing) (me|us|this number|here)( again| anymore| any more|$|\b)`,
  String.raw`\bdo[- ]not[- ]call list\b`, String.raw`\bno more calls\b`, String.raw`\bunsubscribe\b`, String.raw`\blose my number\b`,
  String.raw`\bne (me |nous )?(rappelez|appelez|telephonez) (plus|jamais)`, String.raw`\bne m'appelez plus\b`,
  String.raw`\b(retirez|supprimez|rayez|enlevez)[- ](moi|mon numero)`, String.raw`\bplus (jamais )?d'appels?\b`, String.raw`\bbloctel\b`,
  String.raw`\bliste (rouge|d'opposition)\b`, String.raw`\barretez de m'appeler\b`,
].join('|'));

const CALLBACK = new RegExp([
  String.raw`\b(call|ring|phone) (me |us )?(back )?(later|tomorrow|another time|some other time|tonight|this (afternoon|evening)|next week|in (an?|one|two|three|\d+) (hours?|minutes?|mins?)|at \d|around \d|after \d)`,
  String.raw`\b(call|ring|phone) me back\b`, String.raw`\bcan you call (me )?(back|later|again)\b`, String.raw`\b(not a good time|bad time|busy right now|in a meeting|driving right now)\b`,
  String.raw`\brappele[zr]?(-| )?(moi|nous)?\b`, String.raw`\b(pas le bon moment|mauvais moment|je suis occupe|je suis en reunion|je conduis)\b`,
  String.raw`\bappelez(-| )moi (plus tard|demain|ce soir|a \d|vers \d|dans)`,
].join('|'));

const NOT_INTERESTED = new RegExp([
  String.raw`\bnot interested\b`, String.raw`\bno,? thanks?( you)?\b`, String.raw`\bnot for me\b`, String.raw`\bi'?m (good|fine|all set),? thanks?\b`,
  String.raw`\b(i |we )?(don'?t|do not) (want|need) (it|that|this|anything|any)\b`, String.raw`\bno interest\b`,
  String.raw`\b(ca|cela) ne (m'|nous )?interesse pas\b`, String.raw`\bpas interesse`, String.raw`\bnon,? merci\b`, String.raw`\bje n'ai (pas|aucun) besoin\b`,
  String.raw`\bsans (facon|interet)\b`,
].join('|'));

const IDENTIFY = new RegExp([
  String.raw`\bwho (is|'s|was) (this|that|calling|speaking|on the (line|phone))\b`, String.raw`\bwho are you\b`, String.raw`\bwho am i (speaking|talking) (to|with)\b`,
  String.raw`\bwho'?s calling\b`, String.raw`\bwhat (company|business|firm)\b`, String.raw`\bwhere are you calling from\b`, String.raw`\bwho do you (work for|represent)\b`,
  String.raw`\bwhy (are|r) (you|u) calling\b`, String.raw`\bwhy did you call\b`, String.raw`\bwhat('s| is) (this|it|the call|your call) (about|regarding|for)\b`,
  String.raw`\bwhat do you want\b`, String.raw`\b(the )?reason (for|of) (the|your|this) call\b`, String.raw`\bwhat are you calling (about|for)\b`,
  String.raw`\bqui (est a l'appareil|est-ce|est ce|etes-vous|etes vous|appelle|m'appelle|parle|est en ligne)\b`, String.raw`\bc'est qui\b`,
  String.raw`\bde la part de qui\b`, String.raw`\bquelle (societe|entreprise)\b`, String.raw`\bvous etes qui\b`,
  String.raw`\bpourquoi (est-ce que )?(vous )?(m'appelez|appelez|cet appel|m'avez appele)`, String.raw`\bc'est (a quel sujet|pour quoi|pourquoi|a propos de quoi)\b`,
  String.raw`\ba quel sujet\b`, String.raw`\bquel est l'objet\b`, String.raw`\bque (voulez|me voulez)-vous\b`, String.raw`\bqu'est-ce que vous (voulez|me voulez)\b`,
].join('|'));

/** A callee who only picks up ("Hello?", "Hello? Hello?", "Allô ?", "Yes?"): they are told who calls and why. */
const PICK_UP = /^(?:(?:hi|hello|hey|hallo|allo|bonjour|yes|yeah|oui|speaking|good (?:morning|afternoon|evening))[\s!?.,]*)+$/;

/** The callee's words as a cold call's usual answers, or null (then the runtime answers as on any call). */
export function outboundIntent(text: string): OutboundIntent | null {
  const f = fold(text);
  // "Don't call me again" before "call me": asking never to be called wins over any callback in the same breath.
  if (DO_NOT_CALL.test(f)) return { kind: 'do_not_call' };
  if (CALLBACK.test(f)) return { kind: 'callback', at: callbackTime(f) };
  if (NOT_INTERESTED.test(f)) return { kind: 'not_interested' };
  if (IDENTIFY.test(f) || PICK_UP.test(f.trim())) return { kind: 'identify' };
  return null;
}

const NUMBER_WORDS: Record<string, number> = { a: 1, an: 1, one: 1, two: 2, three: 3, un: 1, une: 1, deux: 2, trois: 3 };

/** "at 5", "at 5:30 pm", "around 17h", "à 17 h 30", "in 2 hours", "dans 30 minutes", "tomorrow": when to call back. */
export function callbackTime(folded: string): CallbackTime {
  const rel = /\b(?:in|dans) (an?|one|two|three|un|une|deux|trois|\d+) (hours?|heures?|minutes?|mins?)\b/.exec(folded);
  if (rel) {
    const n = NUMBER_WORDS[rel[1]!] ?? Number(rel[1]);
    return { inSeconds: n * (/^h/.test(rel[2]!) ? 3600 : 60) };
  }
  const clock = /\b(?:at|around|about|after|a|vers|apres)\s+(\d{1,2})(?:\s*(?:[:.]|h)\s*(\d{2}))?\s*(a\.?m\.?|p\.?m\.?|o'?clock|h|heures?)?(?![\d])/.exec(folded)
    ?? /\b(\d{1,2})(?::(\d{2}))?\s*(a\.?m\.?|p\.?m\.?)(?![a-z])/.exec(folded);
  if (clock) {
    let hour = Number(clock[1]);
    const minute = clock[2] ? Number(clock[2]) : 0;
    const meridiem = clock[3]?.replace(/\./g, '') ?? '';
    if (hour > 23 || minute > 59) return null;
    if (meridiem === 'pm' && hour < 12) hour += 12;
    else if (meridiem === 'am' && hour === 12) hour = 0;
    // "At 5" on a business call is five in the afternoon: 1 to 7 without am are afternoon hours.
    else if (meridiem !== 'am' && hour >= 1 && hour <= 7) hour += 12;
    return { hour, minute };
  }
  if (/\b(tomorrow|demain)\b/.test(folded)) return { inSeconds: 86_400 };
  return null;
}

/** The language of the callee's words when they are French, else the conversation's. */
export function replyLanguage(text: string, language: string | null | undefined): Lang {
  return languageOfText(text) === 'fr' ? 'fr' : pageLanguage(language);
}

/** "from Acme" when the agent's config names its business (`business_name` or `company_name`). */
export function businessOf(agent: Pick<RuntimeAgent, 'config_variables'>): string | null {
  const vars = agent.config_variables ?? {};
  const name = vars.business_name ?? vars.company_name ?? vars.company ?? null;
  return typeof name === 'string' && name.trim() ? name.trim() : null;
}

/** "I'm calling to confirm..." / "I'm calling about your renewal": the objective as the reason of the call. */
function reasonOf(objective: string, lang: Lang): string {
  const o = objective.trim().replace(/[.!]+$/, '');
  if (lang === 'fr') {
    return /^(pour|au sujet|concernant|a propos|à propos|car|parce|afin)\b/i.test(o) ? `Je vous appelle ${o}.` : `Je vous appelle au sujet de ${o.charAt(0).toLowerCase()}${o.slice(1)}.`;
  }
  return /^(to|about|regarding|because|for|on behalf)\b/i.test(o) ? `I'm calling ${o}.` : `I'm calling about ${o.charAt(0).toLowerCase()}${o.slice(1)}.`;
}

/** Who is calling, for whom, and why: the introduction a callee hears first and on "who is this?". */
export function introduction(agent: RuntimeAgent, call: OutboundCall, lang: Lang): string {
  const business = businessOf(agent);
  const who = lang === 'fr' ? `Ici ${agent.name}${business ? ` de ${business}` : ''}.` : `This is ${agent.name}${business ? ` from ${business}` : ''}.`;
  const why = call.objective ? reasonOf(call.objective, lang) : '';
  return [who, why].filter(Boolean).join(' ');
}

/** The first words of a call the agent placed: the campaign's `opening_line` rendered, else hello, the introduction and a question. */
export function openingLine(agent: RuntimeAgent, call: OutboundCall, language: string, facts: Record<string, unknown>): string {
  if (call.opening_line?.trim()) return renderTemplate(call.opening_line, agent, facts);
  const lang = pageLanguage(language);
  const first = typeof facts.first_name === 'string' && facts.first_name.trim() ? ` ${facts.first_name.trim()}` : '';
  const ask = lang === 'fr' ? 'Avez-vous un instant ?' : 'Do you have a moment?';
  return `${lang === 'fr' ? 'Bonjour' : 'Hello'}${first}, ${lowerFirst(introduction(agent, call, lang))} ${ask}`;
}

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

/** The message left on an answering machine: the campaign's `voicemail_message` rendered, else the introduction and a call back. */
export function voicemailMessage(agent: RuntimeAgent, call: OutboundCall, language: string, facts: Record<string, unknown>): string {
  if (call.voicemail_message?.trim()) return renderTemplate(call.voicemail_message, agent, facts);
  const lang = pageLanguage(language);
  const hello = lang === 'fr' ? 'Bonjour' : 'Hello';
  const after = lang === 'fr' ? 'Nous vous rappellerons. Bonne journée.' : 'We will call you back. Have a good day.';
  return `${hello}, ${lowerFirst(introduction(agent, call, lang))} ${after}`;
}

/** "at 5 PM" / "à 17 h": the callback time as the agent repeats it. */
function whenSaid(at: CallbackTime, lang: Lang): string {
  if (at && 'hour' in at) {
    if (lang === 'fr') return `à ${at.hour} h${at.minute ? ` ${String(at.minute).padStart(2, '0')}` : ''}`;
    const h12 = at.hour % 12 === 0 ? 12 : at.hour % 12;
    return `at ${h12}${at.minute ? `:${String(at.minute).padStart(2, '0')}` : ''} ${at.hour < 12 ? 'AM' : 'PM'}`;
  }
  if (at && at.inSeconds >= 86_400) return lang === 'fr' ? 'demain' : 'tomorrow';
  return lang === 'fr' ? 'plus tard' : 'later';
}

/** What the agent says to an intent that ends the call (the call then ends), or to "who is this?". */
export function outboundReply(intent: OutboundIntent, agent: RuntimeAgent, call: OutboundCall, lang: Lang): string {
  switch (intent.kind) {
    case 'identify': {
      const ask = lang === 'fr' ? 'Avez-vous un instant ?' : 'Do you have a moment?';
      return `${introduction(agent, call, lang)} ${ask}`;
    }
    case 'not_interested':
      return lang === 'fr' ? 'Je comprends. Merci de votre temps, et bonne journée. Au revoir.' : 'I understand. Thank you for your time, and have a good day. Goodbye.';
    case 'do_not_call':
      return lang === 'fr'
        ? 'Bien sûr. Votre numéro est retiré de notre liste : nous ne vous appellerons plus. Au revoir.'
        : 'Of course. I have taken your number off our list, and we will not call you again. Goodbye.';
    case 'callback':
      return lang === 'fr' ? `Bien sûr, je vous rappellerai ${whenSaid(intent.at, lang)}. Merci, au revoir.` : `Of course, I will call you back ${whenSaid(intent.at, lang)}. Thank you, goodbye.`;
  }
}
