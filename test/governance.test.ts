import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, eventually, freshDatabase, startTestService, type TestService } from './helpers.ts';
import { keyWith, newAgent, newOrg, type Api } from './support/orgs.ts';
import { expectProblem } from './support/problems.ts';
import { newId } from '../src/ids.ts';
import { refreshRollups } from '../src/db/report-rollups.ts';
import { recordingKey, recordingStore } from '../src/voice/recordings.ts';
import type { EnforceRetentionResult } from '../workflows/enforce-retention.ts';
import { recordFixture, replayAll } from './support/replay.ts';
import { callsOf, orgWithNumber, startedCampaign } from './support/campaigns.ts';

/** Issue 47: retention policies and runs, a person's export and erase, consent, and the permissions they need. */

const logLines: string[] = [];
let svc: TestService;
let db: Awaited<ReturnType<typeof freshDatabase>>;
beforeAll(async () => {
  // A database of its own: the erase test reads every table of it for the person's traces, which in the run's
  // shared database (every other file's rows) is slow enough to miss the test's time in a full run.
  db = await freshDatabase();
  svc = await startTestService({ RETENTION_BATCH_SIZE: 7 }, {
    databaseUrl: db.url, env: { LOG_LEVEL: 'info' }, logDestination: { write: (line: string) => { logLines.push(line); } },
  });
});
afterAll(async () => { await svc?.stop(); await db?.drop(); });

const R = '/api/v1/rest';
const DAY = 86_400_000;
const phone = () => `+1415555${String(1000 + (randomBytes(2).readUInt16BE() % 9000))}`;
const email = () => `erin-${randomBytes(4).toString('hex')}@example.org`;

/** An ended conversation of `agentId`, last active `daysAgo` days ago, with a message. */
async function seedConversation(orgId: string, agentId: string, daysAgo: number, extra: { contactId?: string; text?: string; captured?: Record<string, unknown>; surface?: string } = {}) {
  const id = newId();
  const at = new Date(Date.now() - daysAgo * DAY);
  await svc.sql`insert into conversations (id, org_id, agent_id, surface, status, started_at, ended_at, last_activity_at, contact_id, captured_data)
    values (${id}, ${orgId}, ${agentId}, ${extra.surface ?? 'web'}, 'ended', ${new Date(at.getTime() - 60_000)}, ${at}, ${at}, ${extra.contactId ?? null}, ${svc.sql.json((extra.captured ?? {}) as never)})`;
  await svc.sql`insert into conversation_messages (id, conversation_id, role, text) values (${newId()}, ${id}, 'visitor', ${extra.text ?? 'hello'})`;
  return id;
}

const conversationsLeft = async (ids: string[]) =>
  (await svc.sql<{ id: string }[]>`select id from conversations where id = any(${ids}::uuid[])`).map((r) => r.id).sort();

/** Awaits a request and checks it is this problem. */
const problem = async (res: Promise<Parameters<typeof expectProblem>[0]>, status: number, code: Parameters<typeof expectProblem>[2]) => expectProblem(await res, status, code);

async function runRetention(api: Api, fixture?: string): Promise<EnforceRetentionResult> {
  const res = await api.post(`${R}/governance/retention/run`);
  expect(res.status, res.text).toBe(202);
  const handle = svc.temporal.workflow.getHandle(res.body.workflow_id);
  const result = await handle.result() as EnforceRetentionResult;
  await replayAll([{ workflowId: handle.workflowId, history: await handle.fetchHistory() }]);
  if (fixture) await recordFixture(handle.workflowId, fixture);
  return result;
}

