import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, eventually, freshDatabase, startTestService, type TestService } from './helpers.ts';
import { keyWith, newAgent, newOrg, type Api } from './support/orgs.ts';
import { spoolDirOf, spoolFileName, spooledMailOf } from '../src/mail/spool.ts';
import { createSql } from '../src/db/index.ts';
import { insertMessages } from '../src/db/conversations.ts';
import { startChatCompletionsServer, type ChatCompletionsServer, type RecordedRequest } from './fixtures/chat-completions-server.ts';
import { startReceiver, type Receiver } from './webhook-receiver.ts';
import { REDACTION_KINDS, type RedactionKind } from '../src/schemas/governance.ts';

/**
 * Issue 47, "each redaction kind is tested on every path": for every kind, an agent that hides only
 * that kind, everywhere, and one conversation through the widget API whose visitor says a value of
 * the kind (a true positive) and a near miss (a false positive the detector must leave alone). Then,
 * per path, what left the service: the stored transcript (the API's detail), what the model provider
 * received (a local chat-completions server), webhook payloads (a local receiver), a report's figures
 * and file (live inbox tags), and the service's log (always redacted, whatever the targets).
 */

const R = '/api/v1/rest';
const ALL_TARGETS = ['transcript', 'llm', 'webhooks', 'reports'];
const PATTERNS = [{ name: 'member_no', pattern: 'MBR-\\d{6}' }];

/** Per kind: a value it finds, a near miss it must not, and the mask the value shows as. */
const CASES: Record<RedactionKind, { hit: string; miss: string; mask: string }> = {
  email: { hit: 'jo.doe@example.com', miss: 'jo.doe at example', mask: '•••@•••' },
  phone: { hit: '+1 415 555 0142', miss: 'order 12345678', mask: '+1 ••• ••• 0142' },
  card: { hit: '4111 1111 1111 1111', miss: '4111 1111 1111 1112', mask: '•••• •••• •••• 1111' },
  iban: { hit: 'DE89 3704 0044 0532 0130 00', miss: 'DE89 3704 0044 0532 0130 01', mask: 'DE•• •••• 3000' },
  national_id: { hit: '123-45-6789', miss: '000-12-3456', mask: '•••••••••' },
  pattern: { hit: 'MBR-123456', miss: 'MBR-12', mask: '[member_no]' },
};
const saidFor = (kind: RedactionKind) => `case-${kind}: mine is ${CASES[kind].hit}; not ${CASES[kind].miss}.`;
const kindOf = (request: RecordedRequest) => REDACTION_KINDS.find((k) => JSON.stringify(request.body.messages).includes(`case-${k}:`));

const logLines: string[] = [];
let svc: TestService;
let llm: ChatCompletionsServer;
let receiver: Receiver;
let db: Awaited<ReturnType<typeof freshDatabase>>;

beforeAll(async () => {
  // The model answers turns plainly; an evaluation extracts, as a model would, the values the visitor gave (the
  // model's own words, so the webhook and report paths are tested on their own, not on what the llm path masked).
  llm = await startChatCompletionsServer({
    fallback: (request) => {
      const system = String(request.body.messages?.[0]?.content ?? '');
      const kind = kindOf(request);
      if (!system.startsWith('You evaluate') || !kind) return { content: 'Noted, thank you.' };
      return { content: JSON.stringify({ extracted_data: { note: `${CASES[kind].hit} / ${CASES[kind].miss}` }, criteria_results: [], intent: 'contact_request', outcome: 'resolved' }) };
    },
  });
  receiver = await startReceiver();
  // A database of its own: on the run's shared one, any other file's service (with its own settings: private
  // targets refused, retries minutes apart) may claim this file's webhook deliveries, as replicas of one
  // deployment do, and the evaluation's event then arrives late or never.
  db = await freshDatabase();
  svc = await startTestService({ LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'test-model', ALLOW_PRIVATE_NETWORK_TARGETS: true, WEBHOOK_RETRY_DELAYS: '1,1' }, {
    databaseUrl: db.url, env: { LOG_LEVEL: 'info' }, logDestination: { write: (line: string) => { logLines.push(line); } },
  });
});
afterAll(async () => { await svc?.stop(); await llm?.close(); await receiver?.close(); await db?.drop(); });

interface Setup { kind: RedactionKind; api: Api; agentId: string; conversationId: string; hook: string }

