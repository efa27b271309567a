import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { SMTPServer } from 'smtp-server';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { simpleParser, type ParsedMail } from 'mailparser';
import JSZip from 'jszip';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { eventually, startTestService, type TestService } from './helpers.ts';
import { keyWith, newAgent, newOrg, type Api } from './support/orgs.ts';
import { expectFieldError, expectProblem } from './support/problems.ts';
import { scheduleIds, workflowIds } from '../src/temporal/ids.ts';
import { artifactUrl } from '../src/reports/links.ts';
import { createSecretBox } from '../src/crypto/secret-box.ts';
import { sectionsOf } from '../src/reports/figures.ts';
import type { ReportData } from '../src/schemas/reports.ts';
import { closedPeriod } from '../src/domain/report-periods.ts';
import { aggregateReport } from '../src/reports/aggregate.ts';
import { findReport } from '../src/db/reports.ts';

const R = '/api/v1/rest/reports';
const C = '/api/v1/rest/credits';
const BOUNCE = 'bounce@example.org';

/** A local SMTP server: what the service mails lands here; `bounce@` is refused for good (550). */
async function startSink() {
  const received: ParsedMail[] = [];
  const server = new SMTPServer({
    authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'], logger: false, size: 50 * 1024 * 1024,
    onRcptTo(address, _session, callback) {
      if (address.address === BOUNCE) {
        const err = new Error('no such mailbox') as Error & { responseCode: number };
        err.responseCode = 550;
        callback(err);
        return;
      }
      callback();
    },
    onData(stream, _session, callback) {
      simpleParser(stream).then((mail) => { received.push(mail); callback(); }, callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as { port: number };
  return { received, port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let svc: TestService;
let sink: Awaited<ReturnType<typeof startSink>>;
beforeAll(async () => {
  sink = await startSink();
  svc = await startTestService({ SMTP_URL: `smtp://127.0.0.1:${sink.port}` });
});
afterAll(async () => {
  await svc?.stop();
  await sink?.close();
});

const mailsTo = (address: string) => sink.received.filter((m) => !Array.isArray(m.to) && m.to?.value.some((v) => v.address === address));

async function createReport(api: Api, body: Record<string, unknown>) {
  const res = await api.post(R, { name: 'Weekly review', data_categories: ['volume', 'goals'], format: 'raw', frequency: 'manual', ...body });
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, any>;
}

async function waitForRun(api: Api, reportId: string, runId: string, status: 'succeeded' | 'failed' = 'succeeded') {
  return eventually(async () => {
    const res = await api.get(`${R}/${reportId}/runs/${runId}`);
    expect(res.status, res.text).toBe(200);
    if (res.body.status === 'generating') return null;
    expect(res.body.status, JSON.stringify(res.body)).toBe(status);
    return res.body as Record<string, any>;
  }, 90_000, 250);
}

async function download(url: string) {
  const res = await fetch(url);
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

const PERIOD = { period_start: '2026-10-01T00:00:00.000Z', period_end: '2026-11-01T00:00:00.000Z' };
const at = (day: number, hour = 10) => new Date(Date.UTC(2026, 9, day, hour));

/**
 * Conversations of October 2026 with known figures: 2 agents, 3 surfaces, verdicts, outcomes,
 * intents, contacts (new and returning), phone talk time, usage and live inbox annotations. Plus
 * conversations that must not count: a simulation, one in November, one of another organization.
 */
async function seed(orgId: string, agents: string[], otherOrg: { orgId: string; agentId: string }) {
  const [a, b] = agents as [string, string];
  const contactNew = randomUUID();
  const contactOld = randomUUID();
  await svc.sql`insert into contacts (id, org_id, email_lower, first_seen_at) values
    (${contactNew}, ${orgId}, ${`new-${contactNew}@example.org`}, ${at(3)}), (${contactOld}, ${orgId}, ${`old-${contactOld}@example.org`}, ${new Date('2026-05-01T00:00:00Z')})`;
  const pass = (criterion: string) => ({ criterion, verdict: 'pass', reason: 'ok' });
  const fail = (criterion: string) => ({ criterion, verdict: 'fail', reason: 'no' });
  const na = (criterion: string) => ({ criterion, verdict: 'not_applicable', reason: 'n/a' });
  const rows = [
    { agent: a, surface: 'web', start: at(2), end: at(2, 11), outcome: 'resolved', intent: 'pricing', criteria: [pass('Booked a visit'), pass('Polite')], contact: contactNew, tags: ['vip'], rating: 5 },
    { agent: a, surface: 'web', start: at(2, 15), end: null, outcome: 'resolved', intent: 'pricing', criteria: [fail('Booked a visit'), pass('Polite')], contact: contactOld, tags: ['vip', 'follow-up'], rating: 3 },
    { agent: a, surface: 'phone', start: at(3), end: new Date(at(3).getTime() + 125_000), outcome: 'transferred', intent: 'opening hours', criteria: [na('Booked a visit'), pass('Polite')], contact: contactOld, tags: [], rating: null },
    { agent: b, surface: 'phone', start: at(3, 12), end: new Date(at(3, 12).getTime() + 65_000), outcome: 'resolved', intent: 'pricing', criteria: [pass('Booked a visit')], contact: null, tags: [], rating: null },
    { agent: b, surface: 'sms', start: at(31, 23), end: null, outcome: null, intent: 'refund', criteria: [fail('Polite')], contact: null, tags: [], rating: null },
  ];
  for (const r of rows) {
    await svc.sql`insert into conversations (id, org_id, agent_id, surface, started_at, ended_at, status, outcome, intent, criteria_results, contact_id, tags, summary_rating, labels)
      values (${randomUUID()}, ${orgId}, ${r.agent}, ${r.surface}, ${r.start}, ${r.end}, ${r.end ? 'ended' : 'active'}, ${r.outcome}, ${r.intent},
        ${svc.sql.json(r.criteria)}, ${r.contact}, ${r.tags}::text[], ${r.rating}, ${['sales']}::text[])`;
  }
  const [first] = await svc.sql<{ id: string }[]>`select id from conversations where org_id = ${orgId} order by started_at limit 1`;
  await svc.sql`insert into conversation_notes (id, conversation_id, author, text) values (${randomUUID()}, ${first!.id}, 'Ann', 'call back')`;
  // Not counted: a simulation, November, another organization.
  await svc.sql`insert into conversations (id, org_id, agent_id, surface, started_at, is_simulated, outcome) values
    (${randomUUID()}, ${orgId}, ${a}, 'web', ${at(5)}, true, 'resolved'),
    (${randomUUID()}, ${orgId}, ${a}, 'web', ${new Date('2026-11-01T00:00:00Z')}, false, 'resolved'),
    (${randomUUID()}, ${otherOrg.orgId}, ${otherOrg.agentId}, 'web', ${at(5)}, false, 'resolved')`;
  await svc.sql`insert into usage_records (id, org_id, agent_id, surface, duration_seconds, created_at) values
    (${randomUUID()}, ${orgId}, ${a}, 'phone', 125, ${at(3)}), (${randomUUID()}, ${orgId}, ${b}, 'phone', 65, ${at(3, 12)}), (${randomUUID()}, ${orgId}, ${a}, 'web', 600, ${at(2)})`;
}

/** An organization with two agents and seeded October conversations. */
async function seededOrg() {
  const org = await newOrg(svc);
  const agentA = await newAgent(org.api, 'Front desk');
  const agentB = await newAgent(org.api, 'Night line');
  const other = await newOrg(svc);
  const otherAgent = await newAgent(other.api, 'Elsewhere');
  await seed(org.orgId, [agentA.id, agentB.id], { orgId: other.orgId, agentId: otherAgent.id });
  return { ...org, agentA, agentB, other };
}

const ALL = ['volume', 'goals', 'outcomes', 'intents', 'contacts', 'calls', 'usage'];

async function pdfText(bytes: Buffer): Promise<string[]> {
  const doc = await getDocument({ data: new Uint8Array(bytes), useSystemFonts: false, isEvalSupported: false, verbosity: 0 }).promise;
  const pages: string[] = [];
  for (let i = 1; i <= doc.numPages; i += 1) {
    const content = await (await doc.getPage(i)).getTextContent();
    pages.push(content.items.map((item) => ('str' in item ? item.str : '')).filter((s) => s.trim() !== '').join(' '));
  }
  await doc.destroy();
  return pages;
}

describe('report definitions', () => {
  it('create (201, Location, defaults), get, list, patch and delete', async () => {
    const { api } = await newOrg(svc);
    const agent = await newAgent(api);
    const report = await createReport(api, { widget_ids: [agent.id], recipients: ['ops@example.org'] });
    expect(report).toMatchObject({ name: 'Weekly review', widget_ids: [agent.id], data_categories: ['volume', 'goals'], format: 'raw',
      frequency: 'manual', recipients: ['ops@example.org'], schedule_enabled: false, timezone: 'UTC', send_at: '06:00' });
    expect(Object.keys(report).sort()).toEqual(['created_at', 'data_categories', 'format', 'frequency', 'id', 'name', 'recipients',
      'schedule_enabled', 'send_at', 'timezone', 'updated_at', 'widget_ids']);
    expect((await api.get(`${R}/${report.id}`)).body).toEqual(report);
    const list = await api.get(R);
    expect(list.body).toMatchObject({ total: 1, limit: 50, offset: 0 });
    expect(list.body.data).toEqual([report]);
    const patched = await api.patch(`${R}/${report.id}`, { name: 'Daily', format: 'document', timezone: 'Europe/Paris', send_at: '07:30' });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Daily', format: 'document', timezone: 'Europe/Paris', send_at: '07:30', widget_ids: [agent.id] });
    const same = await api.patch(`${R}/${report.id}`, {});
    expect(same.body).toMatchObject({ name: 'Daily', format: 'document' });
    expect((await api.delete(`${R}/${report.id}`)).status).toBe(204);
    expectProblem(await api.get(`${R}/${report.id}`), 404, 'not_found');
    expectProblem(await api.delete(`${R}/${report.id}`), 404, 'not_found');
  });

  it('refuses bad fields with 400 naming them, and changes nothing', async () => {
    const { api } = await newOrg(svc);
    const agent = await newAgent(api);
    const other = await newOrg(svc);
    const foreign = await newAgent(other.api);
    const base = { name: 'R', data_categories: ['volume'], format: 'raw', frequency: 'manual' };
    const report = await createReport(api, {});
    const before = (await api.get(R)).body;
    const twentyOne = Array.from({ length: 21 }, (_, i) => `u${i}@example.org`);
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, format: 'xlsx' }, 'format'],
      [{ ...base, frequency: 'hourly' }, 'frequency'],
      [{ ...base, data_categories: ['volume', 'weather'] }, 'data_categories[1]'],
      [{ ...base, data_categories: [] }, 'data_categories'],
      [{ ...base, recipients: twentyOne }, 'recipients'],
      [{ ...base, recipients: ['not-an-address'] }, 'recipients[0]'],
      [{ ...base, widget_ids: [agent.id, foreign.id] }, 'widget_ids[1]'],
      [{ ...base, widget_ids: [randomUUID()] }, 'widget_ids[0]'],
      [{ ...base, timezone: 'Mars/Olympus' }, 'timezone'],
      [{ ...base, send_at: '24:00' }, 'send_at'],
      [{ ...base, send_at: '6:00' }, 'send_at'],
      [{ ...base, color: 'red' }, 'color'],
      [{ format: 'raw', frequency: 'manual', data_categories: ['volume'] }, 'name'],
    ];
    for (const [body, field] of cases) expectFieldError(await api.post(R, body), field);
    for (const [body, field] of cases.filter(([, f]) => f !== 'name')) {
      const { name: _n, ...patch } = body;
      expectFieldError(await api.patch(`${R}/${report.id}`, field === 'data_categories' ? { data_categories: [] } : patch), field);
    }
    expectFieldError(await api.post(`${R}/${report.id}/run`, { period_start: PERIOD.period_end, period_end: PERIOD.period_start }), 'period_end');
    expect((await api.get(R)).body).toEqual(before);
    expect((await api.get(`${R}/${report.id}/runs`)).body.total).toBe(0);
    const credits = (await api.get(C)).body;
    expect(credits.balance_cents).toBe(10000);
  });

  it('another organization\'s report is 404 everywhere; permissions are reports.read and reports.write', async () => {
    const { api } = await newOrg(svc);
    const report = await createReport(api, {});
    const other = await newOrg(svc);
    expectProblem(await other.api.get(`${R}/${report.id}`), 404, 'not_found');
    expectProblem(await other.api.patch(`${R}/${report.id}`, { name: 'x' }), 404, 'not_found');
    expectProblem(await other.api.delete(`${R}/${report.id}`), 404, 'not_found');
    expectProblem(await other.api.post(`${R}/${report.id}/run`, {}), 404, 'not_found');
    expectProblem(await other.api.get(`${R}/${report.id}/runs`), 404, 'not_found');
    expect((await other.api.get(R)).body.total).toBe(0);
    expect((await other.api.get(C)).body.balance_cents).toBe(10000);
    const reader = await keyWith(svc, api, ['reports.read']);
    expect((await reader.api.get(`${R}/${report.id}`)).status).toBe(200);
    expectProblem(await reader.api.post(R, { name: 'x', data_categories: ['volume'], format: 'raw', frequency: 'manual' }), 403, 'missing_permission');
    expectProblem(await reader.api.post(`${R}/${report.id}/run`, {}), 403, 'missing_permission');
  });
});

describe('report runs', () => {
  it('raw: the figures of the period, from SQL, for the whole organization; download with the right headers', async () => {
    const org = await seededOrg();
    const report = await createReport(org.api, { data_categories: ALL, format: 'raw' });
    const started = await org.api.post(`${R}/${report.id}/run`, PERIOD);
    expect(started.status, started.text).toBe(201);
    expect(started.headers.get('location')).toBe(`${R}/${report.id}/runs/${started.body.id}`);
    expect(started.body).toMatchObject({ report_id: report.id, status: 'generating', trigger: 'manual', period_start: PERIOD.period_start,
      period_end: PERIOD.period_end, completed_at: null, error: null });
    expect(started.body.download_url).toBeUndefined();
    const run = await waitForRun(org.api, report.id, started.body.id);
    expect(run.download_url).toMatch(/\/api\/v1\/public\/report-artifacts\//);
    const file = await download(run.download_url);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toMatch(/^application\/json/);
    expect(file.headers.get('content-disposition')).toMatch(/^attachment; filename="weekly-review-2026-10-01\.json"$/);
    const data = JSON.parse(file.bytes.toString()) as ReportData;
    expect((await org.api.get(`${R}/${report.id}/runs/${run.id}/data`)).body).toEqual(data);
    const a = org.agentA.id;
    const b = org.agentB.id;
    expect(data.headline).toEqual({ conversations: 5, pass_rate: 0.7143, contacts: 2 });
    expect(data.volume!.total).toBe(5);
    expect(data.volume!.by_day).toHaveLength(31);
    expect(data.volume!.by_day.filter((d) => d.count > 0)).toEqual([{ day: '2026-10-02', count: 2 }, { day: '2026-10-03', count: 2 }, { day: '2026-10-31', count: 1 }]);
    expect(data.volume!.by_surface).toEqual(expect.arrayContaining([{ surface: 'web', count: 2 }, { surface: 'phone', count: 2 }, { surface: 'sms', count: 1 }]));
    expect(data.volume!.by_agent).toEqual(expect.arrayContaining([{ agent_id: a, count: 3 }, { agent_id: b, count: 2 }]));
    expect(data.goals!.criteria).toEqual([
      { criterion: 'Booked a visit', pass: 2, fail: 1, not_applicable: 1, pass_rate: 0.6667 },
      { criterion: 'Polite', pass: 3, fail: 1, not_applicable: 0, pass_rate: 0.75 },
    ]);
    expect(data.outcomes!.items).toEqual([{ outcome: 'resolved', count: 3 }, { outcome: 'transferred', count: 1 }, { outcome: 'unknown', count: 1 }]);
    expect(data.intents!.top).toEqual([{ intent: 'pricing', count: 3 }, { intent: 'opening hours', count: 1 }, { intent: 'refund', count: 1 }]);
    expect(data.contacts).toEqual({ new: 1, returning: 1 });
    expect(data.calls).toEqual({ total: 2, talk_seconds: 190, average_talk_seconds: 95,
      by_outcome: [{ outcome: 'resolved', count: 1, talk_seconds: 65 }, { outcome: 'transferred', count: 1, talk_seconds: 125 }],
      latency: { turns: 0, p50_ms: null, p95_ms: null, by_agent: [] } });
    expect(data.usage!.conversation_minutes).toBe(13.17);
    expect(data.usage!.by_surface).toEqual([{ surface: 'phone', minutes: 3.17 }, { surface: 'web', minutes: 10 }]);
    expect(data.annotations).toEqual({ tags: [{ tag: 'vip', count: 2 }, { tag: 'follow-up', count: 1 }], labels: [{ label: 'sales', count: 5 }],
      ratings: [{ rating: 3, count: 1 }, { rating: 5, count: 1 }], average_rating: 4, notes: 1 });
    expect(data.agents.map((x) => x.name).sort()).toEqual(['Front desk', 'Night line']);
  });

  it('document: a PDF whose text carries the same figures as the raw JSON', async () => {
    const org = await seededOrg();
    const report = await createReport(org.api, { name: 'October PDF', data_categories: ALL, format: 'document', widget_ids: [org.agentA.id, org.agentB.id] });
    const started = await org.api.post(`${R}/${report.id}/run`, PERIOD);
    const run = await waitForRun(org.api, report.id, started.body.id);
    const file = await download(run.download_url);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(file.headers.get('content-disposition')).toBe('attachment; filename="october-pdf-2026-10-01.pdf"');
    expect(file.bytes.subarray(0, 5).toString()).toBe('%PDF-');
    const data = (await org.api.get(`${R}/${report.id}/runs/${run.id}/data`)).body as ReportData;
    const pages = await pdfText(file.bytes);
    const sections = sectionsOf(data);
    expect(pages).toHaveLength(1 + sections.length);
    expect(pages[0]).toContain('October PDF');
    expect(pages[0]).toContain(`Conversations: ${data.headline.conversations}`);
    expect(pages[0]).toContain('Goal pass rate: 71.4%');
    sections.forEach((section, i) => {
      const text = pages[i + 1]!;
      expect(text).toContain(section.title);
      for (const row of section.table.rows) expect(text, `${section.category}: ${row.join(' ')}`).toContain(row.join(' '));
    });
    // Spot checks against the raw figures, as a reader would look them up.
    expect(pages.join(' ')).toContain('Booked a visit 2 1 1 66.7%');
    expect(pages.join(' ')).toContain('Transferred 1 125');
  });

  it('presentation: a PPTX with one native chart per category carrying the raw figures', async () => {
    const org = await seededOrg();
    const report = await createReport(org.api, { name: 'Deck', data_categories: ALL, format: 'presentation' });
    const started = await org.api.post(`${R}/${report.id}/run`, PERIOD);
    const run = await waitForRun(org.api, report.id, started.body.id);
    const file = await download(run.download_url);
    expect(file.headers.get('content-type')).toBe('application/vnd.openxmlformats-officedocument.presentationml.presentation');
    const zip = await JSZip.loadAsync(file.bytes);
    const slides = Object.keys(zip.files).filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n));
    const charts = Object.keys(zip.files).filter((n) => /^ppt\/charts\/chart\d+\.xml$/.test(n))
      .sort((x, y) => Number(x.match(/\d+/)![0]) - Number(y.match(/\d+/)![0]));
    expect(slides).toHaveLength(1 + ALL.length);
    expect(charts).toHaveLength(ALL.length);
    const data = (await org.api.get(`${R}/${report.id}/runs/${run.id}/data`)).body as ReportData;
    const sections = sectionsOf(data);
    for (const [i, section] of sections.entries()) {
      const xml = await zip.file(charts[i]!)!.async('string');
      const values = [...xml.matchAll(/<c:val>[\s\S]*?<\/c:val>/g)].map((m) => [...m[0].matchAll(/<c:v>([^<]*)<\/c:v>/g)].map((v) => Number(v[1])));
      expect(values, section.category).toEqual(section.chart.series.map((s) => s.values));
      for (const label of section.chart.labels) expect(xml).toContain(`<c:v>${label}</c:v>`);
    }
    const goals = sections.find((s) => s.category === 'goals')!;
    expect(goals.chart.series[0]!.values).toEqual([66.7, 75]);
  });

  it('mails the artifact and the headline to every recipient, each alone (no one sees the others), through SMTP_URL', async () => {
    const org = await seededOrg();
    const to = [`ops-${randomUUID()}@example.org`, `boss-${randomUUID()}@example.org`];
    const report = await createReport(org.api, { name: 'Mailed', data_categories: ['volume', 'goals'], format: 'document', recipients: to });
    const started = await org.api.post(`${R}/${report.id}/run`, PERIOD);
    const run = await waitForRun(org.api, report.id, started.body.id);
    const mail = await eventually(async () => mailsTo(to[1]!)[0], 30_000);
    expect(mailsTo(to[0]!)).toHaveLength(1);
    for (const [i, address] of to.entries()) {
      const [own] = mailsTo(address);
      expect((own!.to as { value: { address?: string }[] }).value.map((v) => v.address)).toEqual([address]);
      expect(own!.cc).toBeUndefined();
      expect(own!.headerLines.map((h) => h.line).join('\n')).not.toContain(to[1 - i]!);
    }
    expect(await svc.sql`select mailed_to from report_runs where id = ${run.id}`).toEqual([{ mailed_to: to }]);
    expect(mail.subject).toBe('Mailed: 2026-10-01 to 2026-11-01');
    expect(mail.text).toContain('Conversations: 5');
    expect(mail.text).toContain('Goal pass rate: 71.4%');
    expect(mail.attachments).toHaveLength(1);
    const file = await download(run.download_url);
    expect(mail.attachments[0]!.filename).toBe('mailed-2026-10-01.pdf');
    expect(mail.attachments[0]!.contentType).toBe('application/pdf');
    expect(Buffer.compare(mail.attachments[0]!.content, file.bytes)).toBe(0);
  });
});

/**
 * Calls and codes as issue 42 found them: an inbound call, two answered campaign calls whose
 * conversations opened 8 s after the answer, a busy one, one never dialed (blocked); codes as
 * outcomes and intents; usage of 0.78 and 0.32 minutes.
 */
/**
 * Streamed turns' timings (issue 44): the first phone conversation of `agentId` has turns of 500, 700 and 900 ms and
 * one without audio; a phone conversation of `otherId` 300 and 400 ms. Not counted: a simulation's turn, November's.
 */
async function seedLatencies(orgId: string, agentId: string, otherId: string) {
  const [first] = await svc.sql<{ id: string }[]>`select id from conversations where agent_id = ${agentId} and surface = 'phone' order by started_at limit 1`;
  const conv = async (agent: string, start: Date, simulated = false) => {
    const id = randomUUID();
    await svc.sql`insert into conversations (id, org_id, agent_id, surface, started_at, ended_at, status, outcome, is_simulated)
      values (${id}, ${orgId}, ${agent}, 'phone', ${start}, ${new Date(start.getTime() + 20_000)}, 'ended', 'resolved', ${simulated})`;
    return id;
  };
  const turns = async (agent: string, conversationId: string, latencies: (number | null)[]) => {
    for (const [i, ms] of latencies.entries()) {
      const ended = new Date(at(6).getTime() + i * 10_000);
      await svc.sql`insert into voice_turn_timings (id, org_id, agent_id, conversation_id, turn, speech_ended_at, transcript_at, reply_at, first_audio_at)
        values (${randomUUID()}, ${orgId}, ${agent}, ${conversationId}, ${i + 1}, ${ended}, ${ended}, ${ended}, ${ms === null ? null : new Date(ended.getTime() + ms)})`;
    }
  };
  await turns(agentId, first!.id, [700, null, 900, 500]);
  await turns(otherId, await conv(otherId, at(6)), [400, 300]);
  await turns(agentId, await conv(agentId, at(7), true), [5000]);
  await turns(agentId, await conv(agentId, new Date('2026-11-02T10:00:00Z')), [6000]);
}

async function seedCalls(orgId: string, agentId: string) {
  const sec = (d: Date, s: number) => new Date(d.getTime() + s * 1000);
  const pass = (criterion: string) => ({ criterion, verdict: 'pass', reason: 'ok' });
  const fail = (criterion: string) => ({ criterion, verdict: 'fail', reason: 'no' });
  const conv = async (surface: string, start: Date, end: Date | null, outcome: string | null, intent: string | null, criteria: unknown[] = []) => {
    const id = randomUUID();
    await svc.sql`insert into conversations (id, org_id, agent_id, surface, started_at, ended_at, status, outcome, intent, criteria_results)
      values (${id}, ${orgId}, ${agentId}, ${surface}, ${start}, ${end}, ${end ? 'ended' : 'active'}, ${outcome}, ${intent}, ${svc.sql.json(criteria as never)})`;
    return id;
  };
  await conv('phone', at(4), sec(at(4), 40), 'handoff_requested', 'book_demo', [pass('Polite'), fail('Booked a visit')]);
  await conv('web', at(4, 12), null, null, 'general_question', [pass('Polite')]);
  const campaign = randomUUID();
  await svc.sql`insert into campaigns (id, org_id, agent_id, name, status, max_duration_seconds, started_at, completed_at)
    values (${campaign}, ${orgId}, ${agentId}, 'Calls', 'completed', 120, ${at(5, 9)}, ${at(5, 12)})`;
  const call = async (position: number, status: string, dialed: Date | null, answered: Date | null, ended: Date, outcome: string | null) => {
    const conversation = answered ? await conv('phone', sec(answered, 8), ended, outcome, 'general_question') : null;
    const duration = answered ? Math.floor((ended.getTime() - answered.getTime()) / 1000) : null;
    const reason = status === 'canceled' ? 'blocked' : 'carrier';
    await svc.sql`insert into campaign_calls (id, org_id, campaign_id, position, to_number, timezone, status, ended_reason, conversation_id, started_at, answered_at, ended_at, duration_seconds)
      values (${randomUUID()}, ${orgId}, ${campaign}, ${position}, ${`+1503555012${position}`}, 'UTC', ${status}, ${reason}, ${conversation}, ${dialed}, ${answered}, ${ended}, ${duration})`;
  };
  await call(1, 'completed', at(5, 9), sec(at(5, 9), 5), sec(at(5, 9), 36), 'resolved');
  await call(2, 'completed', at(5, 10), sec(at(5, 10), 5), sec(at(5, 10), 36), 'unresolved');
  await call(3, 'busy', at(5, 11), null, sec(at(5, 11), 3), null);
  await call(4, 'canceled', null, null, at(5, 11), null);
  await svc.sql`insert into usage_records (id, org_id, agent_id, surface, duration_seconds, created_at) values
    (${randomUUID()}, ${orgId}, ${agentId}, 'phone', 47, ${at(4)}), (${randomUUID()}, ${orgId}, ${agentId}, 'web', 19, ${at(4, 12)})`;
}

describe('report presentation (issue 42)', () => {
  it('a run with no period covers the current month up to today, so a first run shows today\'s conversations', async () => {
    const { api, orgId } = await newOrg(svc);
    const agent = await newAgent(api);
    await svc.sql`insert into conversations (id, org_id, agent_id, surface, started_at, status) values (${randomUUID()}, ${orgId}, ${agent.id}, 'web', now(), 'active')`;
    const report = await createReport(api, { format: 'raw' });
    const now = new Date();
    const started = await api.post(`${R}/${report.id}/run`, {});
    expect(started.status, started.text).toBe(201);
    expect(started.body).toMatchObject({
      period_start: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
      period_end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString(),
    });
    const run = await waitForRun(api, report.id, started.body.id);
    const data = (await api.get(`${R}/${report.id}/runs/${run.id}/data`)).body as ReportData;
    expect(data.headline.conversations).toBe(1);
  });

  it('a manual report answers schedule_enabled false (it has no Schedule); a frequency brings the stored choice back', async () => {
    const { api } = await newOrg(svc);
    const report = await createReport(api, { frequency: 'manual', schedule_enabled: true });
    expect(report.schedule_enabled).toBe(false);
    expect((await api.get(`${R}/${report.id}`)).body.schedule_enabled).toBe(false);
    const weekly = await api.patch(`${R}/${report.id}`, { frequency: 'weekly' });
    expect(weekly.body).toMatchObject({ frequency: 'weekly', schedule_enabled: true });
    expect((await svc.temporal.schedule.getHandle(scheduleIds.report(report.id)).describe()).state.paused).toBe(false);
    expect((await api.patch(`${R}/${report.id}`, { frequency: 'manual' })).body.schedule_enabled).toBe(false);
  });

  it('an empty period: each chart says "No data yet" (PDF and PPTX), with no lone 0.000000 tick', async () => {
    const { api } = await newOrg(svc);
    const pdfReport = await createReport(api, { name: 'Empty', data_categories: ALL, format: 'document' });
    const pdfRun = await waitForRun(api, pdfReport.id, (await api.post(`${R}/${pdfReport.id}/run`, PERIOD)).body.id);
    const pages = await pdfText((await download(pdfRun.download_url)).bytes);
    expect(pages).toHaveLength(1 + ALL.length);
    for (const page of pages.slice(1)) {
      expect(page).toContain('No data yet');
      expect(page).not.toMatch(/0\.0000/);
    }
    const deck = await createReport(api, { name: 'Empty deck', data_categories: ALL, format: 'presentation' });
    const deckRun = await waitForRun(api, deck.id, (await api.post(`${R}/${deck.id}/run`, PERIOD)).body.id);
    const zip = await JSZip.loadAsync((await download(deckRun.download_url)).bytes);
    const slides = Object.keys(zip.files).filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n));
    expect(slides).toHaveLength(1 + ALL.length);
    expect(Object.keys(zip.files).filter((n) => /^ppt\/charts\/chart\d+\.xml$/.test(n))).toHaveLength(0);
    for (const name of slides.filter((n) => n !== 'ppt/slides/slide1.xml')) expect(await zip.file(name)!.async('string'), name).toContain('No data yet');
  });

  it('calls come from the call records: busy calls count, talk time is answered_at to the end; codes read as words, dates as dates', async () => {
    const { api, orgId } = await newOrg(svc);
    const agent = await newAgent(api, 'Front desk');
    await seedCalls(orgId, agent.id);
    const night = await newAgent(api, 'Night line');
    await seedLatencies(orgId, agent.id, night.id);
    const report = await createReport(api, { name: 'Calls', data_categories: ALL, format: 'document' });
    const run = await waitForRun(api, report.id, (await api.post(`${R}/${report.id}/run`, PERIOD)).body.id);
    const data = (await api.get(`${R}/${report.id}/runs/${run.id}/data`)).body as ReportData;
    expect(data.calls).toEqual({ total: 5, talk_seconds: 122, average_talk_seconds: 24.4, by_outcome: [
      { outcome: 'resolved', count: 2, talk_seconds: 51 }, { outcome: 'busy', count: 1, talk_seconds: 0 },
      { outcome: 'handoff_requested', count: 1, talk_seconds: 40 }, { outcome: 'unresolved', count: 1, talk_seconds: 31 },
    ], latency: {
      // 300, 400, 500, 700, 900 ms (percentile_cont: interpolated); a turn without audio, a simulation and November left out.
      turns: 5, p50_ms: 500, p95_ms: 860,
      by_agent: [{ agent_id: agent.id, turns: 3, p50_ms: 700, p95_ms: 880 }, { agent_id: night.id, turns: 2, p50_ms: 350, p95_ms: 395 }]
        .sort((a, b) => (a.agent_id < b.agent_id ? -1 : 1)),
    } });
    expect(data.agents.map((a) => a.name).sort()).toEqual(['Front desk', 'Night line']);
    // An agent's report reads its own turns alone.
    const own = await createReport(api, { name: 'Front desk calls', widget_ids: [agent.id], data_categories: ['calls'], format: 'raw' });
    const ownRun = await waitForRun(api, own.id, (await api.post(`${R}/${own.id}/run`, PERIOD)).body.id);
    const ownData = (await api.get(`${R}/${own.id}/runs/${ownRun.id}/data`)).body as ReportData;
    expect(ownData.calls!.latency).toEqual({ turns: 3, p50_ms: 700, p95_ms: 880, by_agent: [{ agent_id: agent.id, turns: 3, p50_ms: 700, p95_ms: 880 }] });
    const pages = await pdfText((await download(run.download_url)).bytes);
    const all = pages.join(' ');
    expect(all).toContain('5 calls, 122 s of talk time; voice latency p50 500 ms, p95 860 ms');
    expect(all).toContain('Voice latency: Front desk p50 700 ms p95 880 ms');
    expect(all).toContain('Voice latency: Night line p50 350 ms p95 395 ms');
    for (const words of ['Handoff requested 1 40', 'Busy 1 0', 'Book demo 1', 'General question 3', 'Unknown 1']) expect(all).toContain(words);
    for (const code of ['handoff_requested', 'book_demo', 'general_question', 'unknown']) expect(all).not.toContain(code);
    // The cover: human dates, no ISO timestamp.
    expect(pages[0]).toContain('1 October 2026 to 31 October 2026 (UTC)');
    expect(pages[0]).toMatch(/Generated \d{1,2} [A-Z][a-z]+ \d{4} at \d\d:\d\d UTC/);
    expect(pages[0]).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:/);
    // Count axes step by whole numbers: the Contacts page (0 and 0) is empty; Outcomes (1 to 3) has no 0.5 tick.
    const outcomes = pages.find((p) => p.startsWith('Outcomes'))!;
    expect(outcomes).not.toMatch(/\b\d\.5\b/);
    expect(pages.find((p) => p.startsWith('Goals'))).toContain('100%');
  });

  it('PPTX: data labels keep their decimals (0.78), rates carry % on a 0 to 100 axis, counts step by whole numbers', async () => {
    const { api, orgId } = await newOrg(svc);
    const agent = await newAgent(api);
    await seedCalls(orgId, agent.id);
    const report = await createReport(api, { name: 'Deck', data_categories: ['goals', 'calls', 'usage'], format: 'presentation' });
    const run = await waitForRun(api, report.id, (await api.post(`${R}/${report.id}/run`, PERIOD)).body.id);
    const zip = await JSZip.loadAsync((await download(run.download_url)).bytes);
    const names = Object.keys(zip.files).filter((n) => /^ppt\/charts\/chart\d+\.xml$/.test(n)).sort((x, y) => Number(x.match(/\d+/)![0]) - Number(y.match(/\d+/)![0]));
    const chart = (i: number) => zip.file(names[i - 1]!)!.async('string');
    const labelFormat = (xml: string) => /<c:dLbls>[\s\S]*?<c:numFmt formatCode="([^"]*)"/.exec(xml)?.[1];
    const axisFormat = (xml: string) => /<c:valAx>[\s\S]*?<c:numFmt formatCode="([^"]*)"/.exec(xml)?.[1];
    const [goals, calls, usage] = [await chart(1), await chart(2), await chart(3)];
    expect(usage).toContain('<c:v>0.78</c:v>');
    expect(labelFormat(usage)).toBe('General');
    expect(labelFormat(goals)).toContain('%');
    expect(axisFormat(goals)).toContain('%');
    expect(goals).toMatch(/<c:max val="100"\/>/);
    expect(axisFormat(calls)).toBe('#,##0');
    expect(calls).toMatch(/<c:majorUnit val="1"\/>/);
  });
});