describe('retention', () => {
  it('keeps everything by default; a policy makes the retention:<org> Schedule, keep-everything removes it', async () => {
    const { api, orgId } = await newOrg(svc);
    const initial = await api.get(`${R}/governance/retention`);
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({
      settings: { conversations: null, recordings: null, inbound_mail: null, report_artifacts: null, webhook_deliveries: null, audit_log: null },
      schedule_id: null, updated_at: null,
    });
    const set = await api.put(`${R}/governance/retention`, { conversations: 30, webhook_deliveries: 90 });
    expect(set.status, set.text).toBe(200);
    expect(set.body).toMatchObject({ settings: { conversations: 30, webhook_deliveries: 90, recordings: null }, schedule_id: `retention:${orgId}` });
    const schedule = await svc.temporal.schedule.getHandle(`retention:${orgId}`).describe();
    expect(schedule.action).toMatchObject({ workflowType: 'enforceRetention', args: [{ orgId }] });
    expect((await api.put(`${R}/governance/retention`, {})).body.schedule_id).toBeNull();
    await expect(svc.temporal.schedule.getHandle(`retention:${orgId}`).describe()).rejects.toThrow();
  });

  it('refuses bad input and changes nothing', async () => {
    const { api } = await newOrg(svc);
    await problem(api.put(`${R}/governance/retention`, { conversations: 0 }), 400, 'validation_error');
    await problem(api.put(`${R}/governance/retention`, { forever: 3 }), 400, 'validation_error');
    const agent = await newAgent(api);
    await problem(api.put(`${R}/agents/${agent.id}/retention`, { webhook_deliveries: 3 }), 400, 'validation_error');
    await problem(api.put(`${R}/agents/${agent.id}/redaction`, { kinds: ['pattern'], targets: [], national_id_countries: [], patterns: [{ name: 'x', pattern: '(' }] }), 400, 'validation_error');
    expect((await api.get(`${R}/governance/retention`)).body.settings.conversations).toBeNull();
    await problem(api.get(`${R}/agents/${newId()}/retention`), 404, 'not_found');
  });

  it('a run deletes, in batches, what is older than each agent\'s window and keeps the rest; conversation.deleted once each; rollups keep their counts', async () => {
    const { api, orgId } = await newOrg(svc);
    const [a, b, c] = [await newAgent(api, 'A'), await newAgent(api, 'B'), await newAgent(api, 'C')];
    await api.put(`${R}/governance/retention`, { conversations: 30, inbound_mail: 5 });
    // B keeps conversations 60 days; C keeps everything.
    expect((await api.put(`${R}/agents/${b.id}/retention`, { conversations: 60 })).body).toEqual({
      overrides: { conversations: 60 }, effective: { conversations: 60, recordings: null, inbound_mail: 5 },
    });
    await api.put(`${R}/agents/${c.id}/retention`, { conversations: null });
    const oldA = await Promise.all(Array.from({ length: 16 }, () => seedConversation(orgId, a.id, 40)));
    const keptA = [await seedConversation(orgId, a.id, 20), await seedConversation(orgId, a.id, 29)];
    const oldB = [await seedConversation(orgId, b.id, 61)];
    const keptB = [await seedConversation(orgId, b.id, 40)];
    const keptC = [await seedConversation(orgId, c.id, 400)];
    const mailA = [await seedConversation(orgId, a.id, 6, { surface: 'email' })];
    const active = newId();
    await svc.sql`insert into conversations (id, org_id, agent_id, surface, started_at, last_activity_at) values (${active}, ${orgId}, ${a.id}, 'web', now() - interval '50 days', now() - interval '50 days')`;
    const other = await newOrg(svc);
    const otherAgent = await newAgent(other.api);
    const otherOld = [await seedConversation(other.orgId, otherAgent.id, 400)];
    const deletedIds = [...oldA, ...oldB, ...mailA];

    const result = await runRetention(api, 'enforce-retention.json');
    expect(result.deleted).toEqual({ conversations: oldA.length + oldB.length, inbound_mail: 1 });
    expect(await conversationsLeft(deletedIds)).toEqual([]);
    expect(await conversationsLeft([...keptA, ...keptB, ...keptC, active, ...otherOld])).toEqual([...keptA, ...keptB, ...keptC, active, ...otherOld].sort());
    expect(await svc.sql`select 1 from conversation_messages where conversation_id = any(${deletedIds}::uuid[])`).toHaveLength(0);
    const events = await svc.sql<{ id: string }[]>`select data->'conversation'->>'id' as id from events where org_id = ${orgId} and type = 'conversation.deleted'`;
    expect(events.map((e) => e.id).sort()).toEqual([...deletedIds].sort());

    // The days went into the rollups before the rows went, and the delete left them counted.
    const counted = async () => Number((await svc.sql`select coalesce(sum(n), 0) as n from report_rollups where org_id = ${orgId} and timezone = 'UTC' and kind = 'so'`)[0]!.n);
    const before = await counted();
    expect(before).toBeGreaterThanOrEqual(deletedIds.length);
    const days = (await svc.sql<{ day: string }[]>`select to_char(day, 'YYYY-MM-DD') as day from report_rollup_days where org_id = ${orgId} and timezone = 'UTC'`).map((r) => r.day);
    await refreshRollups(svc.sql, orgId, 'UTC', days);
    expect(await counted()).toBe(before);

    // A second run finds nothing more: deleting is idempotent.
    expect((await runRetention(api)).deleted).toEqual({});
  });

  it('recordings and the audit log go by their own windows; a conversation that goes takes its recording with it', async () => {
    const { api, orgId } = await newOrg(svc);
    const agent = await newAgent(api, 'Voice desk');
    expect((await api.put(`${R}/governance/retention`, { conversations: 30, recordings: 7, audit_log: 10 })).status).toBe(200);
    const recorded = async (daysAgo: number) => {
      const id = await seedConversation(orgId, agent.id, daysAgo);
      const key = recordingKey(orgId, agent.id, id);
      await recordingStore().put(key, Buffer.from('RIFF'), 'audio/wav');
      await svc.sql`insert into call_recordings (conversation_id, org_id, agent_id, blob_key, content_type, bytes, duration_ms, created_at)
        values (${id}, ${orgId}, ${agent.id}, ${key}, 'audio/wav', 4, 0, ${new Date(Date.now() - daysAgo * DAY)})`;
      return { id, key };
    };
    const pastRecording = await recorded(8); // its recording is past 7 days, the conversation within 30
    const recent = await recorded(2);
    const pastBoth = await recorded(40);
    const audit = (daysAgo: number) => svc.sql`insert into audit_log (id, org_id, at, api_key_id, channel, method, path, operation, status, outcome)
      values (${newId()}, ${orgId}, ${new Date(Date.now() - daysAgo * DAY)}, ${newId()}, 'rest', 'POST', '/x', 'x', 201, 'succeeded') returning id`;
    const [[oldEntry], [newEntry]] = [await audit(11), await audit(9)];

    await runRetention(api);
    expect(await conversationsLeft([pastRecording.id, recent.id, pastBoth.id])).toEqual([pastRecording.id, recent.id].sort());
    const recordings = await svc.sql<{ conversation_id: string }[]>`select conversation_id from call_recordings where org_id = ${orgId}`;
    expect(recordings.map((r) => r.conversation_id)).toEqual([recent.id]);
    expect(await recordingStore().get(pastRecording.key)).toBeNull();
    expect(await recordingStore().get(pastBoth.key)).toBeNull();
    expect((await recordingStore().get(recent.key))?.bytes.toString()).toBe('RIFF');
    const entries = await svc.sql<{ id: string }[]>`select id from audit_log where org_id = ${orgId} and id = any(${[oldEntry!.id, newEntry!.id]}::uuid[])`;
    expect(entries.map((e) => e.id)).toEqual([newEntry!.id]);
  });
});

