import { PassThrough } from 'node:stream';
import { refuseMessage, sendVisitorMessage, type TurnStream } from '../src/conversations/lifecycle.ts';
import type { ConversationRecord } from '../src/db/conversations.ts';
import type { Agent } from '../src/schemas/agents.ts';
import type { AppContext, AppDeps } from './context.ts';

/** Whether the client asks for the reply as Server-Sent Events (`Accept: text/event-stream`). */
export function wantsEventStream(ctx: AppContext): boolean {
  return /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(ctx.get('Accept'));
}

/** One Server-Sent Event: its name and its JSON data on one line. */
const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * A visitor's message answered as Server-Sent Events (issue 46): `delta` events `{text}` as the reply is written (the
 * LLM runtime's tokens; the offline runtime's whole reply at once), then one `done` event
 * `{messages, source, tool_calls}` (the stored messages as the JSON answer has them, which runtime answered, the
 * turn's tool calls), or an `error` event `{code, detail}`. When the visitor goes away before the end, the turn is
 * aborted and what was sent is stored, marked `cut`. The refusals a JSON request gets (an ended conversation, a paused
 * agent) are thrown before the stream opens, as problems.
 */
export function streamVisitorReply(ctx: AppContext, deps: AppDeps, agent: Agent, conversation: ConversationRecord, text: string): PassThrough {
  refuseMessage(agent, conversation);
  const out = new PassThrough();
  const abort = new AbortController();
  let finished = false;
  // The visitor closed the connection (or the page) before the end: the turn stops there.
  ctx.res.once('close', () => {
    if (!finished) abort.abort();
  });
  const stream: TurnStream = {
    onText: (delta) => {
      if (delta && !out.writableEnded) out.write(sse('delta', { text: delta }));
    },
    signal: abort.signal,
  };
  void sendVisitorMessage(deps, agent, conversation, text, { stream })
    .then((messages) => {
      if (abort.signal.aborted) return;
      out.write(sse('done', { messages, source: stream.done?.source ?? null, tool_calls: stream.done?.toolCalls ?? [] }));
    })
    .catch((err: unknown) => {
      if (abort.signal.aborted) return;
      deps.log.error({ err, conversation_id: conversation.id }, 'a streamed reply failed');
      out.write(sse('error', { code: 'internal_error', detail: 'the reply could not be completed; send the message again' }));
    })
    .finally(() => {
      finished = true;
      out.end();
    });
  ctx.req.socket.setTimeout(0);
  ctx.set('Cache-Control', 'no-cache, no-transform');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.type = 'text/event-stream; charset=utf-8';
  // The first bytes go at once, so that the client knows the stream is open before the first token.
  out.write(': reply\n\n');
  return out;
}
