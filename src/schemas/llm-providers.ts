import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, Nullable, Timestamp, Uuid } from './common.ts';

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Display name, 1 to 200 characters' });
const BaseUrl = Type.String({
  minLength: 1, maxLength: 2000,
  description: 'Base URL of an OpenAI-compatible API, e.g. `https://api.openai.com/v1` (the service posts to `{base_url}/chat/completions`). '
    + 'https, no user info, never a private address (400 `private_network_target`) unless the deployment allows private targets',
  examples: ['https://api.openai.com/v1'],
});
const ApiKey = Type.String({
  minLength: 1, maxLength: 1000, writeOnly: true,
  description: 'Write-only: sent as `Authorization: Bearer` to the provider; stored encrypted (AES-256-GCM), never returned or logged',
});
const ModelName = Type.String({ minLength: 1, maxLength: 200, pattern: '^\\S+$', description: 'A model name the provider knows, e.g. `gpt-4o-mini`' });

/** A provider as every endpoint answers it: never its key, only whether one is set and its last 4 characters. */
export const LlmProviderSchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  base_url: Type.String(),
  api_key_set: Type.Boolean({ description: 'Whether an API key is stored' }),
  api_key_last4: Nullable(Type.String({ description: 'The last 4 characters of the stored key (null when none is set, or the key is shorter than 12 characters)' })),
  default_model: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'LlmProvider', additionalProperties: false, description: 'An OpenAI-compatible endpoint of the organization that agents\' `model` setting can name; the key is never shown' });
export type LlmProvider = Static<typeof LlmProviderSchema>;

export const LlmProviderCreateSchema = Type.Object({
  name: Name,
  base_url: BaseUrl,
  api_key: Type.Optional(ApiKey),
  default_model: ModelName,
}, { $id: 'LlmProviderCreate', additionalProperties: false });
export type LlmProviderCreate = Static<typeof LlmProviderCreateSchema>;

export const LlmProviderPatchSchema = Type.Object({
  name: Type.Optional(Name),
  base_url: Type.Optional(BaseUrl),
  api_key: Type.Optional(Nullable({ ...ApiKey, description: 'A new key replaces (rotates) the stored one at once; null removes it' })),
  default_model: Type.Optional(ModelName),
}, { $id: 'LlmProviderPatch', additionalProperties: false, description: 'Any subset of the fields; `{}` changes nothing' });
export type LlmProviderPatch = Static<typeof LlmProviderPatchSchema>;

export const LlmProviderListSchema = ListEnvelope(LlmProviderSchema, 'LlmProviderList');

/**
 * An agent's model setting (issue 46, item 3): which provider, model and sampling its turns use, and which language it replies in.
 * Every member is optional on input; the agent shows what was set.
 */
export const AgentModelSchema = Type.Object({
  provider_id: Type.Optional(Nullable({ ...Uuid, description: 'An LLM provider of the organization; null: the deployment\'s default (LLM_BASE_URL, LLM_API_KEY)' })),
  model: Type.Optional(Nullable({ ...ModelName, description: 'Model name; null: the provider\'s `default_model` (LLM_MODEL for the deployment\'s default)' })),
  temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2, description: 'Sampling temperature, 0 to 2; null: the provider\'s default' }))),
  max_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 32000, description: 'At most this many tokens per reply, 1 to 32000; null: the provider\'s default' }))),
  reply_language: Type.Optional(Type.String({
    pattern: '^(auto|agent_default|[a-z]{2,3}(-[A-Za-z0-9]{2,8})*)$', maxLength: 35, 'x-code': 'invalid_reply_language',
    description: '`auto` (default: the visitor\'s or page\'s language), `agent_default` (always the agent\'s `default_language`) or a BCP 47 language tag to always reply in',
  })),
}, { additionalProperties: false, description: 'Which model answers the agent\'s turns. Without a provider and without LLM_BASE_URL the built-in offline runtime answers' });

/** The model setting as the agent shows it: every member present (null when unset; `reply_language` `auto` by default). */
export const AgentModelShownSchema = Type.Object({
  provider_id: Nullable(Uuid),
  model: Nullable(Type.String()),
  temperature: Nullable(Type.Number()),
  max_tokens: Nullable(Type.Integer()),
  reply_language: Type.String(),
}, { additionalProperties: false });