describe('a person\'s data', () => {
  it('export then erase: everything tied to the contact, then nothing of its email or phone in the database or the log', async () => {
    const { api, orgId, token } = await newOrg(svc);
    const agent = await newAgent(api);
    const [mail, tel] = [email(), phone()];
    const created = await api.post(`${R}/contacts`, { email_lower: mail, phone_e164: tel, first_name: 'Erin' }, { 'Idempotency-Key': `k-${randomBytes(4).toString('hex')}` });
    expect(created.status, created.text).toBe(201);
    const contactId = created.body.id as string;
    const convs = [
      await seedConversation(orgId, agent.id, 1, { contactId, text: `reach me at ${mail} or ${tel}`, captured: { email: mail, phone: tel } }),
      await seedConversation(orgId, agent.id, 2, { contactId, text: 'thanks' }),
    ];
    await svc.sql`insert into conversation_notes (id, conversation_id, author, text) values (${newId()}, ${convs[0]!}, 'desk', ${`called back ${tel}`})`;
    const table = await api.post(`${R}/agents/${agent.id}/data-tables`, { name: 'leads', columns: [{ name: 'who', type: 'string' }, { name: 'score', type: 'number' }] });
    expect(table.status, table.text).toBe(201);
    expect((await api.post(`${R}/agents/${agent.id}/data-tables/${table.body.id}/rows`, { rows: [{ who: mail, score: 3 }, { who: "someone else", score: 1 }] })).status).toBe(201);
    await svc.sql`insert into events (id, org_id, type, agent_id, data, dispatched_at) values (${`evt_${randomBytes(18).toString('base64url')}`}, ${orgId}, 'conversation.ended', ${agent.id}, ${svc.sql.json({ conversation: { id: convs[0], extracted_data: { email: mail } } })}, now())`;
    expect((await api.post(`${R}/contacts/${contactId}/consents`, { kind: 'marketing', granted: true, source: 'web form' })).status).toBe(201);
    logLines.length = 0;

    const exporter = await keyWith(svc, token, ['contacts.export']);
    const exported = await exporter.api.get(`${R}/contacts/${contactId}/export`);
    expect(exported.status, exported.text).toBe(200);
    expect(exported.body.contact).toMatchObject({ id: contactId, email_lower: mail, phone_e164: tel });
    const conversations = exported.body.data.conversations as { id: string; messages: { text: string }[]; captured_data: unknown; annotations: { notes: unknown[] } }[];
    expect(conversations.map((c) => c.id).sort()).toEqual([...convs].sort());
    expect(conversations.find((c) => c.id === convs[0])).toMatchObject({ captured_data: { email: mail, phone: tel }, annotations: { notes: [{ text: `called back ${tel}` }] } });
    expect(exported.body.data.data_table_rows).toHaveLength(1);
    expect(exported.body.data.consents).toMatchObject([{ kind: 'marketing', granted: true, source: 'web form' }]);
    expect(exported.body.data.webhook_events.length).toBeGreaterThanOrEqual(1);
    await problem(exporter.api.post(`${R}/contacts/${contactId}/erase`), 403, 'missing_permission');

    const eraser = await keyWith(svc, token, ['contacts.erase']);
    await problem(eraser.api.get(`${R}/contacts/${contactId}/export`), 403, 'missing_permission');
    const erased = await eraser.api.post(`${R}/contacts/${contactId}/erase`);
    expect(erased.status, erased.text).toBe(200);
    expect(erased.body).toMatchObject({ contact_id: contactId, deleted: { conversations: 2, data_table_rows: 1, contact: 1 } });
    expect(erased.body.remains.length).toBeGreaterThan(0);
    const histories = svc.temporal.workflow.getHandle(erased.body.histories_workflow_id);
    expect(await histories.result()).toEqual({ deleted: 0 });
    await replayAll([{ workflowId: histories.workflowId, history: await histories.fetchHistory() }]);
    await recordFixture(histories.workflowId, 'erase-contact-histories.json');

    // Every table of the database, as text: neither the email nor the phone number anywhere.
    const tables = await svc.sql<{ name: string }[]>`select quote_ident(table_name) as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`;
    for (const { name } of tables) {
      const hits = await svc.sql.unsafe(`select count(*)::int as n from ${name} t where t::text ilike $1 or t::text ilike $2`, [`%${mail}%`, `%${tel}%`]);
      expect({ table: name, hits: hits[0]!.n }).toEqual({ table: name, hits: 0 });
    }
    expect(logLines.filter((l) => l.includes(mail) || l.includes(tel))).toEqual([]);
    expect(logLines.some((l) => l.includes('contact erased'))).toBe(true);
    const event = await svc.sql<{ data: unknown }[]>`select data from events where org_id = ${orgId} and type = 'contact.erased'`;
    expect(event.map((e) => e.data)).toEqual([{ contact: { id: contactId, erased_at: erased.body.erased_at } }]);
    await problem(api.get(`${R}/contacts/${contactId}`), 404, 'not_found');
    await problem(eraser.api.post(`${R}/contacts/${contactId}/erase`), 404, 'not_found');
  }, 60_000);

  it('another organization\'s contact is not found', async () => {
    const a = await newOrg(svc);
    const b = await newOrg(svc);
    const created = await a.api.post(`${R}/contacts`, { email_lower: email() });
    await problem(b.api.get(`${R}/contacts/${created.body.id}/export`), 404, 'not_found');
    await problem(b.api.post(`${R}/contacts/${created.body.id}/erase`), 404, 'not_found');
    expect((await a.api.get(`${R}/contacts/${created.body.id}`)).status).toBe(200);
  });
});

