import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Timestamp, Uuid } from './common.ts';
import { AgentName, AgentPatchProps, SiteUrl } from './agents.ts';
import { TransferRuleCreateSchema } from './transfer-rules.ts';
import { VoiceProfileCreateSchema } from './voice-profiles.ts';
import { TrainingNoteCreateSchema } from './training-notes.ts';
import { DataTableCreateSchema, DATA_TABLE_LIMITS, RowData } from './data-tables.ts';
import { AGENT_TOOL_LIMITS, ManifestToolSchema } from './agent-tools.ts';

/**
 * Data-table rows an export carries, all tables together, measured as JSON: past it, a table's
 * later rows are left out (and the table says so), so that the manifest stays under the 1 MiB
 * body an import accepts. Clone copies every row.
 */
export const MANIFEST_ROW_BYTES = 512 * 1024;

/** The manifest format this service writes and reads; an import of another version is refused. */
export const MANIFEST_VERSION = 1;

const { name: _n, persona, voice, status: _s, voice_profile_id: _v, ...configProps } = AgentPatchProps;

/** The SIP trunk a `sip_refer` rule used, by what identifies it across organizations (never its password). */
const TrunkReference = Type.Object({
  label: Type.String({ maxLength: 200 }),
  sip_host: Type.String({ minLength: 1, maxLength: 300 }),
  sip_username: Type.String({ maxLength: 256 }),
}, { additionalProperties: false, description: 'Resolved on import to the importing organization\'s trunk with this host and username' });

const { sip_trunk_id: _t, ...ruleProps } = TransferRuleCreateSchema.properties;
const ManifestRule = Type.Object({
  ...ruleProps,
  sip_trunk: Type.Optional(Nullable(TrunkReference)),
}, { additionalProperties: false });

const { name: profileName, ...profileProps } = VoiceProfileCreateSchema.properties;

/**
 * A portable agent: its configuration, transfer rules, voice profile inline and site URLs.
 * Identity (ids, public key, status, timestamps) and secrets are never part of it.
 */
export const AgentManifestSchema = Type.Object({
  manifest_version: Type.Integer({ const: MANIFEST_VERSION, 'x-code': 'unsupported_manifest_version', description: `Format version; this service reads ${MANIFEST_VERSION}` }),
  exported_at: Type.Optional(Timestamp),
  source: Type.Optional(Type.Object({
    agent_id: Uuid,
    organization_id: Uuid,
  }, { additionalProperties: false, description: 'Where the manifest came from (informative)' })),
  agent: Type.Object({
    name: AgentName,
    persona,
    voice,
    site_url: Type.Optional(Nullable(SiteUrl)),
    configuration: Type.Object(configProps, { additionalProperties: false, description: 'Every configuration field, as PATCH takes it' }),
  }, { additionalProperties: false }),
  voice_profile: Type.Optional(Nullable(Type.Object({ name: profileName, ...profileProps }, { additionalProperties: false }))),
  transfer_rules: Type.Array(ManifestRule, { maxItems: 200 }),
  sites: Type.Array(Type.Object({ url: SiteUrl }, { additionalProperties: false }), { maxItems: 50, description: 'URLs of the websites the agent learns from' }),
  training_notes: Type.Optional(Type.Array(Type.Object(TrainingNoteCreateSchema.properties, { additionalProperties: false }), { maxItems: 500, description: 'The agent\'s training notes, oldest first' })),
  data_tables: Type.Optional(Type.Array(Type.Object({
    ...DataTableCreateSchema.properties,
    rows: Type.Array(RowData, { maxItems: DATA_TABLE_LIMITS.rowsPerTable, description: 'The rows, in order' }),
    rows_truncated: Type.Optional(Type.Boolean({ description: `True when the export left later rows out (all tables share ${MANIFEST_ROW_BYTES / 1024} KiB of rows)` })),
  }, { additionalProperties: false }), { maxItems: DATA_TABLE_LIMITS.tablesPerAgent, description: 'The agent\'s data tables with their rows' })),
  tools: Type.Optional(Type.Array(ManifestToolSchema, {
    maxItems: AGENT_TOOL_LIMITS.toolsPerAgent, description: 'The agent\'s tools, oldest first, without their secrets (an import gives each a new one: rotate it to read it)',
  })),
}, { $id: 'AgentManifest', additionalProperties: false, description: 'A versioned, portable agent: POST it to /agents/import' });
export type AgentManifest = Static<typeof AgentManifestSchema>;

export const AgentCloneSchema = Type.Object({
  name: Type.Optional(AgentName),
}, { $id: 'AgentClone', additionalProperties: false, description: 'Optional name of the copy (default: the name with " (copy)")' });

export const AgentPromoteSchema = Type.Object({
  target_agent_id: { ...Uuid, description: 'The sibling agent (same organization) that receives this agent\'s configuration' },
}, { $id: 'AgentPromote', additionalProperties: false });
