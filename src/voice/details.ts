import type { Db } from '../db/index.ts';
import { findCallRecording, listTurnTimings } from '../db/voice.ts';
import type { VoiceTurnTiming } from '../schemas/voice.ts';

/** What a conversation's detail shows of a streamed call: each agent turn's timings, and whether a recording is kept. */
export async function voiceDetailOf(db: Db, orgId: string, conversationId: string): Promise<{ voice_turns: VoiceTurnTiming[]; has_recording: boolean }> {
  const [timings, recording] = await Promise.all([listTurnTimings(db, orgId, conversationId), findCallRecording(db, orgId, conversationId)]);
  return {
    voice_turns: timings.map((t) => ({
      turn: t.turn, speech_ended_at: t.speechEndedAt.toISOString(), transcript_at: t.transcriptAt.toISOString(), reply_at: t.replyAt.toISOString(),
      first_audio_at: t.firstAudioAt?.toISOString() ?? null,
      latency_ms: t.firstAudioAt ? t.firstAudioAt.getTime() - t.speechEndedAt.getTime() : null, interrupted: t.interrupted,
    })),
    has_recording: recording !== null,
  };
}
