import { notFound } from '../../src/errors.ts';
import { findPhoneNumber, listPhoneNumbers, toPhoneNumber } from '../../src/db/phone-numbers.ts';
import { IdParams } from '../../src/schemas/common.ts';
import {
  NumberSearchQuery, NumberSearchResultSchema, PhoneNumberAssignSchema, PhoneNumberBuySchema, PhoneNumberImportSchema,
  PhoneNumberListQuery, PhoneNumberListSchema, PhoneNumberPatchSchema, PhoneNumberSchema,
} from '../../src/schemas/phone-numbers.ts';
import {
  assignPhoneNumber, buyPhoneNumber, importPhoneNumber, patchPhoneNumber, refuseWidgetIdPatch, releasePhoneNumber, unassignPhoneNumber,
} from '../../src/telephony/numbers.ts';
import { AppError } from '../../src/errors.ts';
import { CarrierError } from '../../src/telephony/carrier.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';
const location = (id: string) => `${BASE}/phone-numbers/${id}`;

export const phoneNumbersFamily: RouteFamily = {
  base: BASE,
  order: 170,
  tag: 'Phone numbers',
  description: 'Numbers bought from the carrier (the sandbox by default, Twilio with `CARRIER=twilio`) or imported, each answering calls and texts with its agent. '
    + 'Buying charges the first month in credits (402 otherwise); a Temporal Schedule `number-billing:<id>` charges each month after, until release.',
  routes: [
    route({
      method: 'GET', path: '/phone-numbers/search', operationId: 'search_phone_numbers', summary: 'Numbers available to buy',
      description: 'Candidates honouring `country` (default US), `type` (default local), `area_code`, `contains` (digits) and `in_postal_code`.',
      permissions: ['agents.read'], query: NumberSearchQuery,
      responses: { 200: { description: 'Candidate numbers', schema: NumberSearchResultSchema } },
      async handler({ query, deps }) {
        try {
          const data = await deps.carrier.search({ ...query, country: query.country ?? 'US', type: query.type ?? 'local' });
          return { status: 200, body: { data } };
        } catch (err) {
          if (err instanceof CarrierError) throw new AppError(502, 'carrier_error', err.message);
          throw err;
        }
      },
    }),
    route({
      method: 'POST', path: '/phone-numbers', operationId: 'buy_phone_number', summary: 'Buy a number for an agent',
      description: 'Buys `phone_number`, or the first candidate for `country`, `type` and `area_code`; wires its voice and SMS webhooks to the agent (both on). '
        + '409 `agent_has_active_number` unless `force`; 409 `phone_number_exists` when the organization already holds `phone_number`, 409 `phone_number_unavailable` when another one does '
        + '(the sandbox\'s behaviour numbers aside: any organization may hold them); 402 `insufficient_credits` when the balance does not cover the first month; 502 `carrier_error` when the carrier refuses. '
        + 'With an `Idempotency-Key`, a repeated request buys and charges once.',
      permissions: ['phone_numbers.write'], body: PhoneNumberBuySchema,
      responses: { 201: { description: 'The number', schema: PhoneNumberSchema } },
      async handler({ body, principal, deps }) {
        const number = await buyPhoneNumber(deps, principal.orgId, body);
        return { status: 201, body: number, headers: { Location: location(number.id) } };
      },
    }),
    route({
      method: 'POST', path: '/phone-numbers/import', operationId: 'import_phone_number', summary: 'Import a number the organization owns elsewhere',
      description: 'The number becomes admin-imported: it is never billed and cannot be released here. 409 `phone_number_exists` when the organization already holds it, 409 `phone_number_unavailable` when another organization does (but for the sandbox\'s behaviour numbers, which any may hold).',
      permissions: ['org.write'], body: PhoneNumberImportSchema,
      responses: { 201: { description: 'The number', schema: PhoneNumberSchema } },
      async handler({ body, principal, deps }) {
        const number = await importPhoneNumber(deps, principal.orgId, body);
        return { status: 201, body: number, headers: { Location: location(number.id) } };
      },
    }),
    route({
      method: 'GET', path: '/phone-numbers', operationId: 'list_phone_numbers', summary: 'List numbers, newest first',
      description: '`widget_id` keeps one agent\'s numbers; released numbers appear with `include_released=true`.',
      permissions: ['agents.read'], query: PhoneNumberListQuery,
      responses: { 200: { description: 'A page of numbers', schema: PhoneNumberListSchema } },
      async handler({ query, principal, deps }) {
        return pageReply(await listPhoneNumbers(deps.sql, principal.orgId, query), query);
      },
    }),
    route({
      method: 'GET', path: '/phone-numbers/:id', operationId: 'get_phone_number', summary: 'Get a number (released ones too)',
      permissions: ['agents.read'], params: IdParams,
      responses: { 200: { description: 'The number', schema: PhoneNumberSchema } },
      async handler({ params, principal, deps }) {
        const number = await findPhoneNumber(deps.sql, principal.orgId, params.id);
        if (!number) throw notFound('phone number');
        return { status: 200, body: toPhoneNumber(number) };
      },
    }),
    route({
      method: 'PATCH', path: '/phone-numbers/:id', operationId: 'update_phone_number', summary: 'Change voice, SMS, enabled or the name',
      description: 'Enabling SMS configures the inbound-SMS webhook with the carrier: when it refuses, 502 `carrier_error` and nothing changes. '
        + '`widget_id` is 400 `use_assign_endpoint`: use POST /phone-numbers/:id/assign.',
      permissions: ['phone_numbers.write'], params: IdParams, body: PhoneNumberPatchSchema,
      refuseRequest: ({ body }) => refuseWidgetIdPatch(body),
      responses: { 200: { description: 'The number', schema: PhoneNumberSchema } },
      async handler({ params, body, principal, deps }) {
        return { status: 200, body: await patchPhoneNumber(deps, principal.orgId, params.id, body) };
      },
    }),
    route({
      method: 'POST', path: '/phone-numbers/:id/assign', operationId: 'assign_phone_number', summary: 'Assign or reassign a number to an agent',
      description: 'Rewires the carrier webhooks to the agent. 409 `active_campaign` while the current agent has an active campaign.',
      permissions: ['phone_numbers.write'], params: IdParams, body: PhoneNumberAssignSchema,
      responses: { 200: { description: 'The number', schema: PhoneNumberSchema } },
      async handler({ params, body, principal, deps }) {
        return { status: 200, body: await assignPhoneNumber(deps, principal.orgId, params.id, body.widget_id) };
      },
    }),
    route({
      method: 'POST', path: '/phone-numbers/:id/unassign', operationId: 'unassign_phone_number', summary: 'Park a number in the pool',
      permissions: ['phone_numbers.write'], params: IdParams,
      responses: { 200: { description: 'The number, with `widget_id: null`', schema: PhoneNumberSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await unassignPhoneNumber(deps, principal.orgId, params.id) };
      },
    }),
    route({
      method: 'DELETE', path: '/phone-numbers/:id', operationId: 'release_phone_number', summary: 'Release a number to the carrier',
      description: 'Monthly billing stops; the number stays listable with `include_released=true`. 409 `admin_imported_number` for an imported number, '
        + '409 `active_campaign` while its agent has an active campaign.',
      permissions: ['phone_numbers.write'], params: IdParams,
      responses: { 204: { description: 'Released' } },
      async handler({ params, principal, deps }) {
        await releasePhoneNumber(deps, principal.orgId, params.id);
        return { status: 204 };
      },
    }),
  ],
};
