import { Type, type Static, type TOptional } from '@sinclair/typebox';
import { Nullable, StringEnum, Timestamp, Uuid } from './common.ts';

/**
 * Data governance (issue 47): how long each kind of data is kept, what an agent's redaction hides
 * and where, a person's data on request (export, erase), and consent.
 */

/**
 * The kinds of data a retention policy covers, each a settings key. `recordings` and `audit_log`
 * are enforced by the families that keep them (their own `retention.ts`).
 */
export const RETENTION_KEYS = ['conversations', 'recordings', 'inbound_mail', 'report_artifacts', 'webhook_deliveries', 'audit_log'] as const;
export type RetentionKey = (typeof RETENTION_KEYS)[number];

/** The keys an agent can override: the others (report runs, webhook deliveries, the audit log) belong to the whole organization. */
export const AGENT_RETENTION_KEYS = ['conversations', 'recordings', 'inbound_mail'] as const;

const Days = Type.Integer({ minimum: 1, maximum: 36500, description: 'Days to keep; older data is deleted by the retention Schedule' });
const KEY_DESCRIPTIONS: Record<RetentionKey, string> = {
  conversations: 'Conversations, with their messages, captured data, annotations and tool calls (ended conversations, by their last activity)',
  recordings: 'Call recordings',
  inbound_mail: 'Email conversations (what came in by mail and the replies), by their last activity',
  report_artifacts: 'Report runs with their generated files and figures',
  webhook_deliveries: 'Webhook events sent and their delivery attempts',
  audit_log: 'Audit log entries',
};

const keyed = <K extends readonly RetentionKey[]>(keys: K) => Object.fromEntries(keys.map((k) => [k, Type.Optional(Nullable(Type.Integer({
  ...Days, description: `${KEY_DESCRIPTIONS[k]}: days to keep; null or absent keeps everything`,
})))])) as Record<K[number], TOptional<ReturnType<typeof Nullable<typeof Days>>>>;

/** PUT body of the organization's policy: each key in days, null (or absent) to keep everything. */
export const RetentionPolicyPutSchema = Type.Object(keyed(RETENTION_KEYS), {
  $id: 'RetentionPolicyPut', additionalProperties: false,
  description: 'Days to keep each kind of data; a key absent or null keeps it all (the default)',
});
export type RetentionPolicyPut = Static<typeof RetentionPolicyPutSchema>;

const AllKeys = Type.Object(Object.fromEntries(RETENTION_KEYS.map((k) => [k, Nullable(Type.Integer({ minimum: 1, description: KEY_DESCRIPTIONS[k] }))])), { additionalProperties: false });

/** The organization's policy as GET answers it: every key (null keeps everything) and its Schedule. */
export const RetentionPolicySchema = Type.Object({
  settings: AllKeys,
  schedule_id: Nullable(Type.String({ description: 'The Temporal Schedule enforcing the policy (`retention:<org id>`); null while everything is kept' })),
  updated_at: Nullable(Timestamp),
}, { $id: 'RetentionPolicy', additionalProperties: false });
export type RetentionPolicy = Static<typeof RetentionPolicySchema>;

/** PUT body of an agent's overrides: a key given overrides the organization (null: keep everything); absent inherits. */
export const AgentRetentionPutSchema = Type.Object(keyed(AGENT_RETENTION_KEYS), {
  $id: 'AgentRetentionPut', additionalProperties: false,
  description: 'Overrides of the organization\'s policy for this agent: a key given wins (null keeps everything), a key absent inherits',
});
export type AgentRetentionPut = Static<typeof AgentRetentionPutSchema>;

export const AgentRetentionSchema = Type.Object({
  overrides: Type.Record(Type.String(), Nullable(Type.Integer()), { description: 'The keys this agent overrides' }),
  effective: Type.Object(Object.fromEntries(AGENT_RETENTION_KEYS.map((k) => [k, Nullable(Type.Integer())])), {
    additionalProperties: false, description: 'What applies to the agent: its overrides, else the organization\'s policy',
  }),
}, { $id: 'AgentRetention', additionalProperties: false });

