import type { FamilyDeps } from '../deps.ts';
import { fieldError, notFound } from '../errors.ts';
import { findAgent } from '../db/agents.ts';
import { findAgentRedaction, upsertAgentRedaction } from '../db/governance.ts';
import type { RedactionSettings } from '../schemas/governance.ts';

/** Agents' redaction settings (issue 47), and the one question each path asks: what to hide here, for this agent? */
type Deps = Pick<FamilyDeps, 'sql'>;

const NONE: RedactionSettings = { kinds: [], targets: [], national_id_countries: [], patterns: [] };

export async function getAgentRedaction(deps: Deps, orgId: string, agentId: string): Promise<RedactionSettings> {
  if (!await findAgent(deps.sql, orgId, agentId)) throw notFound('agent');
  return { ...NONE, ...await findAgentRedaction(deps.sql, agentId) };
}

export async function putAgentRedaction(deps: Deps, orgId: string, agentId: string, body: RedactionSettings): Promise<RedactionSettings> {
  body.patterns.forEach((p, i) => {
    try { new RegExp(p.pattern, 'gi'); } catch { throw fieldError(`patterns/${i}/pattern`, 'invalid_pattern', 'not a valid regular expression'); }
  });
  if (!await findAgent(deps.sql, orgId, agentId)) throw notFound('agent');
  await upsertAgentRedaction(deps.sql, orgId, agentId, body);
  return body;
}
