import { Type } from '@sinclair/typebox';
import { notFound, validationError } from '../../src/errors.ts';
import { findAgent } from '../../src/db/agents.ts';
import { findConversation } from '../../src/db/conversations.ts';
import { findCallRecording, turnLatencyPercentiles } from '../../src/db/voice.ts';
import { IdParams } from '../../src/schemas/common.ts';
import { VoiceLatencySchema } from '../../src/schemas/voice.ts';
import { recordingStore } from '../../src/voice/recordings.ts';
import { route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

const LatencyQuery = Type.Object({
  from: Type.Optional(Type.String({ format: 'date-time', description: 'Start of the period (default: 30 days ago)' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'End of the period, excluded (default: now)' })),
}, { additionalProperties: false });

/** Streamed calls (issue 44): a call's recording, and an agent's voice latency figures. */
export const callRecordingsFamily: RouteFamily = {
  base: BASE,
  order: 125,
  tag: 'Call recordings and voice latency',
  description: 'The recording of a call (`phone_settings.record_calls`: a streamed call\'s own mix, or a turn-by-turn call\'s carrier recording), and, for streamed calls (`voice_mode: stream`), each agent\'s '
    + 'latency from the end of the caller\'s speech to the first audio byte of its answer.',
  routes: [
    route({
      method: 'GET', path: '/conversations/:id/recording', operationId: 'get_conversation_recording', summary: 'Download a call\'s recording (WAV)',
      description: 'Both sides of a streamed call, mixed, as a mono 16-bit WAV at 8 kHz; a turn-by-turn call\'s carrier recording as the carrier made it (a dual-channel WAV). 404 when the conversation has no recording. '
        + 'Deleted with its conversation and by retention.',
      permissions: ['conversations.read'], params: IdParams,
      responses: { 200: { description: 'A WAV file', mediaType: 'audio/wav', schema: Type.Unsafe<Buffer>({ type: 'string', contentMediaType: 'audio/wav' }) } },
      async handler({ params, principal, deps }) {
        const recording = await findCallRecording(deps.sql, principal.orgId, params.id);
        const blob = recording ? await recordingStore().get(recording.blobKey) : null;
        if (!blob) throw notFound((await findConversation(deps.sql, principal.orgId, params.id)) ? 'recording' : 'conversation');
        return {
          status: 200, body: blob.bytes,
          headers: { 'Content-Type': blob.contentType, 'Cache-Control': 'private, no-store', 'Content-Disposition': `attachment; filename="${params.id}.wav"` },
        };
      },
    }),
    route({
      method: 'GET', path: '/agents/:id/voice-latency', operationId: 'get_agent_voice_latency', summary: 'An agent\'s voice latency, p50 and p95',
      description: 'End of the caller\'s speech → first audio byte of the agent\'s answer, over the agent\'s streamed turns in [`from`, `to`).',
      permissions: ['agents.read'], params: IdParams, query: LatencyQuery,
      responses: { 200: { description: 'The percentiles', schema: VoiceLatencySchema } },
      async handler({ params, query, principal, deps }) {
        const to = query.to ? new Date(query.to) : new Date();
        const from = query.from ? new Date(query.from) : new Date(to.getTime() - 30 * 86_400_000);
        if (from >= to) throw validationError([{ field: 'from', code: 'invalid_range', message: 'from must be before to' }]);
        if (!(await findAgent(deps.sql, principal.orgId, params.id))) throw notFound('agent');
        const figures = await turnLatencyPercentiles(deps.sql, principal.orgId, params.id, from, to);
        return { status: 200, body: { turns: figures.turns, p50_ms: figures.p50Ms, p95_ms: figures.p95Ms } };
      },
    }),
  ],
};