/** An organization whose one agent hides `kind` on every target, a webhook receiving everything, and one ended conversation. */
async function converse(kind: RedactionKind): Promise<Setup> {
  const { api } = await newOrg(svc);
  const agent = await newAgent(api, `Desk ${kind}`);
  expect((await api.patch(`${R}/agents/${agent.id}`, { data_schema: [{ name: 'note', type: 'string' }] })).status).toBe(200);
  const put = await api.put(`${R}/agents/${agent.id}/redaction`, { kinds: [kind], targets: ALL_TARGETS, national_id_countries: ['US'], patterns: PATTERNS });
  expect(put.status, put.text).toBe(200);
  const hook = receiver.url();
  expect((await api.post(`${R}/webhooks`, { url: hook, events: ['*'] })).status).toBe(201);
  const base = `/api/v1/public/widgets/${agent.public_key}/conversations`;
  const started = await call(svc.url, 'POST', base, { body: { page_url: 'https://example.com/' } });
  expect(started.status, started.text).toBe(201);
  const headers = { 'x-visitor-token': started.body.visitor_token as string };
  const sent = await call(svc.url, 'POST', `${base}/${started.body.conversation_id}/messages`, { body: { text: saidFor(kind) }, headers });
  expect(sent.status, sent.text).toBe(200);
  expect((await call(svc.url, 'POST', `${base}/${started.body.conversation_id}/end`, { headers })).status).toBe(200);
  return { kind, api, agentId: agent.id as string, conversationId: started.body.conversation_id as string, hook };
}

/** `text` holds the mask and the near miss, never the value. */
function expectMasked(text: string, kind: RedactionKind, opts: { fold?: boolean } = {}) {
  const c = CASES[kind];
  const fold = (s: string) => (opts.fold ? s.toLowerCase() : s);
  expect(text, `${kind}: the value`).not.toContain(fold(c.hit));
  expect(text, `${kind}: the mask`).toContain(c.mask);
  expect(text, `${kind}: the near miss`).toContain(fold(c.miss));
}

let setups: Setup[];

describe('every redaction kind on every path', () => {
  beforeAll(async () => { setups = await Promise.all(REDACTION_KINDS.map(converse)); }, 60_000);

  it('the stored transcript', async () => {
    for (const s of setups) {
      const detail = await s.api.get(`${R}/conversations/${s.conversationId}`);
      expect(detail.status, detail.text).toBe(200);
      const visitor = (detail.body.messages as { role: string; text: string }[]).find((m) => m.role === 'visitor')!.text;
      expect(visitor).toBe(saidFor(s.kind).replace(CASES[s.kind].hit, CASES[s.kind].mask));
    }
  });

  it('the text sent to the model provider (turns and evaluations)', async () => {
    for (const s of setups) {
      const sent = await eventually(async () => {
        const mine = llm.requests.filter((r) => kindOf(r) === s.kind);
        return mine.some((r) => String(r.body.messages[0].content).startsWith('You evaluate')) ? mine : null;
      });
      expect(sent.length).toBeGreaterThanOrEqual(2);
      for (const r of sent) expectMasked(JSON.stringify(r.body.messages), s.kind);
    }
  });

  it('webhook payloads, as the receiver got them', async () => {
    for (const s of setups) {
      // The evaluation's event, delivered: on a loaded machine its first attempt may miss the 15 s answer window and
      // wait for its retry (WEBHOOK_RETRY_DELAYS, 1 s here), so the wait allows one, and the test's own time both.
      const evaluated = await eventually(async () => receiver.received(s.hook).find((r) => r.body.includes('"conversation.evaluated"')) ?? null, 45_000);
      expect(JSON.parse(evaluated.body).data.conversation.extracted_data.note).toBe(`${CASES[s.kind].mask} / ${CASES[s.kind].miss}`);
      for (const r of receiver.received(s.hook)) expect(r.body).not.toContain(CASES[s.kind].hit);
    }
  }, 120_000);

  it('a report\'s figures and its file', async () => {
    await Promise.all(setups.map(async (s) => {
      const c = CASES[s.kind];
      const tagged = await s.api.patch(`${R}/conversations/${s.conversationId}/annotations`, { tags: [c.hit, c.miss] });
      expect(tagged.status, tagged.text).toBe(200);
      const report = await s.api.post(`${R}/reports`, { name: `Tags ${s.kind}`, data_categories: ['volume'], format: 'raw', frequency: 'manual', widget_ids: [s.agentId] });
      expect(report.status, report.text).toBe(201);
      const end = new Date(Date.now() + 60_000);
      const run = await s.api.post(`${R}/reports/${report.body.id}/run`, { period_start: new Date(end.getTime() - 86_400_000).toISOString(), period_end: end.toISOString() });
      expect(run.status, run.text).toBe(201);
      const done = await eventually(async () => {
        const r = await s.api.get(`${R}/reports/${report.body.id}/runs/${run.body.id}`);
        return r.body.status !== 'generating' ? r.body : null;
      }, 60_000);
      expect(done.status).toBe('succeeded');
      const [stored] = await svc.sql<{ data: string }[]>`select data::text as data from report_runs where id = ${run.body.id}`;
      expectMasked(stored!.data, s.kind, { fold: true });
      expectMasked(await (await fetch(done.download_url)).text(), s.kind, { fold: true });
    }));
  }, 90_000);

  it('logs: a line naming the agent hides its kinds, even with no target set', async () => {
    for (const s of setups) {
      // No target at all: logs are redacted all the same.
      expect((await s.api.put(`${R}/agents/${s.agentId}/redaction`, { kinds: [s.kind], targets: [], national_id_countries: ['US'], patterns: PATTERNS })).status).toBe(200);
      logLines.length = 0;
      svc.log.warn({ agent_id: s.agentId, said: saidFor(s.kind), err: new Error(`refused: ${saidFor(s.kind)}`) }, `visitor said ${saidFor(s.kind)}`);
      expect(logLines).toHaveLength(1);
      const line = JSON.parse(logLines[0]!) as { msg: string; said: string; err: { message: string } };
      for (const text of [line.msg, line.said, line.err.message]) expectMasked(text, s.kind);
    }
    // A line naming no agent hides e-mail, phone, card and IBAN always.
    logLines.length = 0;
    svc.log.info(`always: ${CASES.email.hit}, ${CASES.phone.hit}, ${CASES.card.hit}, ${CASES.iban.hit}`);
    expect(logLines.join('')).not.toMatch(/jo\.doe@example\.com|415 555 0142|4111 1111 1111 1111|DE89 3704 0044/);
  });
});

