import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, client, startTestService, type TestService } from './helpers.ts';
import { keyWith, newAgent, orgWithAgent } from './support/orgs.ts';
import { cardSignature, CARD_TTL_SECONDS } from '../api/routes/conversation-cards.ts';
import { createSecretBox, decodeSecretsKey } from '../src/crypto/secret-box.ts';
import { newId } from '../src/ids.ts';

// No worker: deleting an agent leaves it marked deleted (its purge never runs), the state in which
// its conversations must already be gone from the API; conversations are seeded with SQL.
let svc: TestService;
beforeAll(async () => { svc = await startTestService({}, { worker: false }); });
afterAll(async () => { await svc?.stop(); });

const C = '/api/v1/rest/conversations';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ROW_KEYS = ['contact_id', 'criteria_results', 'duration_seconds', 'ended_at', 'extracted_data', 'id', 'intent', 'is_simulated',
  'labels', 'outcome', 'page_url', 'started_at', 'status', 'surface', 'widget_id'];

interface Seed {
  isSimulated?: boolean; startedAt?: Date; endedAt?: Date | null; lastActivityAt?: Date; surface?: string; pageUrl?: string;
  messages?: { role: string; text: string; ts: Date; id?: string }[]; toolCalls?: unknown[];
  intent?: string; outcome?: string; extracted?: Record<string, unknown>; criteria?: unknown[]; id?: string;
}

/** A conversation written as the runtime would (the public endpoints are another family's). */
async function seed(orgId: string, agentId: string, s: Seed = {}): Promise<string> {
  const id = s.id ?? newId();
  const startedAt = s.startedAt ?? new Date();
  const ended = s.endedAt === undefined ? null : s.endedAt;
  await svc.sql`insert into conversations (id, org_id, agent_id, surface, is_simulated, started_at, ended_at, last_activity_at, status,
      page_url, intent, outcome, extracted_data, criteria_results, tool_calls)
    values (${id}, ${orgId}, ${agentId}, ${s.surface ?? 'web'}, ${s.isSimulated ?? false}, ${startedAt}, ${ended},
      ${s.lastActivityAt ?? ended ?? startedAt}, ${ended ? 'ended' : 'active'}, ${s.pageUrl ?? 'https://example.com/pricing'},
      ${s.intent ?? null}, ${s.outcome ?? null}, ${svc.sql.json((s.extracted ?? {}) as never)}, ${svc.sql.json((s.criteria ?? []) as never)},
      ${svc.sql.json((s.toolCalls ?? []) as never)})`;
  for (const m of s.messages ?? []) {
    await svc.sql`insert into conversation_messages (id, conversation_id, role, text, ts) values (${m.id ?? newId()}, ${id}, ${m.role}, ${m.text}, ${m.ts})`;
  }
  return id;
}

const at = (iso: string) => new Date(iso);
const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((c) => c.id);