describe('report credits', () => {
  it('a run costs REPORT_RUN_COST_CENTS once; without credits 402 and nothing charged or created', async () => {
    const { api } = await newOrg(svc);
    const report = await createReport(api, {});
    const started = await api.post(`${R}/${report.id}/run`, PERIOD);
    expect(started.status, started.text).toBe(201);
    await waitForRun(api, report.id, started.body.id);
    const credits = (await api.get(C)).body;
    expect(credits.balance_cents).toBe(10000 - 25);
    expect(credits.ledger.filter((e: any) => e.reason === 'report_run')).toEqual([
      expect.objectContaining({ amount_cents: -25, reference: `report-run:${started.body.id}` }),
    ]);
    await api.post(`${C}/adjustments`, { amount_cents: -(10000 - 25 - 10), reason: 'drain' });
    const before = (await api.get(C)).body;
    expect(before.balance_cents).toBe(10);
    expectProblem(await api.post(`${R}/${report.id}/run`, {}), 402, 'insufficient_credits');
    expect((await api.get(C)).body).toEqual(before);
    expect((await api.get(`${R}/${report.id}/runs`)).body.total).toBe(1);
  });

  it('a run that fails in the end is failed with a readable error, refunded once, and mails nothing', async () => {
    const { api } = await newOrg(svc);
    const report = await createReport(api, { recipients: [BOUNCE] });
    const started = await api.post(`${R}/${report.id}/run`, PERIOD);
    const run = await waitForRun(api, report.id, started.body.id, 'failed');
    expect(run.error).toMatch(/mail_rejected: the mail server refused the message/);
    expect(run.download_url).toBeUndefined();
    expect(run.completed_at).not.toBeNull();
    const credits = (await api.get(C)).body;
    expect(credits.balance_cents).toBe(10000);
    const entries = credits.ledger.filter((e: any) => e.reference?.startsWith(`report-run:${run.id}`));
    expect(entries.map((e: any) => [e.amount_cents, e.reason, e.reference]).sort()).toEqual([
      [-25, 'report_run', `report-run:${run.id}`], [25, 'report_run_refund', `report-run:${run.id}:refund`],
    ].sort());
    // The refund step again (a retried activity) refunds nothing more.
    const { failRunStep } = await import('../src/reports/runs.ts');
    await failRunStep({ sql: svc.sql, config: svc.config }, run.id, 'again');
    expect((await api.get(C)).body.balance_cents).toBe(10000);
    expect((await api.get(`${R}/${report.id}/runs/${run.id}`)).body.error).toBe(run.error);
  });
});

