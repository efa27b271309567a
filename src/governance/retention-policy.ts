import { ScheduleOverlapPolicy } from '@temporalio/client';
import type { FamilyDeps } from '../deps.ts';
import { notFound } from '../errors.ts';
import { findAgent } from '../db/agents.ts';
import {
  agentRetentionOverrides, findAgentGovernance, findRetentionPolicy, upsertAgentRetention, upsertRetentionPolicy, type RetentionSettings,
} from '../db/governance.ts';
import { AGENT_RETENTION_KEYS, RETENTION_KEYS, type AgentRetentionPut, type RetentionPolicy, type RetentionPolicyPut } from '../schemas/governance.ts';
import { scheduleIds, workflowIds } from '../temporal/ids.ts';
import { scheduleWorkflow, startWorkflow, unscheduleWorkflow } from '../temporal/start.ts';
import { enforceRetentionKind, type RetentionTask } from '../../workflows/enforce-retention.ts';
import { retentionSteps } from './plugins.ts';

/**
 * Retention policies (issue 47): the organization's days per kind of data, an agent's overrides,
 * and the Schedule `retention:<org>` that exists exactly while something is to be deleted.
 */
type Deps = Pick<FamilyDeps, 'sql' | 'temporal' | 'config' | 'log'>;

const DAY_MS = 86_400_000;
const hasDays = (settings: RetentionSettings) => Object.values(settings).some((v) => typeof v === 'number');
const only = (body: Record<string, number | null | undefined>) => Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as RetentionSettings;

export async function getRetentionPolicy(deps: Pick<Deps, 'sql'>, orgId: string): Promise<RetentionPolicy> {
  const policy = await findRetentionPolicy(deps.sql, orgId);
  const settings = Object.fromEntries(RETENTION_KEYS.map((k) => [k, policy?.settings[k] ?? null]));
  const scheduled = hasDays(policy?.settings ?? {}) || (await agentRetentionOverrides(deps.sql, orgId)).some((o) => hasDays(o.retention));
  return { settings, schedule_id: scheduled ? scheduleIds.retention(orgId) : null, updated_at: policy?.updated_at.toISOString() ?? null };
}

/** Creates the retention Schedule while some policy deletes something, and removes it once everything is kept. */
async function syncSchedule(deps: Deps, orgId: string): Promise<void> {
  const policy = await getRetentionPolicy(deps, orgId);
  const id = scheduleIds.retention(orgId);
  if (!policy.schedule_id) return unscheduleWorkflow(deps, id);
  await scheduleWorkflow(deps, enforceRetentionKind, id, [{ orgId }], { orgId, summary: 'retention: delete what is past the organization\'s policy' }, {
    spec: { intervals: [{ every: `${deps.config.RETENTION_INTERVAL_HOURS} hours` }] },
    overlap: ScheduleOverlapPolicy.SKIP,
    catchupWindow: '1 day',
  });
}

/** Replaces the organization's policy (a key absent or null keeps everything), then brings the Schedule in line. */
export async function putRetentionPolicy(deps: Deps, orgId: string, body: RetentionPolicyPut): Promise<RetentionPolicy> {
  await upsertRetentionPolicy(deps.sql, orgId, only(body));
  await syncSchedule(deps, orgId);
  return getRetentionPolicy(deps, orgId);
}

async function agentOf(deps: Pick<Deps, 'sql'>, orgId: string, agentId: string) {
  const agent = await findAgent(deps.sql, orgId, agentId);
  if (!agent) throw notFound('agent');
  return agent;
}

export async function getAgentRetention(deps: Pick<Deps, 'sql'>, orgId: string, agentId: string) {
  await agentOf(deps, orgId, agentId);
  const [own, policy] = await Promise.all([findAgentGovernance(deps.sql, agentId), findRetentionPolicy(deps.sql, orgId)]);
  const overrides = own?.retention ?? {};
  const effective = Object.fromEntries(AGENT_RETENTION_KEYS.map((k) => [k, k in overrides ? overrides[k] ?? null : policy?.settings[k] ?? null]));
  return { overrides, effective };
}

/** Replaces an agent's overrides (a key given wins, null keeping everything; absent inherits). */
export async function putAgentRetention(deps: Deps, orgId: string, agentId: string, body: AgentRetentionPut) {
  await agentOf(deps, orgId, agentId);
  await upsertAgentRetention(deps.sql, orgId, agentId, Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as RetentionSettings);
  await syncSchedule(deps, orgId);
  return getAgentRetention(deps, orgId, agentId);
}

/** Starts a retention run now (besides the Schedule's), answering its workflow id. */
export async function runRetentionNow(deps: Deps, orgId: string): Promise<string> {
  const id = workflowIds.retentionRun(orgId, new Date().toISOString());
  await startWorkflow(deps, enforceRetentionKind, id, [{ orgId }], { orgId, summary: 'retention: a run asked for by hand' });
  return id;
}

/**
 * What a run deletes, fixed once at its start: per step, a task for each agent overriding its key
 * (unless it keeps everything) and one for the rest of the organization, each with its cutoff.
 */
export async function planRetention(deps: Pick<Deps, 'sql'>, orgId: string, now: Date): Promise<RetentionTask[]> {
  const policy = (await findRetentionPolicy(deps.sql, orgId))?.settings ?? {};
  const overrides = await agentRetentionOverrides(deps.sql, orgId);
  const cutoff = (days: number) => new Date(now.getTime() - days * DAY_MS).toISOString();
  const tasks: RetentionTask[] = [];
  for (const [step, def] of Object.entries(await retentionSteps())) {
    const overriding = def.perAgent ? overrides.filter((o) => def.key in o.retention) : [];
    for (const o of overriding) {
      const days = o.retention[def.key];
      if (typeof days === 'number') tasks.push({ step, cutoff: cutoff(days), agentId: o.agentId, excludeAgentIds: [] });
    }
    const days = policy[def.key];
    if (typeof days === 'number') tasks.push({ step, cutoff: cutoff(days), agentId: null, excludeAgentIds: overriding.map((o) => o.agentId) });
  }
  return tasks;
}
