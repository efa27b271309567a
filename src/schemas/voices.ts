import { StringEnum } from './common.ts';

/**
 * The base voices an agent or a voice profile can speak with. The names are those of the
 * OpenAI-compatible speech voices, so an agent configured here runs unchanged on such a provider.
 */
export const BASE_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer', 'verse'] as const;
export type BaseVoice = (typeof BASE_VOICES)[number];

export const BaseVoiceSchema = StringEnum(BASE_VOICES, { description: `Base voice: ${BASE_VOICES.join(', ')}` });