describe('a phone number captured into data_schema', () => {
  it('is stored sealed in the captured data, masked in the transcript, answered as captured by the export; its notification mail is in the export and goes with the erase', async () => {
    const { api, token } = await newOrg(svc);
    const agent = await newAgent(api, 'Leads');
    const patched = await api.patch(`${R}/agents/${agent.id}`, { data_schema: [{ name: 'phone', type: 'phone', required: true }], notification_email: 'desk@example.net' });
    expect(patched.status, patched.text).toBe(200);
    expect((await api.put(`${R}/agents/${agent.id}/redaction`, { kinds: ['phone'], targets: ['transcript', 'llm'], national_id_countries: [], patterns: [] })).status).toBe(200);
    const base = `/api/v1/public/widgets/${agent.public_key}/conversations`;
    const started = await call(svc.url, 'POST', base, { body: { page_url: 'https://example.com/' } });
    const id = started.body.conversation_id as string;
    const headers = { 'x-visitor-token': started.body.visitor_token as string };
    expect((await call(svc.url, 'POST', `${base}/${id}/messages`, { body: { text: 'call me back on +1 415 555 0142 please' }, headers })).status).toBe(200);

    const detail = await api.get(`${R}/conversations/${id}`);
    expect(detail.body.messages.find((m: { role: string }) => m.role === 'visitor').text).toBe('call me back on +1 ••• ••• 0142 please');
    const [row] = await svc.sql<{ captured: Record<string, string>; text: string }[]>`select captured_data as captured, captured_data::text as text from conversations where id = ${id}`;
    expect(row!.captured.phone).toMatch(/^sealed:v1:/);
    expect(row!.text).not.toMatch(/4155550142|415 555 0142/);

    // The notification (the data schema is complete) is spooled as an .eml file of the organization.
    const spooled = await eventually(async () => {
      const found = await spooledMailOf(svc.config, (await svc.sql<{ org_id: string }[]>`select org_id from conversations where id = ${id}`)[0]!.org_id);
      return found.length ? found : null;
    });
    expect(await readFile(join(spoolDirOf(svc.config), spooled[0]!.file), 'utf8')).toContain('+14155550142');

    expect((await call(svc.url, 'POST', `${base}/${id}/end`, { headers })).status).toBe(200);
    // The evaluation matches the conversation to a contact by the captured phone.
    const contactId = await eventually(async () => (await api.get(`${R}/conversations/${id}`)).body.contact_id as string | null);
    const exporter = await keyWith(svc, token, ['contacts.export']);
    const exported = await exporter.api.get(`${R}/contacts/${contactId}/export`);
    expect(exported.status, exported.text).toBe(200);
    expect(exported.body.data.conversations.find((c: { id: string }) => c.id === id).captured_data).toEqual({ phone: '+14155550142' });
    expect(exported.body.data.mail_spool).toMatchObject([{ file: spooled[0]!.file, to: 'desk@example.net' }]);

    const eraser = await keyWith(svc, token, ['contacts.erase']);
    const erased = await eraser.api.post(`${R}/contacts/${contactId}/erase`);
    expect(erased.status, erased.text).toBe(200);
    expect(erased.body.deleted.mail_spool).toBe(1);
    await expect(readFile(join(spoolDirOf(svc.config), spooled[0]!.file))).rejects.toThrow(/ENOENT/);
  }, 60_000);
});

