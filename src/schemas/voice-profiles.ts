import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, Nullable, StringEnum, Timestamp, Uuid } from './common.ts';
import { BaseVoiceSchema } from './voices.ts';

/**
 * Accents a profile can ask for. English ones by region, then English spoken with the accent of
 * another language; `neutral` asks for no particular accent.
 */
export const ACCENTS = [
  'neutral', 'american', 'british', 'australian', 'canadian', 'irish', 'scottish', 'new_zealand', 'indian', 'south_african',
  'french', 'german', 'spanish', 'italian', 'brazilian',
] as const;
export type Accent = (typeof ACCENTS)[number];

export const ENERGY_LEVELS = ['low', 'medium', 'high'] as const;
export type EnergyLevel = (typeof ENERGY_LEVELS)[number];

export const PACES = ['slow', 'normal', 'fast'] as const;
export type Pace = (typeof PACES)[number];

export const FORMALITIES = ['casual', 'neutral', 'formal'] as const;
export type Formality = (typeof FORMALITIES)[number];

/** What a profile created without the optional delivery fields gets. */
export const VOICE_PROFILE_DEFAULTS = {
  accent: 'neutral', energy: 'medium', pace: 'normal', formality: 'neutral', custom_direction: null,
} as const satisfies { accent: Accent; energy: EnergyLevel; pace: Pace; formality: Formality; custom_direction: null };

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Display name, 1 to 200 characters' });
const AccentSchema = StringEnum(ACCENTS, { description: `Accent: ${ACCENTS.join(', ')}` });
const EnergySchema = StringEnum(ENERGY_LEVELS, { description: `Energy of the delivery: ${ENERGY_LEVELS.join(', ')}` });
const PaceSchema = StringEnum(PACES, { description: `Speaking pace: ${PACES.join(', ')}` });
const FormalitySchema = StringEnum(FORMALITIES, { description: `Register of speech: ${FORMALITIES.join(', ')}` });
const CustomDirection = Type.String({ maxLength: 2000, description: 'Free-text direction for the voice, at most 2000 characters' });

/** The create field documents its default; the repository applies it (bodies are validated without defaults). */
const withDefault = <T extends object>(schema: T, value: string): T =>
  ({ ...schema, default: value, description: `${(schema as { description?: string }).description} (default \`${value}\`)` });

/** A voice profile as every endpoint returns it. */
export const VoiceProfileSchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  base_voice: BaseVoiceSchema,
  accent: AccentSchema,
  energy: EnergySchema,
  pace: PaceSchema,
  formality: FormalitySchema,
  custom_direction: Nullable(Type.String({ description: 'Free-text direction for the voice; null when none' })),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'VoiceProfile', additionalProperties: false, description: 'A base voice plus delivery direction (accent, energy, pace, formality)' });
export type VoiceProfile = Static<typeof VoiceProfileSchema>;

export const VoiceProfileCreateSchema = Type.Object({
  name: Name,
  base_voice: BaseVoiceSchema,
  accent: Type.Optional(withDefault(AccentSchema, VOICE_PROFILE_DEFAULTS.accent)),
  energy: Type.Optional(withDefault(EnergySchema, VOICE_PROFILE_DEFAULTS.energy)),
  pace: Type.Optional(withDefault(PaceSchema, VOICE_PROFILE_DEFAULTS.pace)),
  formality: Type.Optional(withDefault(FormalitySchema, VOICE_PROFILE_DEFAULTS.formality)),
  custom_direction: Type.Optional(Nullable(CustomDirection)),
}, { $id: 'VoiceProfileCreate', additionalProperties: false });
export type VoiceProfileCreate = Static<typeof VoiceProfileCreateSchema>;

/** Any subset of the create fields; null clears `custom_direction`. */
export const VoiceProfilePatchSchema = Type.Object({
  name: Type.Optional(Name),
  base_voice: Type.Optional(BaseVoiceSchema),
  accent: Type.Optional(AccentSchema),
  energy: Type.Optional(EnergySchema),
  pace: Type.Optional(PaceSchema),
  formality: Type.Optional(FormalitySchema),
  custom_direction: Type.Optional(Nullable(CustomDirection)),
}, { $id: 'VoiceProfilePatch', additionalProperties: false });
export type VoiceProfilePatch = Static<typeof VoiceProfilePatchSchema>;

export const VoiceProfileListSchema = ListEnvelope(VoiceProfileSchema, 'VoiceProfileList');
