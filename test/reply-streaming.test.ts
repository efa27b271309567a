import { createServer } from 'node:http';
import { EventSource } from 'eventsource';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, eventually, startTestService, type TestService } from './helpers.ts';
import { newAgent, newOrg } from './support/orgs.ts';
import { startChatCompletionsServer, type ChatCompletionsServer } from './fixtures/chat-completions-server.ts';
import { launchChromium } from './browser.ts';

// Two services: the offline runtime, and the LLM runtime against a local OpenAI-compatible server that streams.
let offline: TestService;
let llmSvc: TestService;
let llm: ChatCompletionsServer;
beforeAll(async () => {
  llm = await startChatCompletionsServer();
  [offline, llmSvc] = await Promise.all([
    startTestService({ SENTENCE_ENCODER: 'off' }),
    startTestService({ SENTENCE_ENCODER: 'off', ALLOW_PRIVATE_NETWORK_TARGETS: true, LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'test-model' }),
  ]);
});
afterAll(async () => {
  await Promise.all([offline?.stop(), llmSvc?.stop()]);
  await llm?.close();
});

interface StreamEvent { event: string; data: any }

/** A conversation with a fresh agent of `svc`, as a visitor starts it. */
async function conversation(svc: TestService) {
  const { api } = await newOrg(svc);
  const agent = await newAgent(api, 'Bakery');
  const pub = client(svc.url);
  const base = `/api/v1/public/widgets/${agent.public_key}/conversations`;
  const started = await pub.post(base, { page_url: 'https://example.com/' });
  expect(started.status, started.text).toBe(201);
  const id = started.body.conversation_id as string;
  return { api, agent, id, token: started.body.visitor_token as string, url: `${svc.url}${base}/${id}/messages` };
}

/** Sends a message asking for the event stream; answers the raw response. */
function post(url: string, token: string, text: string, signal?: AbortSignal) {
  return fetch(url, {
    method: 'POST', signal,
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-visitor-token': token },
    body: JSON.stringify({ text }),
  });
}

/** Reads Server-Sent Events off a response body with a raw reader, handing each to `onEvent` as it arrives. */
async function readEvents(res: Response, onEvent: (e: StreamEvent) => void | 'stop'): Promise<void> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (!event || data === undefined) continue;
      if (onEvent({ event, data: JSON.parse(data) }) === 'stop') {
        await reader.cancel();
        return;
      }
    }
  }
}

