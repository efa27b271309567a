import type { Db, Sql } from '../db/index.ts';
import { validationError } from '../errors.ts';
import type { FieldError } from '../validation.ts';
import { findAgentConfig, insertAgent, replaceConfiguration } from '../db/agents.ts';
import { findSipTrunk, findSipTrunkByHost } from '../db/sip-trunks.ts';
import { deleteTransferRulesOfAgent, listTransferRules } from '../db/transfer-rules.ts';
import { findVoiceProfile, insertVoiceProfile } from '../db/voice-profiles.ts';
import type { Agent, AgentPatch } from '../schemas/agents.ts';
import { MANIFEST_ROW_BYTES, MANIFEST_VERSION, type AgentManifest } from '../schemas/agent-manifest.ts';
import { DATA_TABLE_LIMITS } from '../schemas/data-tables.ts';
import { applyPatch, readConfig, type ConfigObject } from '../domain/agent-config.ts';
import { mergeTransferRule, transferRuleInput } from '../domain/transfer-rules.ts';
import { insertTransferRule } from '../transfer-rules/index.ts';
import { checkAgentImageUrls, checkAgentPatch } from './changes.ts';
import { insertSite } from '../db/sites.ts';
import { deleteTrainingNotesOfAgent, insertTrainingNotes, listTrainingNotes } from '../db/training-notes.ts';
import { copyDataTables, insertDataTableWithRows, listDataRows, listDataTables } from '../db/data-tables.ts';
import { duplicateColumns, typedJsonRow, type Cell } from '../domain/data-rows.ts';
import { startCrawl } from '../knowledge/crawls.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import { insertAgentTools, listAgentTools } from '../db/agent-tools.ts';
import { newToolSecret, toolFieldErrors } from '../tools/definitions.ts';
import { AGENT_TOOL_LIMITS } from '../schemas/agent-tools.ts';
import { assertOutboundUrl, outboundPolicy } from '../net/outbound.ts';
import { checkSiteUrl, type KnowledgeDeps } from '../knowledge/sites.ts';

/**
 * Moving configuration between agents: clone (a new agent in the same organization), promote
 * (onto a sibling), export (a portable manifest) and import (a manifest into an organization).
 * Each runs in one transaction: it happens whole or not at all.
 */

async function copyTransferRules(tx: Db, orgId: string, fromAgentId: string, toAgentId: string): Promise<void> {
  for (const rule of await listTransferRules(tx, orgId, fromAgentId)) {
    await insertTransferRule(tx, orgId, toAgentId, transferRuleInput(rule));
  }
}

const copyName = (name: string) => (name.length > 193 ? name.slice(0, 193) : name) + ' (copy)';

/** The agent's tools as the manifest and a clone carry them: no id, no secret. */
async function portableTools(db: Db, agentId: string) {
  return (await listAgentTools(db, agentId)).map((t) => ({
    name: t.name, description: t.description, parameters: t.parameters, url: t.url, method: t.method,
    timeout_seconds: t.timeout_seconds, call_on: t.call_on, enabled: t.enabled,
  }));
}

/**
 * A new agent with the source's configuration, transfer rules, training notes, data tables (every
 * row) and tools (each with a new secret); not its draft, inboxes or identity.
 */
export async function cloneAgent(sql: Sql, secrets: SecretBox, orgId: string, sourceId: string, opts: { name?: string | undefined }): Promise<Agent | null> {
  return sql.begin(async (tx) => {
    const source = await findAgentConfig(tx, orgId, sourceId);
    if (!source) return null;
    const { agent, config } = source;
    const clone = await insertAgent(tx, orgId, {
      name: opts.name ?? copyName(agent.name), site_url: agent.site_url, persona: agent.persona, voice: agent.voice, config,
      status: agent.status === 'paused' ? 'paused' : 'active',
    });
    await copyTransferRules(tx, orgId, sourceId, clone.id);
    await insertTrainingNotes(tx, orgId, clone.id, await listTrainingNotes(tx, sourceId));
    await copyDataTables(tx, orgId, sourceId, clone.id);
    await insertAgentTools(tx, secrets, orgId, clone.id, await portableTools(tx, sourceId), newToolSecret);
    return clone;
  });
}

/**
 * Copies the source's configuration, transfer rules and training notes onto a sibling agent; the target keeps
 * its identity, public key, status and domains. Null when the source is missing; a target that
 * is missing, another organization's or the source itself is 400 on `target_agent_id`.
 */
