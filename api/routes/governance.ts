import { IdParams } from '../../src/schemas/common.ts';
import {
  AgentRetentionPutSchema, AgentRetentionSchema, ConsentCreateSchema, ConsentListSchema, ConsentSchema, ContactErasureSchema,
  ContactExportSchema, RedactionSettingsSchema, RetentionPolicyPutSchema, RetentionPolicySchema, RetentionRunSchema,
} from '../../src/schemas/governance.ts';
import { contactConsents, eraseContact, exportContactData, recordConsent } from '../../src/governance/contacts.ts';
import { getAgentRedaction, putAgentRedaction } from '../../src/governance/redaction.ts';
import {
  getAgentRetention, getRetentionPolicy, putAgentRetention, putRetentionPolicy, runRetentionNow,
} from '../../src/governance/retention-policy.ts';
import { route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

export const governanceFamily: RouteFamily = {
  base: BASE,
  order: 215,
  tag: 'Data governance',
  description: 'Retention (how long each kind of data is kept, per organization and agent, enforced by the `retention:<org id>` Temporal Schedule), '
    + 'redaction (what an agent hides and where; logs always), a person\'s data on request (export, erase) and consent.',
  routes: [
    route({
      method: 'GET', path: '/governance/retention', operationId: 'get_retention_policy', summary: 'The organization\'s retention policy',
      permissions: ['org.read'],
      responses: { 200: { description: 'Days per kind of data (null keeps everything) and the Schedule enforcing them', schema: RetentionPolicySchema } },
      async handler({ principal, deps }) {
        return { status: 200, body: await getRetentionPolicy(deps, principal.orgId) };
      },
    }),
    route({
      method: 'PUT', path: '/governance/retention', operationId: 'put_retention_policy', summary: 'Set the organization\'s retention policy',
      description: 'Replaces the policy: each key is days to keep (1 to 36,500), null or absent keeps everything (the default). While any key of the '
        + 'organization or of an agent\'s overrides has days, the Temporal Schedule `retention:<org id>` runs every `RETENTION_INTERVAL_HOURS` '
        + '(default 24) and deletes, in batches, what is older; once everything is kept again the Schedule is removed. Deleting a conversation this way emits '
        + '`conversation.deleted`; reports\' daily rollups keep their counts.',
      permissions: ['org.write'], body: RetentionPolicyPutSchema,
      responses: { 200: { description: 'The policy', schema: RetentionPolicySchema } },
      async handler({ body, principal, deps }) {
        return { status: 200, body: await putRetentionPolicy(deps, principal.orgId, body) };
      },
    }),
    route({
      method: 'POST', path: '/governance/retention/run', operationId: 'run_retention', summary: 'Run retention now',
      description: 'Starts a retention run at once, besides the Schedule\'s; answers its Temporal workflow id. Its result lists the rows deleted per step.',
      permissions: ['org.write'],
      responses: { 202: { description: 'The run started', schema: RetentionRunSchema } },
      async handler({ principal, deps }) {
        return { status: 202, body: { workflow_id: await runRetentionNow(deps, principal.orgId) } };
      },
    }),
    route({
      method: 'GET', path: '/agents/:id/retention', operationId: 'get_agent_retention', summary: 'An agent\'s retention overrides',
      permissions: ['agents.read'], params: IdParams,
      responses: { 200: { description: 'Its overrides, and what applies to it', schema: AgentRetentionSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await getAgentRetention(deps, principal.orgId, params.id) };
      },
    }),
    route({
      method: 'PUT', path: '/agents/:id/retention', operationId: 'put_agent_retention', summary: 'Set an agent\'s retention overrides',
      description: 'Replaces the overrides: a key given wins over the organization\'s (null keeps everything for this agent), a key absent inherits. '
        + 'Report runs, webhook deliveries and the audit log belong to the organization and cannot be overridden.',
      permissions: ['agents.write'], params: IdParams, body: AgentRetentionPutSchema,
      responses: { 200: { description: 'Its overrides, and what applies to it', schema: AgentRetentionSchema } },
      async handler({ params, body, principal, deps }) {
        return { status: 200, body: await putAgentRetention(deps, principal.orgId, params.id, body) };
      },
    }),
    route({
      method: 'GET', path: '/agents/:id/redaction', operationId: 'get_agent_redaction', summary: 'An agent\'s redaction settings',
      permissions: ['agents.read'], params: IdParams,
      responses: { 200: { description: 'What it hides, and where (nothing by default)', schema: RedactionSettingsSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await getAgentRedaction(deps, principal.orgId, params.id) };
      },
    }),
    route({
      method: 'PUT', path: '/agents/:id/redaction', operationId: 'put_agent_redaction', summary: 'Set an agent\'s redaction',
      description: 'Which kinds of personal data to hide (`email`, `phone`, `card` with a Luhn check, `iban`, `national_id` for `national_id_countries`, '
        + '`pattern` for `patterns`) and where (`transcript`, `llm`, `webhooks`, `reports`). Logs are always redacted (a line naming the agent with its kinds too). A value captured into '
        + '`data_schema` stays in the captured data, sealed at rest with the secrets key (masked in webhooks and reports when they are targets), while the transcript shows it masked, '
        + 'e.g. `+1 ••• ••• 0142`. A pattern that is not a valid regular expression is 400.',
      permissions: ['agents.write'], params: IdParams, body: RedactionSettingsSchema,
      responses: { 200: { description: 'The settings', schema: RedactionSettingsSchema } },
      async handler({ params, body, principal, deps }) {
        return { status: 200, body: await putAgentRedaction(deps, principal.orgId, params.id, body) };
      },
    }),
    route({
      method: 'GET', path: '/contacts/:id/export', operationId: 'export_contact', summary: 'Everything kept about a contact',
      description: 'One JSON document: the contact, its conversations (messages, captured data, tool calls, annotations), campaign calls, '
        + 'data-table rows naming it, webhook events naming it, consent records, and what each other family declares (recordings).',
      permissions: ['contacts.export'], params: IdParams,
      responses: { 200: { description: 'The export', schema: ContactExportSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await exportContactData(deps, principal.orgId, params.id) };
      },
    }),
    route({
      method: 'POST', path: '/contacts/:id/erase', operationId: 'erase_contact', summary: 'Erase a contact and all data tied to it',
      description: 'Deletes, in one transaction, the contact and everything its export shows, plus stored replays and report runs naming it; '
        + 'emits `contact.erased` (its id only); then a workflow deletes the Temporal histories of its conversations. `remains` says what stays, and why.',
      permissions: ['contacts.erase'], params: IdParams,
      responses: { 200: { description: 'What was erased', schema: ContactErasureSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await eraseContact(deps, principal.orgId, params.id) };
      },
    }),
    route({
      method: 'GET', path: '/contacts/:id/consents', operationId: 'list_contact_consents', summary: 'A contact\'s consent records',
      permissions: ['campaigns.read'], params: IdParams,
      responses: { 200: { description: 'Newest first, and the current state of each kind', schema: ConsentListSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await contactConsents(deps, principal.orgId, params.id) };
      },
    }),
    route({
      method: 'POST', path: '/contacts/:id/consents', operationId: 'record_contact_consent', summary: 'Record a consent given or withdrawn',
      description: '`recording` (calls) or `marketing` (campaigns), with its `source`; the time is now. A campaign with `requires_consent` skips '
        + 'contacts and numbers whose latest marketing record is not a grant.',
      permissions: ['campaigns.write'], params: IdParams, body: ConsentCreateSchema,
      responses: { 201: { description: 'The record', schema: ConsentSchema } },
      async handler({ params, body, principal, deps }) {
        const consent = await recordConsent(deps, principal.orgId, params.id, body);
        return { status: 201, body: consent, headers: { Location: `${BASE}/contacts/${params.id}/consents` } };
      },
    }),
  ],
};
