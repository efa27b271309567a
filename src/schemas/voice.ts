import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from './common.ts';

/** Streamed calls (issue 44): the latency of each agent turn, and reports' percentiles of it. */

export const VoiceTurnTimingSchema = Type.Object({
  turn: Type.Integer({ minimum: 1, description: 'The caller\'s utterance, counted from 1' }),
  speech_ended_at: Type.String({ format: 'date-time', description: 'End of the caller\'s speech (the endpoint)' }),
  transcript_at: Type.String({ format: 'date-time', description: 'The final transcript' }),
  reply_at: Type.String({ format: 'date-time', description: 'The runtime\'s reply (its first token, with a streaming runtime)' }),
  first_audio_at: Nullable(Type.String({ format: 'date-time', description: 'The first audio byte of the reply sent to the carrier' })),
  latency_ms: Nullable(Type.Integer({ description: 'End of speech → first audio byte, in milliseconds' })),
  interrupted: Type.Boolean({ description: 'The caller spoke over the reply and it was cut (barge-in)' }),
}, { $id: 'VoiceTurnTiming', additionalProperties: false });
export type VoiceTurnTiming = Static<typeof VoiceTurnTimingSchema>;

export const VoiceLatencySchema = Type.Object({
  turns: Type.Integer({ description: 'Streamed agent turns with audio in the period' }),
  p50_ms: Nullable(Type.Integer({ description: 'Median end of speech → first audio byte' })),
  p95_ms: Nullable(Type.Integer({ description: '95th percentile end of speech → first audio byte' })),
}, { $id: 'VoiceLatency', additionalProperties: false });
