import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp, Uuid } from './common.ts';

export const OrganizationSchema = Type.Object({
  id: Uuid,
  name: Type.String({ description: 'As given to `npm run cli -- org create NAME` (`default` for the bootstrap organization)' }),
  created_at: Timestamp,
  settings: Type.Object({
    rate_limit_per_minute: Type.Integer({ description: 'Requests a minute each key may make (`RATE_LIMIT_PER_MINUTE`); REST and MCP tool calls share it' }),
    public_rate_limit_per_minute: Type.Integer({ description: 'Requests a minute each client address may make to the public widget endpoints (`PUBLIC_RATE_LIMIT_PER_MINUTE`)' }),
    starting_credits_cents: Type.Integer({ description: 'Credits a new organization starts with (`AMS_STARTING_CREDITS`)' }),
    public_base_url: Nullable(Type.String({ description: 'The base of every link the service hands out (`PUBLIC_BASE_URL`), or null when unset' })),
  }, { additionalProperties: false, description: 'The deployment settings that apply to this organization (read-only; set by the operator of the service)' }),
  temporal: Type.Object({
    search_attribute: Type.Literal('OrganizationId'),
    visibility_query: Type.String({ description: 'Paste into the Temporal Web UI\'s search (or `temporal workflow list --query`) to list this organization\'s runs' }),
  }, { additionalProperties: false, description: 'How to find this organization\'s workflows in Temporal' }),
}, { $id: 'Organization', additionalProperties: false });