describe('conversations list', () => {
  it('lists real conversations by default, simulations with simulated=1, both with simulated=all; newest first with an exact total', async () => {
    const { api, orgId, agent } = await orgWithAgent(svc);
    const real1 = await seed(orgId, agent.id, { startedAt: at('2026-01-01T10:00:00.000Z') });
    const sim = await seed(orgId, agent.id, { startedAt: at('2026-01-02T10:00:00.000Z'), isSimulated: true });
    const real2 = await seed(orgId, agent.id, { startedAt: at('2026-01-03T10:00:00.000Z') });

    const def = await api.get(C);
    expect(def.status, def.text).toBe(200);
    expect(ids(def)).toEqual([real2, real1]);
    expect(def.body).toMatchObject({ total: 2, limit: 50, offset: 0 });
    const sims = await api.get(`${C}?simulated=1`);
    expect(ids(sims)).toEqual([sim]);
    expect(sims.body.total).toBe(1);
    expect(sims.body.data[0].is_simulated).toBe(true);
    const all = await api.get(`${C}?simulated=all`);
    expect(ids(all)).toEqual([real2, sim, real1]);
    expect(all.body.total).toBe(3);
  });

  it('answers the row fields, duration in whole seconds up to the end or the last activity', async () => {
    const { api, orgId, agent } = await orgWithAgent(svc);
    const ended = await seed(orgId, agent.id, {
      startedAt: at('2026-02-01T10:00:00.000Z'), endedAt: at('2026-02-01T10:02:05.600Z'), surface: 'phone', pageUrl: 'https://example.com/a',
      intent: 'pricing_question', outcome: 'resolved', extracted: { email: 'ada@example.com' },
      criteria: [{ criterion: 'Collect an email', verdict: 'pass', reason: 'given' }, { criterion: 'Book a demo', verdict: 'not_applicable', reason: '' }],
    });
    const active = await seed(orgId, agent.id, { startedAt: at('2026-02-02T10:00:00.000Z'), lastActivityAt: at('2026-02-02T10:00:42.000Z') });
    const res = await api.get(C);
    expect(res.status).toBe(200);
    const [a, e] = res.body.data;
    for (const row of res.body.data) expect(Object.keys(row).sort()).toEqual(ROW_KEYS);
    expect(a).toEqual({
      id: active, widget_id: agent.id, surface: 'web', is_simulated: false, status: 'active', started_at: '2026-02-02T10:00:00.000Z',
      ended_at: null, duration_seconds: 42, page_url: 'https://example.com/pricing', intent: null, outcome: null,
      extracted_data: {}, criteria_results: [], contact_id: null, labels: [],
    });
    expect(e).toMatchObject({
      id: ended, surface: 'phone', status: 'ended', ended_at: '2026-02-01T10:02:05.600Z', duration_seconds: 126, page_url: 'https://example.com/a',
      intent: 'pricing_question', outcome: 'resolved', extracted_data: { email: 'ada@example.com' },
    });
    expect(e.criteria_results).toEqual([{ criterion: 'Collect an email', verdict: 'pass', reason: 'given' }, { criterion: 'Book a demo', verdict: 'not_applicable', reason: '' }]);
    expect(e.started_at).toMatch(ISO_MS);
  });

  it('filters by widget_id (an agent id; an unknown agent has none), and pages with limit and offset', async () => {
    const { api, orgId, agent } = await orgWithAgent(svc);
    const other = await newAgent(api, 'Sales');
    const mine: string[] = [];
    for (let i = 0; i < 5; i++) mine.unshift(await seed(orgId, agent.id, { startedAt: new Date(Date.UTC(2026, 0, 1 + i)) }));
    const theirs = await seed(orgId, other.id, { startedAt: at('2026-03-01T00:00:00.000Z') });
    await seed(orgId, agent.id, { startedAt: at('2026-03-02T00:00:00.000Z'), isSimulated: true });

    const page = await api.get(`${C}?widget_id=${agent.id}&limit=2&offset=1`);
    expect(page.status, page.text).toBe(200);
    expect(ids(page)).toEqual(mine.slice(1, 3));
    expect(page.body).toMatchObject({ total: 5, limit: 2, offset: 1 });
    expect((await api.get(`${C}?widget_id=${agent.id}&simulated=all`)).body.total).toBe(6);
    expect((await api.get(`${C}?widget_id=${agent.id}&simulated=1`)).body.total).toBe(1);
    const o = await api.get(`${C}?widget_id=${other.id}`);
    expect(ids(o)).toEqual([theirs]);
    expect(o.body.total).toBe(1);
    const none = await api.get(`${C}?widget_id=${newId()}`);
    expect(none.body).toEqual({ data: [], total: 0, limit: 50, offset: 0 });
    const past = await api.get(`${C}?offset=100`);
    expect(past.body).toMatchObject({ data: [], total: 6 });
    expect((await api.get(`${C}?limit=100`)).status).toBe(200);
  });

  it('breaks ties of started_at by id, newest first', async () => {
    const { api, orgId, agent } = await orgWithAgent(svc);
    const t = at('2026-04-01T00:00:00.000Z');
    const made = [await seed(orgId, agent.id, { startedAt: t }), await seed(orgId, agent.id, { startedAt: t }), await seed(orgId, agent.id, { startedAt: t })];
    expect(ids(await api.get(C))).toEqual([...made].sort().reverse());
  });

  it('refuses bad query parameters with 400', async () => {
    const { api } = await orgWithAgent(svc);
    for (const query of ['limit=0', 'limit=101', 'offset=-1', 'simulated=2', 'simulated=true', 'simulated=', 'widget_id=wgt_abc', 'limit=1e1', 'colour=red', 'limit=5&limit=6']) {
      const res = await api.get(`${C}?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.code).toBe('validation_error');
    }
  });

  it('leaves out conversations of deleted agents, in rows, totals and reads', async () => {
    const { api, orgId, agent } = await orgWithAgent(svc);
    const doomed = await newAgent(api, 'Doomed');
    const kept = await seed(orgId, agent.id);
    const gone = await seed(orgId, doomed.id);
    await seed(orgId, doomed.id, { isSimulated: true });
    expect((await api.get(`${C}?simulated=all`)).body.total).toBe(3);
    expect((await api.delete(`/api/v1/rest/agents/${doomed.id}`)).status).toBe(204);
    const all = await api.get(`${C}?simulated=all`);
    expect(ids(all)).toEqual([kept]);
    expect(all.body.total).toBe(1);
    expect((await api.get(C)).body.total).toBe(1);
    expect((await api.get(`${C}?widget_id=${doomed.id}`)).body).toMatchObject({ data: [], total: 0 });
    expect((await api.get(`${C}/${gone}`)).status).toBe(404);
    expect((await api.delete(`${C}/${gone}`)).status).toBe(404);
  });
});

describe('one conversation', () => {
  it('answers the row with the ordered transcript, tool calls and a card URL', async () => {
    const { api, orgId, agent } = await orgWithAgent(svc);
    const t0 = at('2026-05-01T09:00:00.000Z');
    const sameTs = at('2026-05-01T09:00:05.000Z');
    const [m1, m2a, m2b] = [newId(), newId(), newId()].sort();
    const id = await seed(orgId, agent.id, {
      startedAt: t0, endedAt: at('2026-05-01T09:01:00.000Z'),
      // Inserted out of order: the transcript is ordered by time, then id.
      messages: [
        { id: m2b, role: 'visitor', text: 'and the price?', ts: sameTs },
        { id: m1, role: 'agent', text: 'Hello! How can I help?', ts: t0 },
        { id: m2a, role: 'visitor', text: 'hi', ts: sameTs },
      ],
      toolCalls: [{ name: 'search_knowledge', args: { query: 'price' }, ts: '2026-05-01T09:00:06.000Z' }],
    });
    const res = await api.get(`${C}/${id}`);
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([...ROW_KEYS, 'card_url', 'has_recording', 'messages', 'tool_calls', 'usage', 'voice_turns'].sort());
    expect(res.body).toMatchObject({ id, widget_id: agent.id, duration_seconds: 60, status: 'ended' });
    expect(res.body.messages).toEqual([
      { id: m1, role: 'agent', text: 'Hello! How can I help?', ts: '2026-05-01T09:00:00.000Z' },
      { id: m2a, role: 'visitor', text: 'hi', ts: '2026-05-01T09:00:05.000Z' },
      { id: m2b, role: 'visitor', text: 'and the price?', ts: '2026-05-01T09:00:05.000Z' },
    ]);
    expect(res.body.tool_calls).toEqual([{ name: 'search_knowledge', args: { query: 'price' }, ts: '2026-05-01T09:00:06.000Z' }]);
    const card = new URL(res.body.card_url);
    expect(card.origin).toBe(new URL(svc.url).origin);
    expect(card.pathname).toBe(`/api/v1/public/conversation-cards/${id}`);
    const expires = Number(card.searchParams.get('expires'));
    expect(Math.abs(expires - (Date.now() / 1000 + CARD_TTL_SECONDS))).toBeLessThan(60);
  });

  it('answers 404 for an unknown id, another organization\'s, and a malformed one', async () => {
    const { api } = await orgWithAgent(svc);
    const other = await orgWithAgent(svc);
    const theirs = await seed(other.orgId, other.agent.id);
    for (const path of [`${C}/${newId()}`, `${C}/${theirs}`, `${C}/not-a-uuid`]) {
      const res = await api.get(path);
      expect(res.status, path).toBe(404);
      expect(res.body.code).toBe('not_found');
      expect((await api.delete(path)).status, path).toBe(404);
    }
    expect(ids(await api.get(`${C}?simulated=all`))).toEqual([]);
    expect((await other.api.get(`${C}/${theirs}`)).status).toBe(200);
  });
});

describe('transcript card', () => {
  async function conversationWithCard() {
    const { api, orgId } = await orgWithAgent(svc);
    const agent = await newAgent(api, 'Ada & <Co>');
    const id = await seed(orgId, agent.id, {
      startedAt: at('2026-06-01T12:00:00.000Z'), isSimulated: true,
      messages: [
        { role: 'agent', text: 'Welcome!', ts: at('2026-06-01T12:00:00.000Z') },
        { role: 'visitor', text: '<script>alert("x")</script> & "quotes"', ts: at('2026-06-01T12:00:03.000Z') },
        { role: 'human_agent', text: 'Taking over', ts: at('2026-06-01T12:00:09.000Z') },
      ],
    });
    const res = await api.get(`${C}/${id}`);
    expect(res.status).toBe(200);
    return { id, url: res.body.card_url as string, api };
  }

  it('serves self-contained, escaped HTML to a plain fetch, with a strict policy and no cookie', async () => {
    const { url } = await conversationWithCard();
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'; frame-ancestors *");
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(res.headers.get('x-frame-options')).toBeNull();
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).not.toMatch(/<script|<link|<img|src=|href=/i);
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;quotes&quot;');
    expect(html).toContain('<h1>Ada &amp; &lt;Co&gt;</h1>');
    expect(html).toContain('2026-06-01 12:00 UTC');
    expect(html).toContain('simulation');
    expect(html).toMatch(/class="agent"[^]*Welcome![^]*class="visitor"[^]*class="human_agent"[^]*Taking over/);
  });

  it('refuses a tampered, expired or missing signature with 403 invalid_signature', async () => {
    const { id, url } = await conversationWithCard();
    const other = await conversationWithCard();
    const u = new URL(url);
    const sig = u.searchParams.get('sig')!;
    const expires = Number(u.searchParams.get('expires'));
    const box = createSecretBox(decodeSecretsKey(svc.config.SECRETS_KEY!, 'SECRETS_KEY'));
    const past = Math.floor(Date.now() / 1000) - 1;
    const base = `${u.origin}${u.pathname}`;
    const refused = [
      `${base}?expires=${expires}&sig=${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`,
      `${base}?expires=${expires + 3600}&sig=${sig}`,
      `${u.origin}/api/v1/public/conversation-cards/${other.id}?expires=${expires}&sig=${sig}`,
      `${base}?expires=${past}&sig=${cardSignature(box, id, past)}`,
      `${base}?expires=${expires}`,
      base,
      `${base}?expires=${expires}&sig=${sig}&sig=${sig}`,
      `${u.origin}/api/v1/public/conversation-cards/nope?expires=${expires}&sig=${sig}`,
    ];
    for (const bad of refused) {
      const res = await fetch(bad);
      expect(res.status, bad).toBe(403);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      const body = await res.json() as { code: string; title: string; request_id: string };
      expect(body.code).toBe('invalid_signature');
      expect(body.title).toBe('Link signature is invalid or expired');
      expect(body.request_id).toBeTruthy();
    }
    // The key the test signs with is the service's: a fresh signature of its own does open the card.
    const later = Math.floor(Date.now() / 1000) + 60;
    expect((await fetch(`${base}?expires=${later}&sig=${cardSignature(box, id, later)}`)).status).toBe(200);
  });

  it('answers 404 once the conversation is deleted', async () => {
    const { id, url, api } = await conversationWithCard();
    expect((await api.delete(`${C}/${id}`)).status).toBe(204);
    expect((await fetch(url)).status).toBe(404);
  });
});

describe('deleting a conversation', () => {
  it('removes it and its transcript, keeps its usage record with the reference cleared, stops its workflow', async () => {
    const { api, orgId, agent } = await orgWithAgent(svc);
    const id = await seed(orgId, agent.id, { messages: [{ role: 'agent', text: 'hi', ts: new Date() }] });
    const keep = await seed(orgId, agent.id);
    const usage = newId();
    const otherUsage = newId();
    await svc.sql`insert into usage_records (id, org_id, agent_id, conversation_id, surface, duration_seconds, messages)
      values (${usage}, ${orgId}, ${agent.id}, ${id}, 'web', 61, 1), (${otherUsage}, ${orgId}, ${agent.id}, ${keep}, 'web', 5, 0)`;
    // A lifecycle workflow still running (no worker takes it here): the delete terminates it.
    const handle = await svc.temporal.workflow.start('conversationLifecycle', {
      workflowId: `conversation:${id}`, taskQueue: `${svc.config.TASK_QUEUE_PREFIX}-nobody`, args: [{ conversationId: id }],
    });

    const res = await api.delete(`${C}/${id}`);
    expect(res.status, res.text).toBe(204);
    expect(res.text).toBe('');
    expect((await api.get(`${C}/${id}`)).status).toBe(404);
    expect(await svc.sql`select 1 from conversations where id = ${id}`).toHaveLength(0);
    expect(await svc.sql`select 1 from conversation_messages where conversation_id = ${id}`).toHaveLength(0);
    const records = await svc.sql<{ id: string; conversation_id: string | null; duration_seconds: number }[]>`
      select id, conversation_id, duration_seconds from usage_records where id in (${usage}, ${otherUsage}) order by duration_seconds desc`;
    expect(records).toEqual([{ id: usage, conversation_id: null, duration_seconds: 61 }, { id: otherUsage, conversation_id: keep, duration_seconds: 5 }]);
    expect((await handle.describe()).status.name).toBe('TERMINATED');
    expect((await api.get(C)).body.total).toBe(1);
    expect((await api.delete(`${C}/${id}`)).status).toBe(404);
  });
});

describe('permissions', () => {
  it('reads with conversations.read, deletes with conversations.write; 401 without a token', async () => {
    const { api, orgId, agent } = await orgWithAgent(svc);
    const id = await seed(orgId, agent.id);
    const reader = (await keyWith(svc, api, ['conversations.read'])).api;
    const writer = (await keyWith(svc, api, ['conversations.write'])).api;
    const nobody = (await keyWith(svc, api, ['agents.read'])).api;
    expect((await reader.get(C)).status).toBe(200);
    expect((await reader.get(`${C}/${id}`)).status).toBe(200);
    for (const [who, method, path, permission] of [
      [nobody, 'get', C, 'conversations.read'], [nobody, 'get', `${C}/${id}`, 'conversations.read'],
      [reader, 'delete', `${C}/${id}`, 'conversations.write'], [writer, 'get', C, 'conversations.read'],
    ] as const) {
      const res = await (method === 'get' ? who.get(path) : who.delete(path));
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body).toMatchObject({ code: 'missing_permission', required_permission: permission });
    }
    // 403 comes before 400 and 404.
    expect((await nobody.get(`${C}?limit=0`)).status).toBe(403);
    expect((await reader.delete(`${C}/${newId()}`)).status).toBe(403);
    expect((await client(svc.url).get(C)).status).toBe(401);
    expect((await writer.delete(`${C}/${id}`)).status).toBe(204);
  });
});

describe('totals stay exact', () => {
  const counted = async (orgId: string, sim: boolean | null) => {
    const condition = sim === null ? svc.sql`` : svc.sql`and is_simulated = ${sim}`;
    const [row] = await svc.sql<{ n: number }[]>`select count(*)::int as n from conversations where org_id = ${orgId} ${condition}`;
    return row!.n;
  };

  it('under concurrent inserts, bulk inserts, deletes through the API and in bulk, and an agent cascade', async () => {
    const { api, orgId, agent } = await orgWithAgent(svc);
    const second = await newAgent(api, 'Second');
    // Concurrent transactions on different connections, each inserting some and committing or rolling back.
    await Promise.all(Array.from({ length: 24 }, (_, i) => svc.sql.begin(async (tx) => {
      for (let j = 0; j < 5; j++) {
        await tx`insert into conversations (id, org_id, agent_id, surface, is_simulated)
          values (${newId()}, ${orgId}, ${i % 2 ? agent.id : second.id}, 'web', ${j === 0})`;
      }
      if (i % 6 === 5) throw new Error('rolled back');
    }).catch((err: Error) => { if (err.message !== 'rolled back') throw err; })));
    await svc.sql`insert into conversations (id, org_id, agent_id, surface, is_simulated)
      select gen_random_uuid(), ${orgId}, ${agent.id}, 'sms', g % 4 = 0 from generate_series(1, 500) g`;
    const check = async () => {
      const [real, sims, all] = await Promise.all([api.get(`${C}?limit=1`), api.get(`${C}?limit=1&simulated=1`), api.get(`${C}?limit=1&simulated=all`)]);
      expect(real.body.total).toBe(await counted(orgId, false));
      expect(sims.body.total).toBe(await counted(orgId, true));
      expect(all.body.total).toBe(await counted(orgId, null));
    };
    await check();
    expect(await counted(orgId, null)).toBe(20 * 5 + 500);

    const some = await svc.sql<{ id: string }[]>`select id from conversations where org_id = ${orgId} order by id limit 10`;
    await Promise.all(some.map((r) => api.delete(`${C}/${r.id}`).then((res) => expect(res.status).toBe(204))));
    await svc.sql`delete from conversations where org_id = ${orgId} and surface = 'sms' and is_simulated`;
    await check();
    // The purge of an agent deletes its conversations in batches; the agent row goes last, cascading.
    await svc.sql`delete from agents where id = ${second.id}`;
    await check();
    const [{ n }] = await svc.sql<[{ n: number }]>`select count(*)::int as n from conversations where agent_id = ${agent.id}`;
    expect((await api.get(`${C}?simulated=all&widget_id=${agent.id}`)).body.total).toBe(n);
  });
});

describe('reference', () => {
  it('documents the family in the OpenAPI document', async () => {
    const doc = (await call(svc.url, 'GET', '/api/v1/openapi.json')).body;
    expect(Object.keys(doc.paths[C])).toEqual(['get']);
    expect(Object.keys(doc.paths[`${C}/{id}`]).sort()).toEqual(['delete', 'get']);
    expect(doc.paths[C].get['x-permissions']).toEqual(['conversations.read']);
    expect(doc.paths[`${C}/{id}`].delete['x-permissions']).toEqual(['conversations.write']);
    expect(doc.paths[C].get.parameters.map((p: { name: string }) => p.name)).toEqual(['widget_id', 'simulated', 'tag', 'label', 'from', 'to', 'surface', 'status', 'outcome', 'contact_id', 'assignee_id', 'team_id', 'q', 'limit', 'offset']);
    const { Conversation, ConversationDetail, TranscriptMessage } = doc.components.schemas;
    expect(Object.keys(Conversation.properties).sort()).toEqual(ROW_KEYS);
    expect(Conversation.properties.surface.enum).toEqual(['web', 'phone', 'sms', 'email', 'campaign']);
    expect(Object.keys(ConversationDetail.properties).sort()).toEqual([...ROW_KEYS, 'card_url', 'has_recording', 'messages', 'tool_calls', 'usage', 'voice_turns'].sort());
    expect(TranscriptMessage.properties.role.enum).toEqual(['visitor', 'agent', 'human_agent', 'caller', 'system']);
  });
});

describe('links name PUBLIC_BASE_URL or this host, never a Host header unchecked (issue 40, I16)', () => {
  /** GET with a Host header of our choosing (fetch does not let one be set). */
  const getWithHost = (base: string, path: string, token: string, host: string) => new Promise<{ status: number; body: any }>((resolve, reject) => {
    const url = new URL(path, base);
    const req = request({ hostname: '127.0.0.1', port: url.port, path: url.pathname, headers: { host, authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => { text += c.toString('utf8'); });
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });

  it('card_url ignores a foreign Host, keeps a loopback one, and names PUBLIC_BASE_URL when set', async () => {
    const { token, orgId, agent } = await orgWithAgent(svc);
    const id = await seed(orgId, agent.id);
    const port = new URL(svc.url).port;
    for (const host of ['attacker.example', `attacker.example:${port}`, `localhost:${port}@attacker.example`, `127.0.0.1.attacker.example:${port}`]) {
      const res = await getWithHost(svc.url, `${C}/${id}`, token, host);
      expect(res.status, host).toBe(200);
      expect(new URL(res.body.card_url).origin, host).toBe(`http://localhost:${port}`);
    }
    const local = await getWithHost(svc.url, `${C}/${id}`, token, `127.0.0.1:${port}`);
    expect(new URL(local.body.card_url).origin).toBe(`http://127.0.0.1:${port}`);

    const fronted = await startTestService({ PUBLIC_BASE_URL: 'https://agents.example.com/' }, { worker: false });
    try {
      const other = await orgWithAgent(fronted);
      const card = await getWithHost(fronted.url, `${C}/${await seed(other.orgId, other.agent.id)}`, other.token, 'attacker.example');
      expect(card.body.card_url).toMatch(/^https:\/\/agents\.example\.com\/api\/v1\/public\/conversation-cards\//);
    } finally {
      await fronted.stop();
    }
  });
});