describe('streamed replies', () => {
  it('the offline runtime streams its whole reply at once, then the stored message; without the header the answer is JSON as before', async () => {
    const c = await conversation(offline);
    const res = await post(c.url, c.token, 'hello');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events: StreamEvent[] = [];
    await readEvents(res, (e) => { events.push(e); });
    expect(events.map((e) => e.event)).toEqual(['delta', 'done']);
    const done = events[1]!.data;
    expect(done.source).toBe('offline');
    expect(done.messages).toHaveLength(1);
    expect(done.messages[0]).toMatchObject({ role: 'agent' });
    expect(events[0]!.data.text).toBe(done.messages[0].text);
    expect(Array.isArray(done.tool_calls)).toBe(true);

    const plain = await client(offline.url).post(c.url.slice(offline.url.length), { text: 'thanks' }, { 'x-visitor-token': c.token });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toMatch(/^application\/json/);
    expect(plain.body.messages[0].role).toBe('agent');
  });

  it('refusals come as problems before any stream opens', async () => {
    const c = await conversation(offline);
    const pub = client(offline.url);
    expect((await pub.post(`${c.url.slice(offline.url.length).replace(/\/messages$/, '')}/end`, {}, { 'x-visitor-token': c.token })).status).toBe(200);
    const res = await post(c.url, c.token, 'still there?');
    expect(res.status).toBe(409);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await res.json()).code).toBe('invalid_state');
  });

  it('the LLM runtime streams tokens as the model writes them: partial text is read before the end (raw reader)', async () => {
    const c = await conversation(llmSvc);
    let release!: () => void;
    const hold = new Promise<void>((resolve) => { release = resolve; });
    llm.enqueue({ content: 'Our sourdough loaf costs six dollars.', pieces: ['Our ', 'sourdough ', 'loaf ', 'costs ', 'six ', 'dollars.'], holdAfter: 2, hold });
    const res = await post(c.url, c.token, 'How much is the sourdough?');
    expect(res.status).toBe(200);
    const deltas: string[] = [];
    let partialSeen = '';
    let done: any;
    await readEvents(res, (e) => {
      if (e.event === 'delta') {
        deltas.push(e.data.text);
        // The model is held after two pieces: the visitor has them while the rest is not written yet.
        if (deltas.length === 2) {
          partialSeen = deltas.join('');
          release();
        }
      }
      if (e.event === 'done') done = e.data;
    });
    expect(partialSeen).toBe('Our sourdough ');
    expect(deltas.join('')).toBe('Our sourdough loaf costs six dollars.');
    expect(done.source).toBe('llm');
    expect(done.messages[0]).toMatchObject({ role: 'agent', text: 'Our sourdough loaf costs six dollars.' });
    expect(done.messages[0].cut).toBeUndefined();
    const request = llm.requests.at(-1)!.body;
    expect(request).toMatchObject({ stream: true, stream_options: { include_usage: true }, model: 'test-model' });
  });

  it('tool calls streamed in fragments are put together, run, and reported in the final event', async () => {
    const c = await conversation(llmSvc);
    llm.enqueue({ toolCalls: [{ name: 'search_knowledge', args: { query: 'opening hours' } }] }, { content: 'We open at seven.' });
    const res = await post(c.url, c.token, 'When do you open?');
    let done: any;
    await readEvents(res, (e) => { if (e.event === 'done') done = e.data; });
    expect(done.messages[0].text).toBe('We open at seven.');
    expect(done.tool_calls.map((t: { name: string }) => t.name)).toContain('search_knowledge');
    expect(done.tool_calls.find((t: { name: string }) => t.name === 'search_knowledge').args).toMatchObject({ query: 'opening hours' });
    // Tokens per turn and per conversation: two requests (the tool call, then the reply), 10 + 5 tokens each by the fixture's count.
    const detail = (await c.api.get(`/api/v1/rest/conversations/${c.id}`)).body;
    expect(detail.usage).toEqual({ input_tokens: 20, output_tokens: 10, turns: [{ message_id: done.messages[0].id, input_tokens: 20, output_tokens: 10 }] });
    // Ended, the conversation's usage record keeps its tokens (what reports sum).
    expect((await client(llmSvc.url).post(`${c.url.slice(llmSvc.url.length).replace(/\/messages$/, '')}/end`, {}, { 'x-visitor-token': c.token })).status).toBe(200);
    const [usage] = await llmSvc.sql<{ input_tokens: string; output_tokens: string }[]>`select input_tokens, output_tokens from usage_records where conversation_id = ${c.id}`;
    expect([Number(usage!.input_tokens), Number(usage!.output_tokens)]).toEqual([20, 10]);
  });

  it('the stream reads the same with the eventsource client', async () => {
    const c = await conversation(llmSvc);
    // For this turn's request only: in a full run, another test's lingering request (seen once) took a plain queue's answer.
    llm.enqueueFor((r) => JSON.stringify(r.body).includes('When are croissants baked?'), { content: 'Croissants are baked every morning at six.' });
    const events: StreamEvent[] = [];
    await new Promise<void>((resolve, reject) => {
      const source = new EventSource(c.url, {
        // The client's fetch hook makes its request a POST with the message (an EventSource GETs otherwise).
        fetch: (input, init) => fetch(input, {
          ...init, method: 'POST',
          headers: { ...(init?.headers as Record<string, string>), 'content-type': 'application/json', 'x-visitor-token': c.token },
          body: JSON.stringify({ text: 'When are croissants baked?' }),
        }),
      });
      source.addEventListener('delta', (e) => events.push({ event: 'delta', data: JSON.parse(e.data) }));
      source.addEventListener('done', (e) => {
        events.push({ event: 'done', data: JSON.parse(e.data) });
        source.close();
        resolve();
      });
      source.addEventListener('error', (e) => {
        source.close();
        // A connection error has a message; the service's own `error` event (the turn failed) has data.
        reject(new Error(`eventsource error: ${String((e as { message?: string }).message ?? (e as { data?: string }).data)}`));
      });
    });
    const deltas = events.filter((e) => e.event === 'delta').map((e) => e.data.text);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('Croissants are baked every morning at six.');
    expect(events.at(-1)!.data.messages[0].text).toBe('Croissants are baked every morning at six.');
  });

  it('aborting the stream stores what was sent, marked as cut', async () => {
    const c = await conversation(llmSvc);
    // Held for ever after two pieces: only the visitor's abort ends this reply.
    llm.enqueue({ content: 'We deliver within ten miles of the shop.', pieces: ['We ', 'deliver ', 'within ', 'ten ', 'miles.'], holdAfter: 2, hold: new Promise(() => {}) });
    const abort = new AbortController();
    const res = await post(c.url, c.token, 'Do you deliver?', abort.signal);
    const deltas: string[] = [];
    await readEvents(res, (e) => {
      if (e.event === 'delta') deltas.push(e.data.text);
      return deltas.length === 2 ? 'stop' : undefined;
    });
    abort.abort();
    expect(deltas.join('')).toBe('We deliver ');
    const stored = await eventually(async () => {
      const detail = (await c.api.get(`/api/v1/rest/conversations/${c.id}`)).body;
      return detail.messages.find((m: { role: string; cut?: boolean }) => m.role === 'agent' && m.cut);
    });
    expect(stored).toMatchObject({ role: 'agent', text: 'We deliver', cut: true });
    const polled = await client(llmSvc.url).get(`${c.url.slice(llmSvc.url.length)}`, { 'x-visitor-token': c.token });
    expect(polled.status, polled.text).toBe(200);
    expect(polled.body.messages.at(-1)).toMatchObject({ text: 'We deliver', cut: true });
  });

  it('the widget renders the reply as it streams: Chromium sees partial text before the end', async () => {
    const { api } = await newOrg(llmSvc);
    const agent = await newAgent(api, 'Bakery');
    const page = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(`<!doctype html><html lang="en"><head><title>Bakery</title></head><body><h1>Bakery</h1>`
          + `<script src="${llmSvc.url}/embed.js" data-agent="${agent.public_key}" async></script></body></html>`);
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    let browser: Browser | undefined;
    try {
      browser = await launchChromium();
      const tab = await browser.newPage();
      await tab.goto(`http://127.0.0.1:${(page.address() as { port: number }).port}/`);
      let release!: () => void;
      const hold = new Promise<void>((resolve) => { release = resolve; });
      // Scripted for the question it answers: a model call of an earlier test's conversation still under way (the aborted
      // stream's) must not take it.
      llm.enqueueFor((r) => JSON.stringify(r.body).includes('When is rye bread baked?'),
        { content: 'Our rye bread is baked on Fridays.', pieces: ['Our ', 'rye ', 'bread ', 'is ', 'baked ', 'on ', 'Fridays.'], holdAfter: 3, hold });
      const widget = tab.locator('ams-chat-widget');
      await widget.locator('.launcher').click();
      // The greeting first: the conversation has started and the widget takes messages.
      await widget.locator('.msg.agent').first().waitFor();
      await expect.poll(() => widget.locator('textarea').isEnabled()).toBe(true);
      await widget.locator('.typing').waitFor({ state: 'hidden' });
      await widget.locator('textarea').fill('When is rye bread baked?');
      await widget.locator('textarea').press('Enter');
      // The model is held after three pieces: the widget already shows them.
      const live = widget.locator('.msg.agent.streaming');
      await expect.poll(() => live.textContent(), { timeout: 15_000 }).toBe('Our rye bread ');
      release();
      // At the end the streamed text gives way to the stored message.
      await expect.poll(() => live.count(), { timeout: 15_000 }).toBe(0);
      expect(await widget.locator('.msg.agent').last().textContent()).toBe('Our rye bread is baked on Fridays.');
    } finally {
      await browser?.close();
      await new Promise((resolve) => page.close(resolve));
    }
  });
});