describe('download links', () => {
  it('are refused when tampered with or expired (403), and name no other run', async () => {
    const { api } = await newOrg(svc);
    const report = await createReport(api, {});
    const run = await waitForRun(api, report.id, (await api.post(`${R}/${report.id}/run`, PERIOD)).body.id);
    expect((await download(run.download_url)).status).toBe(200);
    const url = new URL(run.download_url);
    const sig = url.searchParams.get('sig')!;
    const tampered = new URL(url);
    tampered.searchParams.set('sig', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
    const extended = new URL(url);
    extended.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    const otherRun = new URL(url);
    otherRun.pathname = otherRun.pathname.replace(run.id, randomUUID());
    const unsigned = new URL(url);
    unsigned.search = '';
    for (const bad of [tampered, extended, otherRun, unsigned]) {
      const res = await download(bad.toString());
      expect(res.status, bad.toString()).toBe(403);
      expect(JSON.parse(res.bytes.toString()).code).toBe('invalid_signature');
    }
    // Signed with the service's key sixteen minutes ago: expired.
    const key = Buffer.from(createHash('sha256').update(`secrets-key:${inject('databaseUrl')}`).digest('base64'), 'base64');
    const old = artifactUrl(svc.url, createSecretBox(key), run.id, Date.now() - 16 * 60_000);
    const fresh = artifactUrl(svc.url, createSecretBox(key), run.id, Date.now() - 60_000);
    expect((await download(fresh)).status).toBe(200);
    expect((await download(old)).status).toBe(403);
  });
});

describe('report schedules', () => {
  it('one Schedule per report with a frequency, at send_at in its time zone; PATCH updates or pauses it, manual and DELETE remove it', async () => {
    const { api, orgId } = await newOrg(svc);
    const agent = await newAgent(api);
    const report = await createReport(api, { frequency: 'weekly', timezone: 'Europe/Paris', send_at: '07:30', widget_ids: [agent.id] });
    const handle = svc.temporal.schedule.getHandle(scheduleIds.report(report.id));
    let desc = await handle.describe();
    expect(desc.scheduleId).toBe(`report-schedule:${report.id}`);
    expect(desc.spec.timezone).toBe('Europe/Paris');
    expect(desc.spec.calendars).toHaveLength(1);
    expect(desc.spec.calendars![0]).toMatchObject({ hour: [{ start: 7, end: 7, step: 1 }], minute: [{ start: 30, end: 30, step: 1 }], dayOfWeek: [{ start: 'MONDAY', end: 'MONDAY', step: 1 }] });
    expect(desc.state.paused).toBe(false);
    expect(desc.policies).toMatchObject({ overlap: ScheduleOverlapPolicy.BUFFER_ONE, catchupWindow: 86_400_000 });
    expect(desc.action).toMatchObject({ type: 'startWorkflow', workflowType: 'scheduledReportRun', workflowId: `report-schedule:${report.id}` });
    expect(desc.typedSearchAttributes.getAll().map((p) => [p.key.name, p.value]).sort()).toEqual([['AgentId', agent.id], ['OrganizationId', orgId]]);
    await api.patch(`${R}/${report.id}`, { frequency: 'monthly', send_at: '05:15', timezone: 'America/New_York' });
    desc = await handle.describe();
    expect(desc.spec.timezone).toBe('America/New_York');
    expect(desc.spec.calendars![0]).toMatchObject({ hour: [{ start: 5, end: 5, step: 1 }], minute: [{ start: 15, end: 15, step: 1 }], dayOfMonth: [{ start: 1, end: 1, step: 1 }] });
    await api.patch(`${R}/${report.id}`, { schedule_enabled: false });
    expect((await handle.describe()).state.paused).toBe(true);
    await api.patch(`${R}/${report.id}`, { schedule_enabled: true });
    expect((await handle.describe()).state.paused).toBe(false);
    await api.patch(`${R}/${report.id}`, { frequency: 'manual' });
    await expect(handle.describe()).rejects.toThrow();
    await api.patch(`${R}/${report.id}`, { frequency: 'daily' });
    expect((await handle.describe()).spec.calendars![0]).toMatchObject({ hour: [{ start: 5, end: 5, step: 1 }] });
    expect((await api.delete(`${R}/${report.id}`)).status).toBe(204);
    await expect(handle.describe()).rejects.toThrow();
  });

  it('a firing runs the period just closed (trigger "schedule"), charged once, mailed; a second firing for the period runs nothing', async () => {
    const { api } = await newOrg(svc);
    const to = `daily-${randomUUID()}@example.org`;
    const report = await createReport(api, { frequency: 'daily', recipients: [to], format: 'raw' });
    const handle = svc.temporal.schedule.getHandle(scheduleIds.report(report.id));
    await handle.trigger();
    const run = await eventually(async () => {
      const runs = (await api.get(`${R}/${report.id}/runs`)).body;
      return runs.data[0]?.status === 'succeeded' ? runs.data[0] : null;
    }, 90_000, 250);
    const yesterday = closedPeriod('daily', new Date(), 'UTC');
    expect(run).toMatchObject({ trigger: 'schedule', period_start: yesterday.start.toISOString(), period_end: yesterday.end.toISOString() });
    // The run row reads `succeeded` from the activity that stored it; its workflow completes just after.
    const runHandle = svc.temporal.workflow.getHandle(workflowIds.reportRun(run.id));
    await runHandle.result();
    const history = await runHandle.describe();
    expect(history.status.name).toBe('COMPLETED');
    await eventually(async () => mailsTo(to)[0], 30_000);
    // The firing's own workflow too: a trigger while it still runs is buffered (overlap BUFFER_ONE), and the
    // Schedule may notice its end only at its next wake-up (the test hung on that 3 times in a row at 05:xx UTC).
    const first = (await handle.describe()).info.recentActions[0]!;
    await svc.temporal.workflow.getHandle(first.action.workflow.workflowId, first.action.workflow.firstExecutionRunId).result();
    await handle.trigger();
    await eventually(async () => ((await handle.describe()).info.recentActions.length >= 2 ? true : null), 60_000, 250);
    const second = (await handle.describe()).info.recentActions[1]!;
    await svc.temporal.workflow.getHandle(second.action.workflow.workflowId, second.action.workflow.firstExecutionRunId).result();
    expect((await api.get(`${R}/${report.id}/runs`)).body.total).toBe(1);
    const charges = (await api.get(C)).body.ledger.filter((e: any) => e.reason === 'report_run');
    expect(charges).toHaveLength(1);
    expect(mailsTo(to)).toHaveLength(1);
  });

  it('a late firing covers the period closed at its scheduled time, not at its start (a backfill of a past firing)', async () => {
    const { api } = await newOrg(svc);
    const report = await createReport(api, { frequency: 'daily', send_at: '06:00', timezone: 'Europe/Paris', format: 'raw' });
    const handle = svc.temporal.schedule.getHandle(scheduleIds.report(report.id));
    // Due 2026-11-20 06:00 in Paris (05:00 UTC), started now: it covers 2026-11-19 in Paris.
    await handle.backfill([{ start: new Date('2026-11-20T04:59:00Z'), end: new Date('2026-11-20T05:01:00Z'), overlap: ScheduleOverlapPolicy.ALLOW_ALL }]);
    const run = await eventually(async () => {
      const runs = (await api.get(`${R}/${report.id}/runs`)).body;
      return runs.data[0]?.status === 'succeeded' ? runs.data[0] : null;
    }, 90_000, 250);
    expect(run).toMatchObject({ trigger: 'schedule', period_start: '2026-11-18T23:00:00.000Z', period_end: '2026-11-19T23:00:00.000Z' });
  });

  it('a scheduled run without credits is failed with insufficient_credits and mails nothing', async () => {
    const { api } = await newOrg(svc);
    const to = `broke-${randomUUID()}@example.org`;
    const report = await createReport(api, { frequency: 'daily', recipients: [to] });
    await api.post(`${C}/adjustments`, { amount_cents: -10000, reason: 'drain' });
    await svc.temporal.schedule.getHandle(scheduleIds.report(report.id)).trigger();
    const run = await eventually(async () => (await api.get(`${R}/${report.id}/runs`)).body.data[0], 60_000, 250);
    expect(run).toMatchObject({ status: 'failed', trigger: 'schedule' });
    expect(run.error).toMatch(/^insufficient_credits/);
    expect((await api.get(C)).body.balance_cents).toBe(0);
    expect(mailsTo(to)).toHaveLength(0);
  });

  it('deleting an agent deletes the reports of that agent alone, with their Schedules, and leaves the others without it', async () => {
    const { api } = await newOrg(svc);
    const a = await newAgent(api, 'A');
    const b = await newAgent(api, 'B');
    const onlyA = await createReport(api, { frequency: 'daily', widget_ids: [a.id] });
    const both = await createReport(api, { frequency: 'daily', widget_ids: [a.id, b.id] });
    expect((await api.delete(`/api/v1/rest/agents/${a.id}`)).status).toBe(204);
    expectProblem(await api.get(`${R}/${onlyA.id}`), 404, 'not_found');
    expect((await api.get(`${R}/${both.id}`)).body.widget_ids).toEqual([b.id]);
    await eventually(async () => svc.temporal.schedule.getHandle(scheduleIds.report(onlyA.id)).describe().then(() => null, () => true), 30_000);
    expect((await svc.temporal.schedule.getHandle(scheduleIds.report(both.id)).describe()).scheduleId).toBe(`report-schedule:${both.id}`);
  });
});

describe('report rollups', () => {
  it('give the figures of a direct aggregate, in any time zone and period, after conversations end, are re-evaluated, tagged, noted, deleted or lose their agent', async () => {
    const org = await seededOrg();
    const reports = await Promise.all(['UTC', 'Asia/Kolkata', 'America/New_York'].map(async (timezone) => {
      const created = await createReport(org.api, { name: `Rollups ${timezone}`, data_categories: ALL, timezone });
      return (await findReport(svc.sql, org.orgId, created.id))!;
    }));
    const scoped = { ...reports[0]!, widget_ids: [org.agentA.id] };
    const periods = [
      { start: new Date(PERIOD.period_start), end: new Date(PERIOD.period_end) },
      { start: new Date('2026-10-02T12:30:00Z'), end: new Date('2026-10-20T07:00:00Z') }, // partial days at both ends
      { start: new Date('2026-10-03T09:00:00Z'), end: new Date('2026-10-03T11:00:00Z') }, // inside one day
    ];
    const now = new Date();
    const compare = async () => {
      const seen: ReportData[] = [];
      for (const report of [...reports, scoped]) {
        for (const period of periods) {
          const fromRollups = await aggregateReport(svc.sql, report, period, now);
          expect(fromRollups, `${report.timezone} ${period.start.toISOString()}`).toEqual(await aggregateReport(svc.sql, report, period, now, { direct: true }));
          seen.push(fromRollups);
        }
      }
      return seen;
    };
    const before = await compare();
    expect(before[0]!.headline.conversations).toBe(5);
    const kept = await svc.sql<{ n: number }[]>`select count(*)::int as n from report_rollup_days where org_id = ${org.orgId}`;
    expect(kept[0]!.n).toBeGreaterThan(60);

    // Changes after the rollups were made: each must show in the next report.
    const convs = await svc.sql<{ id: string; agent_id: string; surface: string }[]>`
      select id, agent_id, surface from conversations where org_id = ${org.orgId} and not is_simulated order by started_at`;
    await svc.sql`update conversations set ended_at = started_at + interval '93 seconds', status = 'ended' where id = ${convs[1]!.id}`;
    await svc.sql`update conversations set criteria_results = ${svc.sql.json([{ criterion: 'Polite', verdict: 'fail', reason: 're-evaluated' }])}, outcome = 'abandoned' where id = ${convs[0]!.id}`;
    await svc.sql`update conversations set tags = array['escalated'], labels = '{}', summary_rating = 1, intent = 'complaint' where id = ${convs[2]!.id}`;
    await svc.sql`insert into conversation_notes (id, conversation_id, author, text) values (${randomUUID()}, ${convs[2]!.id}, 'Bo', 'again')`;
    await svc.sql`delete from conversations where id = ${convs[3]!.id}`;
    await svc.sql`insert into conversations (id, org_id, agent_id, surface, started_at, status, outcome, intent) values
      (${randomUUID()}, ${org.orgId}, ${org.agentA.id}, 'email', ${new Date('2026-10-02T19:10:00Z')}, 'active', 'resolved', 'pricing')`;
    await org.api.delete(`/api/v1/rest/agents/${org.agentB.id}`);
    const after = await compare();
    expect(after[0]!.headline.conversations).toBe(4);
    expect(after[0]).not.toEqual(before[0]);
    expect(after[0]!.goals!.criteria.find((c) => c.criterion === 'Polite')).toMatchObject({ pass: 2, fail: 1 });
  });

  it('give the call figures of the call records: phone conversations less those campaign calls made, in any time zone and period', async () => {
    const { api, orgId } = await newOrg(svc);
    const agent = await newAgent(api, 'Front desk');
    await seedCalls(orgId, agent.id);
    const created = await createReport(api, { name: 'Calls', data_categories: ['calls'], timezone: 'Asia/Kolkata' });
    const report = (await findReport(svc.sql, orgId, created.id))!;
    const now = new Date();
    const periods = [
      { start: new Date(PERIOD.period_start), end: new Date(PERIOD.period_end) },
      { start: new Date('2026-10-04T06:00:00Z'), end: new Date('2026-10-05T09:30:00Z') }, // partial days: the inbound call, the first campaign call
    ];
    const seen: unknown[] = [];
    for (const r of [report, { ...report, timezone: 'UTC' }, { ...report, timezone: 'UTC', widget_ids: [agent.id] }]) {
      for (const period of periods) {
        const fromRollups = await aggregateReport(svc.sql, r, period, now);
        expect(fromRollups, `${r.timezone} ${period.start.toISOString()}`).toEqual(await aggregateReport(svc.sql, r, period, now, { direct: true }));
        seen.push(fromRollups.calls!.by_outcome);
      }
    }
    expect(seen[0]).toEqual([{ outcome: 'busy', count: 1, talk_seconds: 0 }, { outcome: 'handoff_requested', count: 1, talk_seconds: 40 },
      { outcome: 'resolved', count: 1, talk_seconds: 31 }, { outcome: 'unresolved', count: 1, talk_seconds: 31 }]);
    expect(seen[1]).toEqual([{ outcome: 'handoff_requested', count: 1, talk_seconds: 40 }, { outcome: 'resolved', count: 1, talk_seconds: 31 }]);
  });
});