export async function promoteAgent(sql: Sql, orgId: string, sourceId: string, targetId: string): Promise<Agent | null> {
  return sql.begin(async (tx) => {
    const source = await findAgentConfig(tx, orgId, sourceId);
    if (!source) return null;
    if (targetId === sourceId) throw validationError([{ field: 'target_agent_id', code: 'same_agent', message: 'target_agent_id must name another agent than the source' }]);
    const target = await replaceConfiguration(tx, orgId, targetId, { persona: source.agent.persona, voice: source.agent.voice, config: source.config });
    if (!target) throw validationError([{ field: 'target_agent_id', code: 'unknown_agent', message: 'target_agent_id must name an agent of this organization' }]);
    await deleteTransferRulesOfAgent(tx, targetId);
    await copyTransferRules(tx, orgId, sourceId, targetId);
    // The notes are corrections of the configuration: the target's are replaced by the source's.
    await deleteTrainingNotesOfAgent(tx, targetId);
    await insertTrainingNotes(tx, orgId, targetId, await listTrainingNotes(tx, sourceId));
    return target;
  });
}

/** The portable manifest of an agent: no identity, no secret (a SIP trunk by host and username only). */
export async function exportAgent(db: Db, orgId: string, id: string): Promise<AgentManifest | null> {
  const source = await findAgentConfig(db, orgId, id);
  if (!source) return null;
  const { agent, config } = source;
  const { voice_profile_id: profileId, ...configuration } = readConfig(config);
  const profile = typeof profileId === 'string' ? await findVoiceProfile(db, orgId, profileId) : null;
  const rules = [];
  for (const rule of await listTransferRules(db, orgId, id)) {
    const { sip_trunk_id: trunkId, ...fields } = transferRuleInput(rule);
    const trunk = trunkId ? await findSipTrunk(db, orgId, trunkId) : null;
    rules.push({ ...fields, sip_trunk: trunk ? { label: trunk.label, sip_host: trunk.sip_host, sip_username: trunk.sip_username } : null });
  }
  return {
    manifest_version: MANIFEST_VERSION,
    exported_at: new Date().toISOString(),
    source: { agent_id: agent.id, organization_id: orgId },
    agent: { name: agent.name, persona: agent.persona, voice: agent.voice as AgentManifest['agent']['voice'], site_url: agent.site_url, configuration: configuration as AgentManifest['agent']['configuration'] },
    voice_profile: profile ? {
      name: profile.name, base_voice: profile.base_voice, accent: profile.accent, energy: profile.energy,
      pace: profile.pace, formality: profile.formality, custom_direction: profile.custom_direction,
    } : null,
    transfer_rules: rules,
    sites: agent.site_url ? [{ url: agent.site_url }] : [],
    training_notes: (await listTrainingNotes(db, id)).map((n) => ({ question: n.question, answer: n.answer })),
    data_tables: await exportedTables(db, id),
    tools: await portableTools(db, id),
  };
}

/** The agent's tables with their rows, all tables sharing MANIFEST_ROW_BYTES of rows (as JSON); a table cut short says so. */
async function exportedTables(db: Db, agentId: string): Promise<NonNullable<AgentManifest['data_tables']>> {
  let budget = MANIFEST_ROW_BYTES;
  const out: NonNullable<AgentManifest['data_tables']> = [];
  for (const table of await listDataTables(db, agentId)) {
    const rows: Record<string, Cell>[] = [];
    for (const row of await listDataRows(db, table.id, DATA_TABLE_LIMITS.rowsPerTable)) {
      const size = Buffer.byteLength(JSON.stringify(row)) + 1;
      if (size > budget) break;
      budget -= size;
      rows.push(row);
    }
    out.push({
      name: table.name, description: table.description, columns: table.columns, rows,
      ...(rows.length < table.row_count ? { rows_truncated: true } : {}),
    });
  }
  return out;
}

const prefixed = (prefix: string, errors: FieldError[]) => errors.map((e) => ({ ...e, field: `${prefix}.${e.field}` }));

/**
 * Creates the manifest's agent in the organization. References are resolved there: the voice
 * profile is created from its inline copy, each `sip_refer` rule's trunk is looked up by host and
 * username. Anything that cannot be resolved is a 400 naming it, and nothing is created.
 */