/** What redaction can find. `national_id` uses the validators of `national_id_countries`; `pattern` the free-form `patterns`. */
export const REDACTION_KINDS = ['email', 'phone', 'card', 'iban', 'national_id', 'pattern'] as const;
export type RedactionKind = (typeof REDACTION_KINDS)[number];
/** Where an agent's redaction applies. Logs are always redacted (e-mail, phone, card, IBAN), whatever is set here. */
export const REDACTION_TARGETS = ['transcript', 'llm', 'webhooks', 'reports'] as const;
export type RedactionTarget = (typeof REDACTION_TARGETS)[number];

export const RedactionSettingsSchema = Type.Object({
  kinds: Type.Array(StringEnum(REDACTION_KINDS), { uniqueItems: true, maxItems: REDACTION_KINDS.length, description: 'What to hide' }),
  targets: Type.Array(StringEnum(REDACTION_TARGETS), {
    uniqueItems: true, maxItems: REDACTION_TARGETS.length,
    description: 'Where: `transcript` (stored messages), `llm` (text sent to the model provider), `webhooks` (event payloads), `reports` (report figures and files). Logs are always redacted.',
  }),
  national_id_countries: Type.Array(Type.String({ pattern: '^[A-Z]{2}$' }), { uniqueItems: true, maxItems: 50, description: 'ISO 3166-1 alpha-2 countries whose national ids `national_id` finds (e.g. US: SSN, GB: NINO, FR: NIR)' }),
  patterns: Type.Array(Type.Object({
    name: Type.String({ pattern: '^[a-z][a-z0-9_]{0,39}$', description: 'Shown as `[name]` in place of a match' }),
    pattern: Type.String({ minLength: 1, maxLength: 500, description: 'A regular expression (JavaScript syntax, case-insensitive)' }),
  }, { additionalProperties: false }), { maxItems: 20, description: 'Free-form patterns (`pattern` kind)' }),
}, { $id: 'RedactionSettings', additionalProperties: false, description: 'What an agent\'s redaction hides, and where' });
export type RedactionSettings = Static<typeof RedactionSettingsSchema>;

/** A retention run's summary: rows deleted per step. */
export const RetentionRunSchema = Type.Object({
  workflow_id: Type.String(),
}, { $id: 'RetentionRun', additionalProperties: false });

// ----- A person's data -----

export const CONSENT_KINDS = ['recording', 'marketing'] as const;

export const ConsentCreateSchema = Type.Object({
  kind: StringEnum(CONSENT_KINDS, { description: '`recording` (calls) or `marketing` (campaigns)' }),
  granted: Type.Boolean({ description: 'true: given; false: refused or withdrawn' }),
  source: Type.String({ minLength: 1, maxLength: 200, description: 'Where it was given: a form, a call, an import...' }),
}, { $id: 'ConsentCreate', additionalProperties: false });
export type ConsentCreate = Static<typeof ConsentCreateSchema>;

export const ConsentSchema = Type.Object({
  id: Uuid, contact_id: Uuid, kind: StringEnum(CONSENT_KINDS), granted: Type.Boolean(), source: Type.String(), recorded_at: Timestamp,
}, { $id: 'Consent', additionalProperties: false });
export type Consent = Static<typeof ConsentSchema>;

export const ConsentListSchema = Type.Object({
  data: Type.Array(ConsentSchema),
  current: Type.Object({ recording: Nullable(Type.Boolean()), marketing: Nullable(Type.Boolean()) }, {
    additionalProperties: false, description: 'The latest record of each kind (null: none recorded)',
  }),
}, { $id: 'ConsentList', additionalProperties: false });

export const ContactExportSchema = Type.Object({
  contact: Type.Unknown({ description: 'The contact as GET /contacts/:id returns it' }),
  exported_at: Timestamp,
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'Per place the service keeps data of the person: conversations (with messages, captured data, annotations, tool calls), recordings, data_table_rows, consents, campaign_calls, mail_spool (spooled .eml files naming them)' }),
}, { $id: 'ContactExport', additionalProperties: false, description: 'Everything the service keeps tied to a contact' });

export const ContactErasureSchema = Type.Object({
  contact_id: Uuid,
  erased_at: Timestamp,
  deleted: Type.Record(Type.String(), Type.Integer(), { description: 'Rows deleted or scrubbed per place' }),
  histories_workflow_id: Nullable(Type.String({ description: 'The workflow deleting the Temporal histories of the erased conversations' })),
  remains: Type.Array(Type.String(), { description: 'What is kept on purpose, and why' }),
}, { $id: 'ContactErasure', additionalProperties: false });
export type ContactErasure = Static<typeof ContactErasureSchema>;
