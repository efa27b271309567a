import { fold } from './text.ts';
import type { RuntimeAgent } from '../runtime/types.ts';

/** What the runtimes say in their own words, per page language (en, fr), and the templates they render. */

export type Lang = 'en' | 'fr';

/** `en` unless the page language is French (`fr`, `fr-CA`...): the two phrase tables we ship. */
const FR_MARKERS = new Set(`le la les des est vous nous une et pour pas je votre avec sur merci bonjour que qui dans du au aux ce ca il
  elle on mon ma mes de en c j l d qu y ou quel quelle quels quand combien comment pourquoi peux peut faut sont ai suis chez vos nos
  cette ces sans avez etes kel cb vs svp stp`.split(/\s+/));
const EN_MARKERS = new Set(`the is are you we a an and for not i your with on thanks hello that who in to do does can what how my it of
  at have much there this when where if be or any get u ur`.split(/\s+/));
const LONGEST_MARKER = Math.max(...[...FR_MARKERS, ...EN_MARKERS].map((w) => w.length));

/** The language a text is written in, by its commonest words: French when it has more of French's than of English's. */
export function languageOfText(text: string): Lang {
  // "l'atelier", "c'est", "qu'il": the elided word counts, as "l", "c", "qu". The words are the runs of a-z of the folded
  // text (what `split(/[^a-z]+/)` gives), read in place: only those short enough to be a marker are copied out (a
  // crawled page's thousands of words were an array of strings each, issue 48).
  const folded = fold(text);
  let fr = 0;
  let en = 0;
  let start = -1;
  for (let i = 0; i <= folded.length; i++) {
    const c = i < folded.length ? folded.charCodeAt(i) : 0;
    if (c >= 97 && c <= 122) {
      if (start < 0) start = i;
      continue;
    }
    if (start >= 0 && i - start <= LONGEST_MARKER) {
      const word = folded.slice(start, i);
      if (FR_MARKERS.has(word)) fr++;
      if (EN_MARKERS.has(word)) en++;
    }
    start = -1;
  }
  // A tie is broken by French's accented letters ("à", "é", "ç"), which English seldom writes.
  return fr > en || (fr === en && fr + en > 0 && /[àâçéèêëîïôûùœ]/i.test(text)) ? 'fr' : 'en';
}

/**
 * The language of a site's words, by how often it writes each language's markers of four letters or more ("pour",
 * "avec", "vous" against "your", "with", "that"): `counts` is its vocabulary (folded words to counts).
 */
export function languageOfWords(counts: Map<string, number>): Lang {
  let fr = 0;
  let en = 0;
  for (const [word, n] of counts) {
    if (word.length < 4) continue;
    const w = fold(word);
    if (FR_MARKERS.has(w)) fr += n;
    else if (EN_MARKERS.has(w)) en += n;
  }
  return fr > en ? 'fr' : 'en';
}

/**
 * The language of a visitor's message on a site in `siteLanguage`: the message's own by its markers when it has two or
 * more, else the site's ("mon hrs riverside?" is English on an English site: "mon" is one marker of French).
 */
export function languageOfQuestion(text: string, siteLanguage: Lang): Lang {
  const words = fold(text).split(/[^a-z]+/);
  const fr = words.filter((w) => FR_MARKERS.has(w)).length;
  const en = words.filter((w) => EN_MARKERS.has(w)).length;
  return fr + en <= 1 ? siteLanguage : languageOfText(text);
}

export function pageLanguage(language: string | null | undefined): Lang {
  return /^fr(\b|[-_])/i.test(language?.trim() ?? '') ? 'fr' : 'en';
}