describe('redaction on its paths', () => {
  it('the stored transcript shows a captured phone masked while the captured data keeps it; webhook payloads are masked; a second agent is untouched', async () => {
    const { api, orgId } = await newOrg(svc);
    const withSchema = async (name: string) => {
      const agent = await newAgent(api, name);
      const patched = await api.patch(`${R}/agents/${agent.id}`, { data_schema: [{ name: 'phone', type: 'phone', required: true }, { name: 'email', type: 'email' }] });
      expect(patched.status, patched.text).toBe(200);
      return agent;
    };
    const [redacted, plain] = [await withSchema('Desk'), await withSchema('Plain')];
    const settings = { kinds: ['email', 'phone', 'card', 'iban', 'national_id', 'pattern'], targets: ['transcript', 'webhooks', 'llm', 'reports'], national_id_countries: ['US'], patterns: [{ name: 'member_no', pattern: 'MBR-\\d{6}' }] };
    const put = await api.put(`${R}/agents/${redacted.id}/redaction`, settings);
    expect(put.status, put.text).toBe(200);
    expect((await api.get(`${R}/agents/${redacted.id}/redaction`)).body).toEqual(settings);
    expect((await api.get(`${R}/agents/${plain.id}/redaction`)).body).toEqual({ kinds: [], targets: [], national_id_countries: [], patterns: [] });

    const said = 'my number is +1 415 555 0142, mail jo@example.com, card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00, SSN 123-45-6789, member MBR-123456';
    const converse = async (publicKey: string) => {
      const base = `/api/v1/public/widgets/${publicKey}/conversations`;
      const started = await call(svc.url, 'POST', base, { body: { page_url: 'https://example.com/' } });
      expect(started.status, started.text).toBe(201);
      const headers = { 'x-visitor-token': started.body.visitor_token as string };
      expect((await call(svc.url, 'POST', `${base}/${started.body.conversation_id}/messages`, { body: { text: said }, headers })).status).toBe(200);
      expect((await call(svc.url, 'POST', `${base}/${started.body.conversation_id}/end`, { headers })).status).toBe(200);
      return started.body.conversation_id as string;
    };
    const [masked, open] = [await converse(redacted.public_key), await converse(plain.public_key)];

    const transcript = await api.get(`${R}/conversations/${masked}`);
    const visitorText = transcript.body.messages.find((m: { role: string }) => m.role === 'visitor').text as string;
    expect(visitorText).toBe('my number is +1 ••• ••• 0142, mail •••@•••, card •••• •••• •••• 1111, IBAN DE•• •••• 3000, SSN •••••••••, member [member_no]');
    // Kept in the captured data, sealed (test/governance-redaction.test.ts reads it back through the export).
    const [captured] = await svc.sql<{ captured_data: Record<string, string> }[]>`select captured_data from conversations where id = ${masked}`;
    expect(Object.keys(captured!.captured_data).sort()).toEqual(['email', 'phone']);
    expect(JSON.stringify(captured!.captured_data)).not.toMatch(/4155550142|jo@example\.com/);
    const plainText = (await api.get(`${R}/conversations/${open}`)).body.messages.find((m: { role: string }) => m.role === 'visitor').text;
    expect(plainText).toBe(said);

    // Webhook payloads (stored before they are sent): the redacted agent's never hold the raw values, the plain one's may.
    const payloads = await eventually(async () => {
      const rows = await svc.sql<{ agent_id: string; data: string }[]>`select agent_id, data::text as data from events where org_id = ${orgId} and type = 'conversation.ended'`;
      return rows.length === 2 ? rows : null;
    });
    const ofMasked = payloads.filter((p) => p.agent_id === redacted.id).map((p) => p.data).join();
    for (const raw of ['+14155550142', 'jo@example.com']) expect(ofMasked).not.toContain(raw);
  }, 60_000);
});

