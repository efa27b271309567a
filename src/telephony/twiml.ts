import twilio from 'twilio';
import type { TransferRule } from '../schemas/transfer-rules.ts';
import type { Recognition } from './phone-settings.ts';

/**
 * The TwiML the service answers the carrier with, built with the twilio SDK's VoiceResponse and
 * MessagingResponse. The carrier's own speech recognition listens (`<Gather input="speech">`):
 * no audio passes through the service.
 */

type VoiceName = NonNullable<Parameters<twilio.twiml.VoiceResponse['say']>[0] extends infer A ? A extends { voice?: infer V } ? V : never : never>;

/** The agent's base voice as a Twilio (Amazon Polly) voice of the conversation's language. */
const EN_VOICES: Record<string, VoiceName> = {
  alloy: 'Polly.Joanna-Neural', ash: 'Polly.Matthew-Neural', ballad: 'Polly.Brian-Neural', coral: 'Polly.Salli-Neural',
  echo: 'Polly.Joey-Neural', fable: 'Polly.Amy-Neural', nova: 'Polly.Kendra-Neural', onyx: 'Polly.Justin-Neural',
  sage: 'Polly.Ruth-Neural', shimmer: 'Polly.Kimberly-Neural', verse: 'Polly.Stephen-Neural',
};
const MALE = new Set(['ash', 'ballad', 'echo', 'onyx', 'verse']);

export function twilioVoice(baseVoice: string | null, language: string): VoiceName {
  if (language === 'fr') return baseVoice && MALE.has(baseVoice) ? 'Polly.Remi-Neural' : 'Polly.Lea-Neural';
  return (baseVoice && EN_VOICES[baseVoice]) || 'Polly.Joanna-Neural';
}

/** How the agent takes turns on a call: whether the caller may talk over it, and how long it waits for their words. */
export interface TurnTaking { bargeIn: boolean; speechTimeout: string; timeout: number }

/**
 * The agent's `interruptions` and `responsiveness` as `<Gather>` attributes: `allow` lets the caller barge in;
 * `patient` waits 3 s of silence after speech (10 s for speech to start), `normal` Twilio's automatic end of speech
 * (5 s), `quick` 1 s (3 s).
 */
export function turnTakingOf(agent: { interruptions?: string | null; responsiveness?: string | null }): TurnTaking {
  const bargeIn = agent.interruptions !== 'wait';
  if (agent.responsiveness === 'patient') return { bargeIn, speechTimeout: '3', timeout: 10 };
  if (agent.responsiveness === 'quick') return { bargeIn, speechTimeout: '1', timeout: 3 };
  return { bargeIn, speechTimeout: 'auto', timeout: 5 };
}

export interface Speech { voice: VoiceName; language: 'en-US' | 'fr-FR'; turnTaking?: TurnTaking; recognition?: Recognition }
export const speechOf = (baseVoice: string | null, language: string, turnTaking?: TurnTaking, recognition?: Recognition): Speech => ({
  voice: twilioVoice(baseVoice, language), language: language === 'fr' ? 'fr-FR' : 'en-US', ...(turnTaking ? { turnTaking } : {}), ...(recognition ? { recognition } : {}),
});

/** What a call's first answer does before the greeting (`phone_settings`): start recording, wait a moment. */
export interface CallOpening { record: boolean; pauseSeconds: number }

const NO_SPEECH = { en: 'Sorry, I did not hear anything. Goodbye.', fr: "Désolé, je n'ai rien entendu. Au revoir." };

/** A date (`2026-05-01`) or a phone number in a line: spoken as one (SSML `say-as`), not digit by digit or as arithmetic. */
const SAY_AS = /\b(\d{4}-\d{2}-\d{2})\b|(\+?\d[\d ().-]{6,}\d)/g;

