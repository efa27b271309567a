import { notFound } from '../../src/errors.ts';
import { findCampaign, listCalls, listCampaigns, toCampaign } from '../../src/db/campaigns.ts';
import {
  cancelCampaign, createCampaign, getCall, hangupCall, patchCampaign, pauseCampaign, removeCampaign, startCampaign,
} from '../../src/campaigns/index.ts';
import { IdParams } from '../../src/schemas/common.ts';
import {
  CampaignCallListQuery, CampaignCallListSchema, CampaignCallParams, CampaignCallSchema, CampaignCreateSchema, CampaignListQuery,
  CampaignListSchema, CampaignPatchSchema, CampaignSchema, HangupResultSchema,
} from '../../src/schemas/campaigns.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';
const location = (id: string) => `${BASE}/campaigns/${id}`;

const one = { 200: { description: 'The campaign', schema: CampaignSchema } } as const;

export const campaignsFamily: RouteFamily = {
  base: BASE,
  tag: 'Campaigns',
  order: 200,
  description: 'Outbound calling: an agent calls a list of numbers or contacts from its active number. Each campaign runs as the Temporal workflow '
    + '`campaign:<id>` (queue, concurrency, calling windows, pause), each call attempt as its child `campaign-call:<call id>` '
    + '(search attributes OrganizationId, AgentId, CampaignId). Calls are read from the database, written by those workflows\' activities.',
  routes: [
    route({
      method: 'POST', path: '/campaigns', operationId: 'create_campaign', summary: 'Create a campaign in draft',
      description: 'Exactly one of `to_numbers` (E.164, duplicates dropped) and `contact_ids` (contacts of this organization with a phone number). '
        + '`max_duration_seconds` 1 to 14,400; `concurrency` 1 to 50 (default 5); optional `calling_window` (`HH:MM` start and end in each callee\'s '
        + 'timezone, from the number\'s country and region, else `timezone`), `retry` `{max_attempts, backoff_seconds, on}`.',
      permissions: ['campaigns.write'], body: CampaignCreateSchema,
      responses: { 201: { description: 'The campaign, in `draft`', schema: CampaignSchema } },
      async handler({ body, principal, deps }) {
        const campaign = await createCampaign(deps, principal.orgId, body);
        return { status: 201, body: campaign, headers: { Location: location(campaign.id) } };
      },
    }),
    route({
      method: 'GET', path: '/campaigns', operationId: 'list_campaigns', summary: 'List campaigns, newest first',
      permissions: ['campaigns.read'], query: CampaignListQuery,
      responses: { 200: { description: 'A page of campaigns', schema: CampaignListSchema } },
      async handler({ query, principal, deps }) {
        return pageReply(await listCampaigns(deps.sql, principal.orgId, query), query);
      },
    }),
    route({
      method: 'GET', path: '/campaigns/:id', operationId: 'get_campaign', summary: 'Get a campaign',
      permissions: ['campaigns.read'], params: IdParams, responses: one,
      async handler({ params, principal, deps }) {
        const campaign = await findCampaign(deps.sql, principal.orgId, params.id);
        if (!campaign) throw notFound('campaign');
        return { status: 200, body: toCampaign(campaign) };
      },
    }),
    route({
      method: 'PATCH', path: '/campaigns/:id', operationId: 'update_campaign', summary: 'Change a draft campaign',
      description: 'Any subset of the create fields; 409 `invalid_state` once the campaign has started.',
      permissions: ['campaigns.write'], params: IdParams, body: CampaignPatchSchema, responses: one,
      async handler({ params, body, principal, deps }) {
        return { status: 200, body: await patchCampaign(deps, principal.orgId, params.id, body) };
      },
    }),
    route({
      method: 'DELETE', path: '/campaigns/:id', operationId: 'delete_campaign', summary: 'Delete a campaign that is not active',
      description: 'Its calls go with it (their conversations stay). 409 `invalid_state` while `running` or `paused`: cancel it first.',
      permissions: ['campaigns.write'], params: IdParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        await removeCampaign(deps, principal.orgId, params.id);
        return { status: 204 };
      },
    }),
    route({
      method: 'POST', path: '/campaigns/:id/start', operationId: 'start_campaign', summary: 'Start a draft campaign, or resume a paused one',
      description: 'Queues one call per number (do-not-call numbers end `canceled`/`blocked` at once), emits `campaign.started` and starts '
        + '`campaign:<id>`. 409 `no_active_number` when the agent has no active number; 409 `invalid_state` when completed or canceled.',
      permissions: ['campaigns.write'], params: IdParams, responses: one,
      async handler({ params, principal, deps }) {
        return { status: 200, body: await startCampaign(deps, principal.orgId, params.id) };
      },
    }),
    route({
      method: 'POST', path: '/campaigns/:id/pause', operationId: 'pause_campaign', summary: 'Pause a running campaign',
      description: 'No new call starts; calls in flight go on. Resume with POST /campaigns/:id/start.',
      permissions: ['campaigns.write'], params: IdParams, responses: one,
      async handler({ params, principal, deps }) {
        return { status: 200, body: await pauseCampaign(deps, principal.orgId, params.id) };
      },
    }),
    route({
      method: 'POST', path: '/campaigns/:id/cancel', operationId: 'cancel_campaign', summary: 'Cancel a campaign',
      description: 'Queued calls end `canceled`/`canceled`; calls in flight are hung up (`completed`/`hangup`). 409 `invalid_state` when completed.',
      permissions: ['campaigns.write'], params: IdParams, responses: one,
      async handler({ params, principal, deps }) {
        return { status: 200, body: await cancelCampaign(deps, principal.orgId, params.id) };
      },
    }),
    route({
      method: 'GET', path: '/campaigns/:id/calls', operationId: 'list_campaign_calls', summary: 'List a campaign\'s calls, in queue order',
      description: '`active=1` returns only calls in flight (`dialing`, `initiated`, `ringing`, `in_progress`); `status` keeps one status. '
        + 'Each retry is its own call, linked by `previous_call_id`.',
      permissions: ['campaigns.read'], params: IdParams, query: CampaignCallListQuery,
      responses: { 200: { description: 'A page of calls', schema: CampaignCallListSchema } },
      async handler({ params, query, principal, deps }) {
        if (!(await findCampaign(deps.sql, principal.orgId, params.id))) throw notFound('campaign');
        const active = query.active === '1' || query.active === 'true';
        return pageReply(await listCalls(deps.sql, params.id, { ...query, active }), query);
      },
    }),
    route({
      method: 'GET', path: '/campaigns/:id/calls/:callId', operationId: 'get_campaign_call', summary: 'Get a campaign call',
      permissions: ['campaigns.read'], params: CampaignCallParams,
      responses: { 200: { description: 'The call', schema: CampaignCallSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await getCall(deps, principal.orgId, params.id, params.callId) };
      },
    }),
    route({
      method: 'POST', path: '/campaigns/:id/calls/:callId/hangup', operationId: 'hangup_campaign_call', summary: 'Stop a campaign call',
      description: 'Answers once the call has stopped: `action` `canceled` before dialing (the call ends `canceled`/`canceled`), `hung_up` in flight '
        + '(`completed`/`hangup`). 409 `invalid_state` on an ended call.',
      permissions: ['campaigns.write'], params: CampaignCallParams,
      responses: { 200: { description: 'The call and what was done', schema: HangupResultSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await hangupCall(deps, principal.orgId, params.id, params.callId) };
      },
    }),
  ],
};
