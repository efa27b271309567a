import { findVoiceProfile } from '../db/voice-profiles.ts';
import type { Db } from '../db/index.ts';
import type { Agent } from '../schemas/agents.ts';
import { ttsVoiceOf, type SpeechToText, type TextToSpeech, type TtsVoice } from '../voice/engines.ts';
import { sandboxCallerEngines, speechFrames, transcribeFrames } from '../voice/sandbox-caller.ts';

/**
 * A `stream` phone run (issue 44): each turn is spoken by the sandbox's streamed caller. Its line is
 * synthesized with its own voice (espeak-ng) into the μ-law frames of a media stream and recognized
 * by the service's configured speech-to-text: that is what the agent hears and answers. The agent's
 * lines are synthesized by the configured text-to-speech in the agent's voice (its voice profile)
 * and the caller's recognizer transcribes them back: that is what the transcript keeps, as a caller
 * would have heard it. A turn is one activity, so the audio does not cross a WebSocket and is not
 * paced in real time; the engines, the voice and the framing are a streamed call's.
 */

/** The engines a streamed call of the service speaks and hears with (VOICE_TTS, VOICE_STT). */
export interface SimulationSpeech { stt: SpeechToText; tts: TextToSpeech }

/** Written in the transcript for a line in which the recognizer heard nothing. */
export const NOTHING_HEARD = '(nothing recognized)';

/** What the agent hears of the caller's `line`: the caller's voice through the service's recognizer. */
export async function agentHears(speech: SimulationSpeech, line: string, language: string | null): Promise<string> {
  const caller = sandboxCallerEngines(language);
  return transcribeFrames(speech.stt, await speechFrames(caller.tts, caller.voice, line));
}

/** The agent's voice on a call: its language and voice profile, as a streamed call speaks (call-stream.ts). */
export async function agentVoiceOf(db: Db, orgId: string, agent: Agent, language: string | null): Promise<TtsVoice> {
  const profile = agent.voice_profile_id ? await findVoiceProfile(db, orgId, agent.voice_profile_id) : null;
  return ttsVoiceOf(language, profile);
}

/** What the caller hears of each of the agent's `lines`, spoken in `voice` by the service's text-to-speech. */
export async function callerHears(speech: SimulationSpeech, voice: TtsVoice, lines: string[], language: string | null): Promise<string[]> {
  const caller = sandboxCallerEngines(language);
  const heard: string[] = [];
  for (const line of lines) heard.push(await transcribeFrames(caller.stt, await speechFrames(speech.tts, voice, line)) || NOTHING_HEARD);
  return heard;
}
