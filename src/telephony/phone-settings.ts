import type { Agent } from '../schemas/agents.ts';

/**
 * The agent's `phone_settings` as its calls use them (issue 43: every key the API accepts acts).
 * The API validated each key's type; a stored value of another type (written before the key
 * meant anything) is read as unset.
 */
export interface CallSettings {
  /** `<Start><Recording>` at the call's first answer. */
  record: boolean;
  /** The call's length after which the next turn is a goodbye. */
  maxMinutes: number | null;
  /** `<Pause>` before the greeting of a call the agent answers. */
  answerDelaySeconds: number;
  /** `<Gather>` recognition attributes. */
  recognition: Recognition;
  /** `stream`: the call runs over the carrier's media stream (src/voice/), else turn by turn. */
  voiceMode: 'turn' | 'stream';
  /** Said first on a recorded call. */
  recordingConsent: string | null;
}

export interface Recognition { hints?: string; speechModel?: string; profanityFilter?: boolean }

export function callSettingsOf(agent: Pick<Agent, 'phone_settings'>): CallSettings {
  const s = agent.phone_settings ?? {};
  const int = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : null);
  const hints = Array.isArray(s.speech_hints) ? s.speech_hints.filter((h): h is string => typeof h === 'string' && h.trim() !== '') : [];
  const recognition: Recognition = {};
  if (hints.length) recognition.hints = hints.map((h) => h.trim()).join(', ');
  if (typeof s.speech_model === 'string' && s.speech_model !== 'default') recognition.speechModel = s.speech_model;
  if (typeof s.profanity_filter === 'boolean') recognition.profanityFilter = s.profanity_filter;
  return {
    record: s.record_calls === true,
    maxMinutes: int(s.max_call_minutes),
    answerDelaySeconds: Math.min(10, Math.max(0, int(s.answer_delay_seconds) ?? 0)),
    recognition,
    voiceMode: s.voice_mode === 'stream' ? 'stream' : 'turn',
    recordingConsent: typeof s.recording_consent === 'string' && s.recording_consent.trim() ? s.recording_consent : null,
  };
}

/**
 * How a call on `number` is spoken: the number's own `voice_mode` when set (a business may stream one line and keep
 * `<Gather>` on another), else the agent's `phone_settings.voice_mode`.
 */
export function voiceModeOf(settings: Pick<CallSettings, 'voiceMode'>, number: { voice_mode?: 'turn' | 'stream' | null } | null): 'turn' | 'stream' {
  return number?.voice_mode ?? settings.voiceMode;
}

/** Whether a call that started at `startedAt` has reached the agent's `max_call_minutes`. */
export function callTimeIsUp(settings: CallSettings, startedAt: Date, now = new Date()): boolean {
  return settings.maxMinutes !== null && now.getTime() - startedAt.getTime() >= settings.maxMinutes * 60_000;
}

/** The goodbye of a call that reached its time limit. */
export function timeUpGoodbye(language: string | null): string {
  return language === 'fr'
    ? 'Nous arrivons au bout du temps prévu pour cet appel. Merci de votre appel, au revoir.'
    : 'We have reached the time we have for this call. Thank you for calling. Goodbye.';
}