export async function importAgent(deps: KnowledgeDeps & { secrets: SecretBox }, orgId: string, manifest: AgentManifest): Promise<Agent> {
  // Every URL the manifest carries is checked at the door, as create checks site_url.
  if (manifest.agent.site_url) await checkSiteUrl(deps, manifest.agent.site_url, 'agent.site_url');
  for (const [i, site] of manifest.sites.entries()) await checkSiteUrl(deps, site.url, `sites[${i}].url`);
  await checkAgentImageUrls(deps.config, manifest.agent.configuration, 'agent.configuration.');
  const tools = manifest.tools ?? [];
  for (const [i, tool] of tools.entries()) {
    await assertOutboundUrl(tool.url, `tools[${i}].url`, outboundPolicy(deps.config));
  }
  return deps.sql.begin(async (tx) => {
    const errors: FieldError[] = [];
    let configuration: AgentPatch = manifest.agent.configuration;
    try {
      configuration = await checkAgentPatch(tx, orgId, configuration);
    } catch (err) {
      errors.push(...prefixed('agent.configuration', (err as { errors?: FieldError[] }).errors ?? []));
    }
    const rules = [];
    for (const [i, { sip_trunk: ref, ...fields }] of manifest.transfer_rules.entries()) {
      let sipTrunkId: string | null = null;
      if (ref) {
        const trunk = await findSipTrunkByHost(tx, orgId, ref.sip_host, ref.sip_username);
        if (trunk) sipTrunkId = trunk.id;
        else errors.push({ field: `transfer_rules[${i}].sip_trunk`, code: 'unresolved_sip_trunk', message: `transfer_rules[${i}] needs a SIP trunk to ${ref.sip_host} with username ${ref.sip_username} in this organization: create it (passwords are never exported), then import again` });
      }
      const input = { ...fields, sip_trunk_id: sipTrunkId };
      const checked = mergeTransferRule(null, input);
      errors.push(...prefixed(`transfer_rules[${i}]`, checked.errors.filter((e) => !(e.field === 'sip_trunk_id' && ref))));
      rules.push(input);
    }
    const tables = (manifest.data_tables ?? []).map((table, t) => {
      errors.push(...prefixed(`data_tables[${t}]`, duplicateColumns(table.columns)));
      const rows: Record<string, Cell>[] = [];
      for (const [i, raw] of table.rows.entries()) {
        const typed = typedJsonRow(table.columns, raw, i);
        if ('error' in typed) {
          errors.push(...prefixed(`data_tables[${t}]`, [typed.error]));
          break;
        }
        rows.push(typed.row);
      }
      return { table, rows };
    });
    const names = new Set<string>();
    for (const [i, tool] of tools.entries()) {
      errors.push(...toolFieldErrors(tool, `tools[${i}].`));
      if (names.has(tool.name)) errors.push({ field: `tools[${i}].name`, code: 'duplicate_name', message: `tools[${i}]: another tool of the manifest is named ${tool.name}` });
      names.add(tool.name);
    }
    if (tools.length > AGENT_TOOL_LIMITS.toolsPerAgent) errors.push({ field: 'tools', code: 'too_many_items', message: `an agent has at most ${AGENT_TOOL_LIMITS.toolsPerAgent} tools` });
    if (errors.length) throw validationError(errors, `the manifest cannot be imported: ${errors[0]!.message}`);

    const profile = manifest.voice_profile ? await insertVoiceProfile(tx, orgId, manifest.voice_profile) : null;
    const config: ConfigObject = applyPatch({ name: '', persona: null, voice: null, status: 'active' }, {}, {
      ...configuration, ...(profile ? { voice_profile_id: profile.id } : {}),
    }).config;
    const site = manifest.agent.site_url ?? manifest.sites[0]?.url ?? null;
    const agent = await insertAgent(tx, orgId, {
      name: manifest.agent.name, persona: manifest.agent.persona ?? null, voice: manifest.agent.voice ?? null, site_url: site, config,
    });
    for (const rule of rules) await insertTransferRule(tx, orgId, agent.id, rule);
    await insertTrainingNotes(tx, orgId, agent.id, manifest.training_notes ?? []);
    for (const { table, rows } of tables) {
      await insertDataTableWithRows(tx, orgId, agent.id, { name: table.name, description: table.description ?? null, columns: table.columns }, rows);
    }
    // Secrets never travel: each imported tool gets a new one (rotate it to read it).
    await insertAgentTools(tx, deps.secrets, orgId, agent.id, tools, newToolSecret);
    // Its website is queued and crawled exactly as on create: the crawl's end makes it active.
    if (site) await startCrawl(deps, tx, await insertSite(tx, orgId, { url: site, agentId: agent.id }));
    return agent;
  });
}