/** Replaces `{{name}}` from config_variables, `{{agent_name}}` with the agent's name, then contact facts; unknown names vanish. */
export function renderTemplate(template: string, agent: Pick<RuntimeAgent, 'name' | 'config_variables'>, contactFacts: Record<string, unknown> = {}): string {
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


interface Phrases {
  greeting(name: string, firstName: string | null): string;
  greetingBack: string;
  thanks: string;
  goodbye: string;
  dontKnow: string;
  offerTransfer: string;
  offerContact: string;
  /** A tool of the business failed: the agent says so (then offers a person or the contact path). */
  toolFailed: string;
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

export type SteerTopic = 'demo' | 'booking' | 'contact';

export const PHRASES: Record<Lang, Phrases> = {
  en: {
    greeting: (name, first) => `Hi${first ? ` ${first}` : ''}! I'm ${name}. How can I help you today?`,
    greetingBack: 'Hello! How can I help you today?',
    thanks: "You're welcome! Is there anything else I can help you with?",
    goodbye: 'Thank you for chatting with us. Have a great day!',
    dontKnow: "I'm sorry, I don't know the answer to that.",
    offerTransfer: 'Would you like me to connect you with someone from our team?',
    offerContact: 'If you leave your contact details, our team will get back to you.',
    toolFailed: 'Sorry, I could not complete that step on our side just now.',
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
    toolFailed: 'Désolé, je n\'ai pas pu terminer cette étape de notre côté pour le moment.',
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

type Register = Pick<Phrases, 'greeting' | 'greetingBack' | 'thanks' | 'goodbye' | 'anythingElse'>;

/** The greetings and closings of a voice profile's `formality` other than `neutral` (the tables above), per language. */
const REGISTERS: Record<'casual' | 'formal', Record<Lang, Register>> = {
  casual: {
    en: {
      greeting: (name, first) => `Hi there${first ? `, ${first}` : ''}! I'm ${name}. What can I do for you?`,
      greetingBack: 'Hi there! What can I do for you?',
      thanks: 'Thanks! Anything else?',
      goodbye: 'Thanks! Have a great one!',
      anythingElse: 'Anything else?',
    },
    fr: {
      greeting: (name, first) => `Salut${first ? ` ${first}` : ''} ! Moi, c'est ${name}. Qu'est-ce que je peux faire pour vous ?`,
      greetingBack: "Salut ! Qu'est-ce que je peux faire pour vous ?",
      thanks: 'Merci ! Autre chose ?',
      goodbye: 'Merci ! Bonne journée !',
      anythingElse: 'Autre chose ?',
    },
  },
  formal: {
    en: {
      greeting: (name, first) => `Hello${first ? ` ${first}` : ''}. My name is ${name}. How may I assist you today?`,
      greetingBack: 'Hello. How may I assist you today?',
      thanks: 'Thank you. Is there anything else I may assist you with?',
      goodbye: 'Thank you for contacting us. Good day.',
      anythingElse: 'Is there anything else I may assist you with?',
    },
    fr: {
      greeting: (name, first) => `Bonjour${first ? ` ${first}` : ''}. Je me nomme ${name}. En quoi puis-je vous être utile ?`,
      greetingBack: 'Bonjour. En quoi puis-je vous être utile ?',
      thanks: 'Je vous remercie. Puis-je vous être utile pour autre chose ?',
      goodbye: 'Nous vous remercions de nous avoir contactés. Excellente journée.',
      anythingElse: 'Puis-je vous être utile pour autre chose ?',
    },
  },
};

/** What the runtimes say in `lang`, in the register of the agent's voice profile (`formality`; neutral without one). */
export function phrasesFor(lang: Lang, formality: 'casual' | 'neutral' | 'formal' | null | undefined): Phrases {
  return formality === 'casual' || formality === 'formal' ? { ...PHRASES[lang], ...REGISTERS[formality][lang] } : PHRASES[lang];
}

/** The apology the runtimes fall back to when they have nothing grounded to say. */
export function dontKnowReply(lang: Lang, canTransfer: boolean): string {
  const p = PHRASES[lang];
  return `${p.dontKnow} ${canTransfer ? p.offerTransfer : p.offerContact}`;
}

/** What the visitor reads when a person is asked to join: a member of the team will be with them. */
export function handoffReply(language: string | null | undefined): string {
  return PHRASES[pageLanguage(language)].handoffYes;
}

/** The agent's greeting rendered, or a default one in the page language. */
export function greetingFor(agent: RuntimeAgent, language: string, contactFacts: Record<string, unknown> = {}): string {
  if (agent.greeting?.trim()) return renderTemplate(agent.greeting, agent, contactFacts);
  const first = typeof contactFacts.first_name === 'string' && contactFacts.first_name.trim() ? contactFacts.first_name.trim() : null;
  return phrasesFor(pageLanguage(language), agent.style?.formality).greeting(agent.name, first);
}

interface CopyOf {
  name: string; config_variables: Record<string, string> | null; intro_title: string | null; intro_subtitle: string | null;
  suggested_prompts: string[]; button_label: string | null;
  localized_copy: Partial<Record<string, { intro_title?: string | null; intro_subtitle?: string | null; suggested_prompts?: string[] }>>;
}

/** The widget's copy (intro, suggested prompts, button label, per language too) with the agent's `{{variables}}` rendered. */
export function withRenderedCopy<T extends CopyOf>(agent: T): T {
  const text = (value: string | null | undefined) => (typeof value === 'string' ? renderTemplate(value, agent) : value);
  const prompts = (list: string[]) => list.map((x) => renderTemplate(x, agent)).filter(Boolean);
  const localized = Object.fromEntries(Object.entries(agent.localized_copy).map(([lang, copy]) => [lang, copy && {
    ...copy,
    ...(copy.intro_title !== undefined ? { intro_title: text(copy.intro_title) } : {}),
    ...(copy.intro_subtitle !== undefined ? { intro_subtitle: text(copy.intro_subtitle) } : {}),
    ...(copy.suggested_prompts ? { suggested_prompts: prompts(copy.suggested_prompts) } : {}),
  }]));
  return {
    ...agent, intro_title: text(agent.intro_title) ?? null, intro_subtitle: text(agent.intro_subtitle) ?? null,
    suggested_prompts: prompts(agent.suggested_prompts), button_label: text(agent.button_label) ?? null, localized_copy: localized,
  };
}
