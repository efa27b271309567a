import { Type, type Static } from '@sinclair/typebox';
import { E164, ListEnvelope, Nullable, PageQueryProps, StringEnum, Timestamp, Uuid } from './common.ts';
import { VOICE_MODES } from './agents.ts';

export const NUMBER_TYPES = ['local', 'mobile', 'toll_free'] as const;
export const NUMBER_STATUSES = ['active', 'released'] as const;
export const NUMBER_SOURCES = ['purchased', 'imported'] as const;
export const NUMBER_COUNTRIES = ['US', 'CA', 'GB', 'FR', 'DE', 'AU'] as const;

const NumberTypeSchema = StringEnum(NUMBER_TYPES, { description: '`local`, `mobile` or `toll_free`' });
const CountrySchema = StringEnum(NUMBER_COUNTRIES, { description: `ISO 3166 country code: ${NUMBER_COUNTRIES.join(', ')}` });
const AreaCode = Type.String({ pattern: '^[0-9]{1,5}$', 'x-code': 'invalid_area_code', description: 'Area code digits, e.g. `415`' });
const VoiceMode = StringEnum(VOICE_MODES, {
  description: 'How this number\'s calls are spoken: `turn` (`<Gather>`/`<Say>`) or `stream` (`<Connect><Stream>`, real-time audio). '
    + 'Set, it wins over the agent\'s `phone_settings.voice_mode`; null: the agent\'s choice',
});
const FriendlyName = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Display name, 1 to 200 characters' });

export const PhoneNumberSchema = Type.Object({
  id: Uuid,
  phone_number: E164,
  widget_id: Nullable(Type.String({ ...Uuid, description: 'The assigned agent; null while the number is parked in the pool' })),
  status: StringEnum(NUMBER_STATUSES, { description: '`active`, or `released` (gone back to the carrier; billing stopped)' }),
  source: StringEnum(NUMBER_SOURCES, { description: '`purchased` through the API, or `imported` by an administrator (cannot be released here)' }),
  enabled: Type.Boolean({ description: 'Off: callers and texters get a polite "not in service" answer and nothing starts' }),
  voice_enabled: Type.Boolean(),
  sms_enabled: Type.Boolean(),
  friendly_name: Nullable(Type.String()),
  voice_mode: Nullable(VoiceMode),
  number_type: NumberTypeSchema,
  iso_country: Type.String({ description: 'ISO 3166 country code' }),
  monthly_cost_cents: Type.Integer({ minimum: 0, description: 'Billed monthly in credits (0 for an imported number)' }),
  created_at: Timestamp,
  updated_at: Timestamp,
  released_at: Nullable(Timestamp),
}, { $id: 'PhoneNumber', additionalProperties: false });
export type PhoneNumber = Static<typeof PhoneNumberSchema>;

export const PhoneNumberListSchema = ListEnvelope(PhoneNumberSchema, 'PhoneNumberList');

export const PhoneNumberListQuery = Type.Object({
  ...PageQueryProps,
  widget_id: Type.Optional(Uuid),
  include_released: Type.Optional(Type.Boolean({ description: 'true: released numbers are listed too' })),
}, { additionalProperties: false });

export const NumberCandidateSchema = Type.Object({
  phone_number: E164,
  iso_country: Type.String(),
  number_type: NumberTypeSchema,
  locality: Nullable(Type.String()),
  monthly_cost_cents: Type.Integer({ minimum: 0 }),
  capabilities: Type.Object({ voice: Type.Boolean(), sms: Type.Boolean(), mms: Type.Boolean() }, { additionalProperties: false }),
}, { $id: 'NumberCandidate', additionalProperties: false });

export const NumberSearchQuery = Type.Object({
  country: Type.Optional(CountrySchema),
  type: Type.Optional(NumberTypeSchema),
  area_code: Type.Optional(AreaCode),
  contains: Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$', 'x-code': 'invalid_contains', description: 'Digits the number must contain' })),
  in_postal_code: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9 -]{2,12}$', description: 'Postal code near which the number should be' })),
}, { additionalProperties: false });

export const NumberSearchResultSchema = Type.Object({ data: Type.Array(NumberCandidateSchema) }, { $id: 'NumberSearchResult', additionalProperties: false });

export const PhoneNumberBuySchema = Type.Object({
  widget_id: Type.String({ ...Uuid, description: 'The agent to attach the number to' }),
  phone_number: Type.Optional({ ...E164, description: 'A number from the search; omitted: the first candidate for country, type and area_code' }),
  country: Type.Optional(CountrySchema),
  type: Type.Optional(NumberTypeSchema),
  area_code: Type.Optional(AreaCode),
  force: Type.Optional(Type.Boolean({ description: 'Buy even when the agent already has an active number' })),
}, { $id: 'PhoneNumberBuy', additionalProperties: false });
export type PhoneNumberBuy = Static<typeof PhoneNumberBuySchema>;

export const PhoneNumberPatchSchema = Type.Object({
  voice_enabled: Type.Optional(Type.Boolean()),
  sms_enabled: Type.Optional(Type.Boolean({ description: 'Enabling configures the inbound-SMS webhook with the carrier; a refusal is 502 `carrier_error` and changes nothing' })),
  friendly_name: Type.Optional(Nullable(FriendlyName)),
  voice_mode: Type.Optional(Nullable(VoiceMode)),
  enabled: Type.Optional(Type.Boolean()),
  widget_id: Type.Optional(Type.Unknown({ description: 'Not accepted here: 400 `use_assign_endpoint` (use POST /phone-numbers/:id/assign)' })),
}, { $id: 'PhoneNumberPatch', additionalProperties: false, description: 'Any subset; `{}` changes nothing' });
export type PhoneNumberPatch = Static<typeof PhoneNumberPatchSchema>;

export const PhoneNumberAssignSchema = Type.Object({
  widget_id: Type.String({ ...Uuid, description: 'The agent that takes the number' }),
}, { $id: 'PhoneNumberAssign', additionalProperties: false });

export const PhoneNumberImportSchema = Type.Object({
  phone_number: E164,
  widget_id: Type.Optional(Type.String({ ...Uuid, description: 'The agent to attach it to; omitted: parked in the pool' })),
}, { $id: 'PhoneNumberImport', additionalProperties: false });
