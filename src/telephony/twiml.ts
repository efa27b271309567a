import { createRequire } from 'node:module';
// The TwiML builders alone, not the SDK's index: that loads its whole REST client, about 16 MiB of an idle process (issue 48).
import type VoiceResponse from 'twilio/lib/twiml/VoiceResponse.js';
import type MessagingResponse from 'twilio/lib/twiml/MessagingResponse.js';
import type { TransferRule } from '../schemas/transfer-rules.ts';
import type { Accent, EnergyLevel, Formality, Pace } from '../schemas/voice-profiles.ts';
import { spokenForm } from '../runtime/voice.ts';
import { carrierVoice, prosodyOf, type CarrierVoice, type Prosody } from './voices.ts';
import type { Recognition } from './phone-settings.ts';

/**
 * The TwiML the service answers the carrier with, built with the twilio SDK's VoiceResponse and
 * MessagingResponse. The carrier's own speech recognition listens (`<Gather input="speech">`):
 * no audio passes through the service.
 */

const require = createRequire(import.meta.url);
let voiceResponseClass: typeof VoiceResponse | undefined;
let messagingResponseClass: typeof MessagingResponse | undefined;

/**
 * The builders, required on the first TwiML answer (twilio ships CommonJS only: the modules the imports loaded), with
 * xmlbuilder beneath them: an idle service loaded their 0.2 MB of modules at start (issue 48, bench/README.md).
 */
const newVoiceResponse = (): VoiceResponse => new (voiceResponseClass ??= require('twilio/lib/twiml/VoiceResponse.js') as typeof VoiceResponse)();
const newMessagingResponse = (): MessagingResponse =>
  new (messagingResponseClass ??= require('twilio/lib/twiml/MessagingResponse.js') as typeof MessagingResponse)();

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

/** How a call sounds: its carrier voice and locales, the profile's delivery (`<prosody>`), and its turn-taking. */
export interface Speech extends CarrierVoice { prosody?: Prosody | null; turnTaking?: TurnTaking; recognition?: Recognition }

/** What a voice profile says of the delivery (null: the agent has none). */
export interface Delivery { accent?: Accent | null; pace?: Pace | null; energy?: EnergyLevel | null; formality?: Formality | null }

/**
 * The speech of a call in `language` (the conversation's), by the agent's base voice and, when it has one, its voice
 * profile's delivery; `agentLanguage` (the agent's default_language) gives the region (`pt-BR`).
 */
export function speechOf(baseVoice: string | null, language: string, turnTaking?: TurnTaking,
  opts: { delivery?: Delivery | null; agentLanguage?: string | null; recognition?: Recognition } = {}): Speech {
  const voice = carrierVoice({ baseVoice, language, agentLanguage: opts.agentLanguage ?? null, accent: opts.delivery?.accent ?? null });
  const prosody = prosodyOf(opts.delivery ?? null, voice.voice);
  return { ...voice, ...(prosody ? { prosody } : {}), ...(turnTaking ? { turnTaking } : {}), ...(opts.recognition ? { recognition: opts.recognition } : {}) };
}

/** Whether the call is spoken in French (the phrases the service itself says on a call, in English or French). */
const isFrench = (speech: Speech) => speech.listen.startsWith('fr');

/**
 * What a call's first answer does before the greeting (`phone_settings`): start recording, wait a moment.
 * `recordingStatusCallback` is where the carrier posts the recording once it is complete (the service downloads it).
 */
export interface CallOpening { record: boolean; pauseSeconds: number; recordingStatusCallback?: string }

const NO_SPEECH = { en: 'Sorry, I did not hear anything. Goodbye.', fr: "Désolé, je n'ai rien entendu. Au revoir." };

/** A date (`2026-05-01`) or a phone number in a line: spoken as one (SSML `say-as`), not digit by digit or as arithmetic. */
const SAY_AS = /\b(\d{4}-\d{2}-\d{2})\b|(\+?\d[\d ().-]{6,}\d)/g;

/** What `<say-as>` and text can be added to: the `<Say>`, or its `<prosody>` or `<lang>`. */
interface SsmlParent { addText(text: string): void; sayAs(attributes: VoiceResponse.SsmlSayAsAttributes, words: string): unknown }

/**
 * Says `line` in `parent`: prices and times as a person says them (spokenForm), dates and phone numbers inside
 * `<say-as>`, the whole inside the profile's `<prosody>`, and inside `<lang>` when the voice speaks another locale
 * than its own (an accent of another language).
 */
function speakLine(parent: { say(attributes: VoiceResponse.SayAttributes, message: string): ReturnType<VoiceResponse['say']> },
  speech: Speech, written: string): void {
  const line = spokenForm(written, speech.listen);
  const matches = [...line.matchAll(SAY_AS)].filter((m) => m[1] || m[2]!.replace(/\D/g, '').length >= 7);
  const attributes = { voice: speech.voice, language: speech.language };
  if (!matches.length && !speech.prosody && !speech.speaks) {
    parent.say(attributes, line);
    return;
  }
  const say = parent.say(attributes, '');
  let into: SsmlParent & { lang?: unknown } = say;
  if (speech.prosody) into = say.prosody(speech.prosody, '');
  if (speech.speaks) into = (into as ReturnType<typeof say.prosody>).lang({ 'xml:lang': speech.speaks }, '');
  let last = 0;
  for (const m of matches) {
    if (m.index > last) into.addText(line.slice(last, m.index));
    if (m[1]) into.sayAs({ 'interpret-as': 'date', format: 'ymd' }, m[1]);
    else into.sayAs({ 'interpret-as': 'telephone' }, m[2]!.trim());
    last = m.index + m[0].length;
  }
  if (last < line.length) into.addText(line.slice(last));
}