describe('redaction in reports', () => {
  it('a report covering an agent that redacts reports stores its figures masked', async () => {
    const { api, orgId } = await newOrg(svc);
    const agent = await newAgent(api);
    const put = await api.put(`${R}/agents/${agent.id}/redaction`, { kinds: ['email', 'phone'], targets: ['reports'], national_id_countries: [], patterns: [] });
    expect(put.status, put.text).toBe(200);
    const mail = email();
    for (let i = 0; i < 3; i++) {
      const id = await seedConversation(orgId, agent.id, 2);
      await svc.sql`update conversations set intent = ${`refund to ${mail}`}, evaluation_status = 'completed' where id = ${id}`;
    }
    const report = await api.post(`${R}/reports`, { name: 'Intents', data_categories: ['intents', 'volume'], format: 'raw', frequency: 'manual' });
    expect(report.status, report.text).toBe(201);
    const end = new Date();
    const run = await api.post(`${R}/reports/${report.body.id}/run`, { period_start: new Date(end.getTime() - 7 * DAY).toISOString(), period_end: end.toISOString() });
    expect(run.status, run.text).toBe(201);
    const done = await eventually(async () => {
      const r = await api.get(`${R}/reports/${report.body.id}/runs/${run.body.id}`);
      return r.body.status !== 'generating' ? r.body : null;
    }, 60_000);
    expect(done.status).toBe('succeeded');
    const [stored] = await svc.sql<{ data: string }[]>`select data::text as data from report_runs where id = ${run.body.id}`;
    expect(stored!.data).toContain('refund to •••@•••');
    expect(stored!.data).not.toContain(mail);
    // The artifact, wherever it is kept (the blob store since issue 46), as its signed link serves it.
    const artifact = await fetch(done.download_url);
    expect(artifact.status).toBe(200);
    const text = await artifact.text();
    expect(text).toContain('refund to •••@•••');
    expect(text).not.toContain(mail);
  }, 90_000);
});