describe('the mail spool under retention', () => {
  it('an organization\'s spooled mail past its inbound_mail window goes; newer mail and other organizations\' stay', async () => {
    const { api, orgId } = await newOrg(svc);
    const other = await newOrg(svc);
    const dir = spoolDirOf(svc.config);
    await mkdir(dir, { recursive: true });
    const spool = async (org: string, daysAgo: number) => {
      const file = spoolFileName(Date.now() - daysAgo * 86_400_000, org, `${randomUUID()}@example.net`);
      await writeFile(join(dir, file), 'To: someone@example.org\r\nSubject: x\r\n\r\nhello\r\n');
      return file;
    };
    const [old, recent, othersOld] = [await spool(orgId, 9), await spool(orgId, 2), await spool(other.orgId, 9)];
    expect((await api.put(`${R}/governance/retention`, { inbound_mail: 5 })).status).toBe(200);
    const res = await api.post(`${R}/governance/retention/run`);
    expect(res.status, res.text).toBe(202);
    const result = await svc.temporal.workflow.getHandle(res.body.workflow_id).result() as { deleted: Record<string, number> };
    expect(result.deleted).toEqual({ mail_spool: 1 });
    expect((await spooledMailOf(svc.config, orgId)).map((m) => m.file)).toEqual([recent]);
    expect((await spooledMailOf(svc.config, other.orgId)).map((m) => m.file)).toEqual([othersOld]);
    expect(old).not.toBe(recent);
  }, 60_000);
});

describe('redaction settings are cached per agent (issue 47 review)', () => {
  it('a message stored after another replica changed the settings applies the new ones', async () => {
    const { api } = await newOrg(svc);
    const agent = await newAgent(api, 'Cached');
    expect((await api.put(`${R}/agents/${agent.id}/redaction`, { kinds: ['email'], targets: ['transcript'], national_id_countries: [], patterns: [] })).status).toBe(200);
    const base = `/api/v1/public/widgets/${agent.public_key}/conversations`;
    const started = await call(svc.url, 'POST', base, { body: { page_url: 'https://example.com/' } });
    const id = started.body.conversation_id as string;
    const headers = { 'x-visitor-token': started.body.visitor_token as string };
    const say = async (text: string) => {
      expect((await call(svc.url, 'POST', `${base}/${id}/messages`, { body: { text }, headers })).status).toBe(200);
      const messages = (await api.get(`${R}/conversations/${id}`)).body.messages as { role: string; text: string }[];
      return messages.filter((m) => m.role === 'visitor').at(-1)!.text;
    };
    expect(await say('first: jo@example.com +1 415 555 0142')).toBe('first: •••@••• +1 415 555 0142');
    // Another replica's write: the row and its version change, not this process's cache.
    await svc.sql`update agent_governance set redaction = jsonb_set(redaction, '{kinds}', '["phone"]'), version = version + 1 where agent_id = ${agent.id}`;
    expect(await say('second: jo@example.com +1 415 555 0142')).toBe('second: jo@example.com +1 ••• ••• 0142');
  }, 30_000);

  it('storing messages reads the settings once, then only inserts', async () => {
    const { api, orgId } = await newOrg(svc);
    const agent = await newAgent(api, 'Counted');
    expect((await api.put(`${R}/agents/${agent.id}/redaction`, { kinds: ['email'], targets: ['transcript'], national_id_countries: [], patterns: [] })).status).toBe(200);
    const [conversation] = await svc.sql<{ id: string }[]>`insert into conversations (id, org_id, agent_id, surface) values (${randomUUID()}, ${orgId}, ${agent.id}, 'web') returning id`;
    let statements = 0;
    const counted = createSql(db.url, { max: 1, onStatement: () => { statements++; } });
    try {
      await counted`select 1`; // the connection's own start (postgres.js reads the array types once)
      statements = 0;
      await insertMessages(counted, conversation!.id, [{ role: 'visitor', text: 'jo@example.com' }]);
      const first = statements;
      statements = 0;
      const [stored] = await insertMessages(counted, conversation!.id, [{ role: 'visitor', text: 'again jo@example.com' }]);
      expect(stored!.text).toBe('again •••@•••');
      expect({ first, then: statements }).toEqual({ first: 2, then: 1 });
    } finally {
      await counted.end();
    }
  });
});
