import { expect } from 'vitest';
import { eventually, type TestService } from '../helpers.ts';
import { newAgent, newOrg, type Api } from './orgs.ts';

export const CAMPAIGNS = '/api/v1/rest/campaigns';

/** A fresh organization with an agent that has an active (sandbox) number. */
export async function orgWithNumber(svc: TestService) {
  const org = await newOrg(svc);
  const agent = await newAgent(org.api, 'Outbound');
  const bought = await org.api.post('/api/v1/rest/phone-numbers', { widget_id: agent.id });
  expect(bought.status, bought.text).toBe(201);
  return { ...org, agent, number: bought.body as Record<string, any> };
}

export async function createCampaign(api: Api, body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await api.post(CAMPAIGNS, { name: 'Calls', max_duration_seconds: 600, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, any>;
}

export async function startedCampaign(api: Api, body: Record<string, unknown>): Promise<Record<string, any>> {
  const campaign = await createCampaign(api, body);
  const started = await api.post(`${CAMPAIGNS}/${campaign.id}/start`);
  expect(started.status, started.text).toBe(200);
  expect(started.body.status).toBe('running');
  return started.body as Record<string, any>;
}

/** Every call of a campaign, in queue order. */
export async function callsOf(api: Api, campaignId: string, query = ''): Promise<Record<string, any>[]> {
  const out: Record<string, any>[] = [];
  for (let offset = 0; ; offset += 100) {
    const res = await api.get(`${CAMPAIGNS}/${campaignId}/calls?limit=100&offset=${offset}${query}`);
    expect(res.status, res.text).toBe(200);
    out.push(...res.body.data);
    if (res.body.data.length < 100) return out;
  }
}

/** Waits for the campaign to reach `status`. */
export async function campaignReaches(api: Api, campaignId: string, status: string, timeoutMs = 90_000): Promise<Record<string, any>> {
  return eventually(async () => {
    const res = await api.get(`${CAMPAIGNS}/${campaignId}`);
    return res.body.status === status ? res.body as Record<string, any> : null;
  }, timeoutMs, 200);
}

/** The most calls that were in flight at once, from their dialing and end times (ends before starts at a tie). */
export function peakConcurrency(calls: Record<string, any>[]): number {
  const marks = calls.filter((c) => c.started_at).flatMap((c) => [
    { at: Date.parse(c.started_at!), d: 1 }, { at: c.ended_at ? Date.parse(c.ended_at) : Infinity, d: -1 },
  ]).sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let peak = 0;
  for (const m of marks) { now += m.d; peak = Math.max(peak, now); }
  return peak;
}

/** The campaign events of an organization, oldest first. */
export async function eventsOf(svc: TestService, orgId: string): Promise<{ type: string; data: any }[]> {
  return svc.sql<{ type: string; data: any }[]>`select type, data from events where org_id = ${orgId} order by created_at, id`;
}

/** Whether the carrier was ever asked to place this campaign call. */
export async function carrierCalled(svc: TestService, callId: string): Promise<boolean> {
  const rows = await svc.sql`select 1 from carrier_operations where operation = 'call' and details->>'url' like ${`%campaign_call=${callId}`}`;
  return rows.length > 0;
}
