import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in OpenAI-compatible chat-completions server for the answers evaluation: a "model" that
 * calls search_knowledge with the visitor's own words, then answers with every passage it was
 * given, verbatim. What an LLM could answer from is then what the reply holds (recall@k of the
 * LLM path). A request offering no search_knowledge (a transfer decision, an evaluation) is
 * answered "none".
 */

export interface EchoLlm { baseUrl: string; close(): Promise<void> }

interface Message { role: string; content?: string | null }

const text = (content: string) => ({ role: 'assistant', content });

function answer(body: { messages?: Message[]; tools?: { function?: { name?: string } }[] }) {
  const messages = body.messages ?? [];
  const offersSearch = (body.tools ?? []).some((t) => t.function?.name === 'search_knowledge');
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') {
    let passages: { title?: string; section?: string; url?: string; text?: string }[] = [];
    try { passages = (JSON.parse(last.content ?? '{}') as { passages?: typeof passages }).passages ?? []; } catch { /* not JSON: nothing given */ }
    const echoed = passages.map((p) => `[${p.section ?? p.title ?? ''}] ${p.text ?? ''} (Source: ${p.url ?? ''})`).join('\n');
    return { message: text(echoed || "I don't know."), finish: 'stop' };
  }
  const visitor = [...messages].reverse().find((m) => m.role === 'user');
  if (offersSearch && visitor?.content) {
    return {
      message: { role: 'assistant', content: null, tool_calls: [{ id: `call_${Date.now()}`, type: 'function', function: { name: 'search_knowledge', arguments: JSON.stringify({ query: visitor.content }) } }] },
      finish: 'tool_calls',
    };
  }
  return { message: text('none'), finish: 'stop' };
}

export async function startEchoLlm(): Promise<EchoLlm> {
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => { raw += chunk; });
    req.on('end', () => {
      const { message, finish } = answer(raw ? JSON.parse(raw) : {});
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        id: 'chatcmpl-echo', object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: 'echo',
        choices: [{ index: 0, message, finish_reason: finish }],
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