/** Says `lines`, then listens for the caller's next words, posted to `action`; a call's first answer opens it with `opening`. */
export function sayAndGather(lines: string[], speech: Speech, action: string, opening?: CallOpening): string {
  const response = newVoiceResponse();
  if (opening?.record) {
    response.start().recording({
      track: 'both', channels: 'dual',
      ...(opening.recordingStatusCallback
        ? { recordingStatusCallback: opening.recordingStatusCallback, recordingStatusCallbackMethod: 'POST', recordingStatusCallbackEvent: ['completed'] }
        : {}),
    });
  }
  if (opening?.pauseSeconds) response.pause({ length: opening.pauseSeconds });
  const turns = speech.turnTaking ?? turnTakingOf({});
  const gather = response.gather({
    input: ['speech'], action, method: 'POST', speechTimeout: turns.speechTimeout, timeout: turns.timeout, bargeIn: turns.bargeIn, language: speech.listen,
    ...speech.recognition,
  });
  for (const line of lines) speakLine(gather, speech, line);
  speakLine(response, speech, isFrench(speech) ? NO_SPEECH.fr : NO_SPEECH.en);
  response.hangup();
  return response.toString();
}

/**
 * A streamed call (issue 44): the carrier opens a WebSocket to `url` and the service speaks and
 * listens itself; the greeting is spoken on the stream. The call's recording, when on, is the
 * service's own (src/voice/recordings.ts).
 */
export function connectStream(url: string, opening?: Pick<CallOpening, 'pauseSeconds'>): string {
  const response = newVoiceResponse();
  if (opening?.pauseSeconds) response.pause({ length: opening.pauseSeconds });
  response.connect().stream({ url });
  return response.toString();
}

/** Says `lines`, then hangs up: the agent's goodbye on a call it closes. */
export function sayAndHangup(lines: string[], speech: Speech): string {
  const response = newVoiceResponse();
  for (const line of lines) speakLine(response, speech, line);
  response.hangup();
  return response.toString();
}

/** A polite refusal: the number is not taking calls. Nothing starts. */
export function politeHangup(text: string): string {
  const response = newVoiceResponse();
  response.say({ voice: 'Polly.Joanna-Neural', language: 'en-US' }, text);
  response.hangup();
  return response.toString();
}

export function emptyVoiceResponse(): string {
  return newVoiceResponse().toString();
}

/** The line closed without a word: a request about a call that is not live. */
export function hangupResponse(): string {
  const response = newVoiceResponse();
  response.hangup();
  return response.toString();
}

export function smsReply(lines: string[]): string {
  const response = newMessagingResponse();
  if (lines.length) response.message(lines.join('\n\n'));
  return response.toString();
}

/** How a matched rule hands the caller over. */
export type TransferPlan =
  | { type: 'cold'; rule: TransferRule; callerId: string; noAnswerUrl?: string }
  | { type: 'warm'; rule: TransferRule; conference: string; waitUrl?: string }
  | { type: 'sip_refer'; rule: TransferRule; sipUri: string; username: string; password: string; noAnswerUrl?: string };

/** The caller's side of a transfer: an announcement, then the hand-over. */
export function transferTwiml(plan: TransferPlan, announcement: string, speech: Speech): string {
  const response = newVoiceResponse();
  speakLine(response, speech, announcement);
  const timeout = plan.rule.ring_timeout_seconds;
  // The `<Dial action>` hears how the destination leg ended: a no-answer, busy or failed one gets the rule's `on_no_answer`.
  if (plan.type === 'cold') {
    response.dial({ timeout, callerId: plan.callerId, ...(plan.noAnswerUrl ? { action: plan.noAnswerUrl } : {}) }, plan.rule.destination_phone ?? '');
  } else if (plan.type === 'warm') {
    // The caller waits in the conference; it starts when the destination joins after hearing the brief.
    response.dial().conference({ startConferenceOnEnter: false, endConferenceOnExit: true, beep: 'false' }, plan.conference);
  } else {
    response.dial({ timeout, ...(plan.noAnswerUrl ? { action: plan.noAnswerUrl } : {}) }).sip({ username: plan.username, password: plan.password }, plan.sipUri);
  }
  return response.toString();
}

/** The destination's side of a warm transfer: it hears the brief, then joins the waiting caller. */
export function warmBriefTwiml(brief: string, conference: string, speech: Speech): string {
  const response = newVoiceResponse();
  speakLine(response, speech, brief);
  response.dial().conference({ startConferenceOnEnter: true, endConferenceOnExit: true, beep: 'false' }, conference);
  return response.toString();
}

/**
 * The caller's side of a transfer whose destination did not answer (issue 43), by the rule's `on_no_answer`:
 * `return_to_agent` says `message` and listens again (`action`, the call's next turn); `voicemail` says
 * `message`, records after the tone (up to 2 minutes) and posts the recording to `recordAction`.
 */
export function noAnswerTwiml(input: { onNoAnswer: 'return_to_agent' | 'voicemail'; message: string; goodbye: string; action: string; recordAction: string }, speech: Speech): string {
  if (input.onNoAnswer === 'return_to_agent') return sayAndGather([input.message], speech, input.action);
  const response = newVoiceResponse();
  speakLine(response, speech, input.message);
  response.record({ action: input.recordAction, method: 'POST', maxLength: 120, playBeep: true, timeout: 5 });
  speakLine(response, speech, input.goodbye);
  response.hangup();
  return response.toString();
}