describe('consent', () => {
  it('is recorded per contact with time and source; a campaign requiring it skips contacts without a current grant', async () => {
    const { api, agent } = await orgWithNumber(svc);
    const contact = async (consent?: boolean) => {
      const created = await api.post(`${R}/contacts`, { phone_e164: phone(), email_lower: email() });
      expect(created.status, created.text).toBe(201);
      if (consent !== undefined) {
        const rec = await api.post(`${R}/contacts/${created.body.id}/consents`, { kind: 'marketing', granted: true, source: 'signup form' });
        expect(rec.status, rec.text).toBe(201);
        expect(rec.body).toMatchObject({ contact_id: created.body.id, kind: 'marketing', granted: true, source: 'signup form' });
        if (!consent) expect((await api.post(`${R}/contacts/${created.body.id}/consents`, { kind: 'marketing', granted: false, source: 'unsubscribe link' })).status).toBe(201);
      }
      return created.body.id as string;
    };
    const [yes, withdrawn, never] = [await contact(true), await contact(false), await contact()];
    expect((await api.get(`${R}/contacts/${withdrawn}/consents`)).body).toMatchObject({
      data: [{ granted: false, source: 'unsubscribe link' }, { granted: true, source: 'signup form' }], current: { marketing: false, recording: null },
    });
    await problem(api.post(`${R}/contacts/${yes}/consents`, { kind: 'newsletter', granted: true, source: 'x' }), 400, 'validation_error');

    const campaign = await startedCampaign(api, { widget_id: agent.id, contact_ids: [yes, withdrawn, never], requires_consent: true });
    expect(campaign.requires_consent).toBe(true);
    const calls = await callsOf(api, campaign.id);
    const byContact = Object.fromEntries(calls.map((c) => [c.contact_id, c]));
    expect(byContact[withdrawn]).toMatchObject({ status: 'canceled', ended_reason: 'blocked' });
    expect(byContact[never]).toMatchObject({ status: 'canceled', ended_reason: 'blocked' });
    expect(byContact[yes]!.ended_reason).not.toBe('blocked');
  }, 60_000);
});