/** Says `line` in `say`: dates and phone numbers inside `<say-as>`, the rest as text. */
function speakLine(parent: { say(attributes: { voice: VoiceName; language: Speech['language'] }, message: string): ReturnType<twilio.twiml.VoiceResponse['say']> },
  speech: Speech, line: string): void {
  const matches = [...line.matchAll(SAY_AS)].filter((m) => m[1] || m[2]!.replace(/\D/g, '').length >= 7);
  if (!matches.length) {
    parent.say({ voice: speech.voice, language: speech.language }, line);
    return;
  }
  const say = parent.say({ voice: speech.voice, language: speech.language }, '');
  let last = 0;
  for (const m of matches) {
    if (m.index > last) say.addText(line.slice(last, m.index));
    if (m[1]) say.sayAs({ 'interpret-as': 'date', format: 'ymd' }, m[1]);
    else say.sayAs({ 'interpret-as': 'telephone' }, m[2]!.trim());
    last = m.index + m[0].length;
  }
  if (last < line.length) say.addText(line.slice(last));
}

/** Says `lines`, then listens for the caller's next words, posted to `action`; a call's first answer opens it with `opening`. */
export function sayAndGather(lines: string[], speech: Speech, action: string, opening?: CallOpening): string {
  const response = new twilio.twiml.VoiceResponse();
  if (opening?.record) response.start().recording({ track: 'both', channels: 'dual' });
  if (opening?.pauseSeconds) response.pause({ length: opening.pauseSeconds });
  const turns = speech.turnTaking ?? turnTakingOf({});
  const gather = response.gather({
    input: ['speech'], action, method: 'POST', speechTimeout: turns.speechTimeout, timeout: turns.timeout, bargeIn: turns.bargeIn, language: speech.language,
    ...speech.recognition,
  });
  for (const line of lines) speakLine(gather, speech, line);
  response.say({ voice: speech.voice, language: speech.language }, speech.language === 'fr-FR' ? NO_SPEECH.fr : NO_SPEECH.en);
  response.hangup();
  return response.toString();
}

/** Says `lines`, then hangs up: the agent's goodbye on a call it closes. */
export function sayAndHangup(lines: string[], speech: Speech): string {
  const response = new twilio.twiml.VoiceResponse();
  for (const line of lines) speakLine(response, speech, line);
  response.hangup();
  return response.toString();
}

/** A polite refusal: the number is not taking calls. Nothing starts. */
export function politeHangup(text: string): string {
  const response = new twilio.twiml.VoiceResponse();
  response.say({ voice: 'Polly.Joanna-Neural', language: 'en-US' }, text);
  response.hangup();
  return response.toString();
}

export function emptyVoiceResponse(): string {
  return new twilio.twiml.VoiceResponse().toString();
}

/** The line closed without a word: a request about a call that is not live. */
export function hangupResponse(): string {
  const response = new twilio.twiml.VoiceResponse();
  response.hangup();
  return response.toString();
}

export function smsReply(lines: string[]): string {
  const response = new twilio.twiml.MessagingResponse();
  if (lines.length) response.message(lines.join('\n\n'));
  return response.toString();
}

/** How a matched rule hands the caller over. */
export type TransferPlan =
  | { type: 'cold'; rule: TransferRule; callerId: string }
  | { type: 'warm'; rule: TransferRule; conference: string; waitUrl?: string }
  | { type: 'sip_refer'; rule: TransferRule; sipUri: string; username: string; password: string };

/** The caller's side of a transfer: an announcement, then the hand-over. */
export function transferTwiml(plan: TransferPlan, announcement: string, speech: Speech): string {
  const response = new twilio.twiml.VoiceResponse();
  response.say({ voice: speech.voice, language: speech.language }, announcement);
  const timeout = plan.rule.ring_timeout_seconds;
  if (plan.type === 'cold') {
    response.dial({ timeout, callerId: plan.callerId }, plan.rule.destination_phone ?? '');
  } else if (plan.type === 'warm') {
    // The caller waits in the conference; it starts when the destination joins after hearing the brief.
    response.dial().conference({ startConferenceOnEnter: false, endConferenceOnExit: true, beep: 'false' }, plan.conference);
  } else {
    response.dial({ timeout }).sip({ username: plan.username, password: plan.password }, plan.sipUri);
  }
  return response.toString();
}

/** The destination's side of a warm transfer: it hears the brief, then joins the waiting caller. */
export function warmBriefTwiml(brief: string, conference: string, speech: Speech): string {
  const response = new twilio.twiml.VoiceResponse();
  response.say({ voice: speech.voice, language: speech.language }, brief);
  response.dial().conference({ startConferenceOnEnter: true, endConferenceOnExit: true, beep: 'false' }, conference);
  return response.toString();
}
