import type VoiceResponse from 'twilio/lib/twiml/VoiceResponse.js';
import type { Accent, EnergyLevel, Formality, Pace } from '../schemas/voice-profiles.ts';

/**
 * Which carrier voice says a call, and how (issue 43, "The voice profile acts"): the conversation's language and the
 * profile's accent pick a Twilio `<Say>` voice (Amazon Polly, Google where Polly has none) and its locale; pace,
 * energy and formality give the SSML `<prosody>` around every line. Pure.
 */

type Say = VoiceResponse.SayAttributes;
export type VoiceName = NonNullable<Say['voice']>;
export type Locale = NonNullable<Say['language']>;
type GatherLocale = NonNullable<VoiceResponse.GatherAttributes['language']>;
type LangLocale = NonNullable<VoiceResponse.SsmlLangAttributes['xml:lang']>;

/** The agent's base voice as an American English Polly voice (each base voice its own). */
const EN_US: Record<string, VoiceName> = {
  alloy: 'Polly.Joanna-Neural', ash: 'Polly.Matthew-Neural', ballad: 'Polly.Brian-Neural', coral: 'Polly.Salli-Neural',
  echo: 'Polly.Joey-Neural', fable: 'Polly.Amy-Neural', nova: 'Polly.Kendra-Neural', onyx: 'Polly.Justin-Neural',
  sage: 'Polly.Ruth-Neural', shimmer: 'Polly.Kimberly-Neural', verse: 'Polly.Stephen-Neural',
};
/** Base voices that sound male: elsewhere than en-US they take the locale's male voice, when it has one. */
const MALE = new Set(['ash', 'ballad', 'echo', 'onyx', 'verse']);

/**
 * The carrier's voices per locale (a female one, and a male one where the carrier has it): Polly neural voices first,
 * Polly standard or Google voices where Polly has no neural one. `listen` is the speech recognition locale when it
 * is spelled otherwise.
 */
export const CARRIER_VOICES: Partial<Record<Locale, { female: VoiceName; male?: VoiceName; listen?: GatherLocale }>> = {
  'en-US': { female: 'Polly.Joanna-Neural', male: 'Polly.Matthew-Neural' },
  'en-GB': { female: 'Polly.Amy-Neural', male: 'Polly.Brian-Neural' },
  'en-AU': { female: 'Polly.Olivia-Neural', male: 'Polly.Russell' },
  'en-IN': { female: 'Polly.Kajal-Neural', male: 'Google.en-IN-Neural2-B' },
  'en-IE': { female: 'Polly.Niamh-Neural' },
  'en-NZ': { female: 'Polly.Aria-Neural' },
  'en-ZA': { female: 'Polly.Ayanda-Neural' },
  'fr-FR': { female: 'Polly.Lea-Neural', male: 'Polly.Remi-Neural' },
  'fr-CA': { female: 'Polly.Gabrielle-Neural', male: 'Polly.Liam-Neural' },
  'de-DE': { female: 'Polly.Vicki-Neural', male: 'Polly.Daniel-Neural' },
  'de-AT': { female: 'Polly.Hannah-Neural' },
  'es-ES': { female: 'Polly.Lucia-Neural', male: 'Polly.Sergio-Neural' },
  'es-MX': { female: 'Polly.Mia-Neural', male: 'Polly.Andres-Neural' },
  'es-US': { female: 'Polly.Lupe-Neural', male: 'Polly.Pedro-Neural' },
  'it-IT': { female: 'Polly.Bianca-Neural', male: 'Polly.Adriano-Neural' },
  'pt-BR': { female: 'Polly.Camila-Neural', male: 'Polly.Thiago-Neural' },
  'pt-PT': { female: 'Polly.Ines-Neural', male: 'Polly.Cristiano' },
  'nl-NL': { female: 'Polly.Laura-Neural', male: 'Polly.Ruben' },
  'nl-BE': { female: 'Polly.Lisa-Neural' },
  'da-DK': { female: 'Polly.Sofie-Neural', male: 'Polly.Mads' },
  'sv-SE': { female: 'Polly.Elin-Neural' },
  'nb-NO': { female: 'Polly.Ida-Neural' },
  'fi-FI': { female: 'Polly.Suvi-Neural' },
  'pl-PL': { female: 'Polly.Ola-Neural', male: 'Polly.Jacek' },
  'tr-TR': { female: 'Polly.Burcu-Neural' },
  'ru-RU': { female: 'Polly.Tatyana', male: 'Polly.Maxim' },
  'is-IS': { female: 'Polly.Dora', male: 'Polly.Karl' },
  'ro-RO': { female: 'Polly.Carmen' },
  'cy-GB': { female: 'Polly.Gwyneth' },
  'ca-ES': { female: 'Polly.Arlet-Neural' },
  'ar-AE': { female: 'Polly.Hala-Neural', male: 'Polly.Zayd-Neural' },
  'hi-IN': { female: 'Polly.Kajal-Neural' },
  'ja-JP': { female: 'Polly.Kazuha-Neural', male: 'Polly.Takumi-Neural' },
  'ko-KR': { female: 'Polly.Seoyeon-Neural' },
  'cmn-CN': { female: 'Polly.Zhiyu-Neural', listen: 'cmn-Hans-CN' },
  'yue-HK': { female: 'Polly.Hiujin-Neural', listen: 'yue-Hant-HK' },
  'cs-CZ': { female: 'Google.cs-CZ-Wavenet-A' },
  'el-GR': { female: 'Google.el-GR-Wavenet-A' },
  'he-IL': { female: 'Google.he-IL-Wavenet-A' },
  'hu-HU': { female: 'Google.hu-HU-Wavenet-A' },
  'id-ID': { female: 'Google.id-ID-Wavenet-A' },
  'uk-UA': { female: 'Google.uk-UA-Wavenet-A' },
  'vi-VN': { female: 'Google.vi-VN-Neural2-A' },
  'th-TH': { female: 'Google.th-TH-Neural2-C' },
};

/** The locale a language is spoken in when nothing says which region. */
const DEFAULT_LOCALE: Record<string, Locale> = {
  en: 'en-US', fr: 'fr-FR', de: 'de-DE', es: 'es-ES', it: 'it-IT', pt: 'pt-BR', nl: 'nl-NL', da: 'da-DK', sv: 'sv-SE', nb: 'nb-NO',
  no: 'nb-NO', fi: 'fi-FI', pl: 'pl-PL', tr: 'tr-TR', ru: 'ru-RU', is: 'is-IS', ro: 'ro-RO', cy: 'cy-GB', ca: 'ca-ES', ar: 'ar-AE',
  hi: 'hi-IN', ja: 'ja-JP', ko: 'ko-KR', zh: 'cmn-CN', cmn: 'cmn-CN', yue: 'yue-HK', cs: 'cs-CZ', el: 'el-GR', he: 'he-IL',
  hu: 'hu-HU', id: 'id-ID', uk: 'uk-UA', vi: 'vi-VN', th: 'th-TH',
};

/** An accent that is a region of the conversation's language: English by region, French of Canada, Spanish of the Americas. */
const REGIONAL_ACCENTS: Record<string, Partial<Record<Accent, Locale>>> = {
  en: {
    american: 'en-US', canadian: 'en-US', british: 'en-GB', scottish: 'en-GB', australian: 'en-AU', new_zealand: 'en-NZ',
    irish: 'en-IE', indian: 'en-IN', south_african: 'en-ZA',
  },
  fr: { canadian: 'fr-CA', french: 'fr-FR' },
  es: { american: 'es-US', spanish: 'es-ES' },
  pt: { brazilian: 'pt-BR' },
  de: { german: 'de-DE' },
  it: { italian: 'it-IT' },
};

/** An accent of another language: that language's voice says the conversation's words (SSML `<lang>`). */
const FOREIGN_ACCENTS: Partial<Record<Accent, Locale>> = {
  french: 'fr-FR', german: 'de-DE', spanish: 'es-ES', italian: 'it-IT', brazilian: 'pt-BR',
};

/** Locales Polly reads inside `<lang xml:lang>`. */
const LANG_LOCALES = new Set<string>([
  'en-US', 'en-GB', 'en-AU', 'en-IN', 'en-NZ', 'en-ZA', 'fr-FR', 'fr-CA', 'de-DE', 'de-AT', 'es-ES', 'es-MX', 'es-US', 'it-IT',
  'pt-BR', 'pt-PT', 'nl-NL', 'da-DK', 'sv-SE', 'nb-NO', 'fi-FI', 'pl-PL', 'tr-TR', 'ru-RU', 'ja-JP', 'ko-KR', 'cmn-CN',
] satisfies LangLocale[]);

/** How a call sounds: the `<Say>` voice and its locale, the `<Gather>` locale, and the locale of the words when the voice's differs. */
export interface CarrierVoice {
  voice: VoiceName;
  language: Locale;
  listen: GatherLocale;
  /** Set when the voice speaks another locale than its own (an accent of another language): the `<lang xml:lang>` of every line. */
  speaks?: LangLocale;
}

export interface VoiceChoice {
  baseVoice: string | null;
  /** The conversation's language (`en`, `pt`, ...). */
  language: string | null;
  /** The agent's `default_language` (`pt-BR`): its region, when it is the conversation's language. */
  agentLanguage?: string | null;
  accent?: Accent | null;
}

const canonical = (tag: string): string => {
  const [lang, region] = tag.trim().split(/[-_]/);
  return region ? `${lang!.toLowerCase()}-${region.toUpperCase()}` : lang!.toLowerCase();
};

/** The locale the conversation is spoken in, or null when the carrier has no voice for its language. */
function spokenLocale(choice: VoiceChoice): Locale | null {
  const primary = canonical(choice.language ?? 'en').split('-')[0]!;
  const agentTag = choice.agentLanguage ? canonical(choice.agentLanguage) : null;
  if (agentTag && agentTag.startsWith(`${primary}-`) && agentTag in CARRIER_VOICES) return agentTag as Locale;
  const regional = choice.accent ? REGIONAL_ACCENTS[primary]?.[choice.accent] : undefined;
  return regional ?? DEFAULT_LOCALE[primary] ?? null;
}

function voiceOf(locale: Locale, baseVoice: string | null): VoiceName {
  if (locale === 'en-US' && baseVoice && EN_US[baseVoice]) return EN_US[baseVoice];
  const voices = CARRIER_VOICES[locale]!;
  return (baseVoice && MALE.has(baseVoice) ? voices.male : undefined) ?? voices.female;
}

/**
 * The carrier voice for a conversation. The locale: the agent's `default_language` when it names a region of the
 * conversation's language (`pt-BR`), else the accent's region (`british` English is en-GB), else the language's usual
 * one (`de` is de-DE). A language the carrier has no voice for is spoken by the American English voice. An accent of
 * another language (`french` on an English call) has that language's voice say the words inside `<lang>`. The base
 * voice picks the voice within the locale (male or female where the locale has both).
 * @example carrierVoice({ baseVoice: 'ash', language: 'de' }) // { voice: 'Polly.Daniel-Neural', language: 'de-DE', listen: 'de-DE' }
 */
export function carrierVoice(choice: VoiceChoice): CarrierVoice {
  const locale = spokenLocale(choice) ?? 'en-US';
  const listen = CARRIER_VOICES[locale]?.listen ?? (locale as GatherLocale);
  const foreign = choice.accent ? FOREIGN_ACCENTS[choice.accent] : undefined;
  if (foreign && foreign.split('-')[0] !== locale.split('-')[0] && LANG_LOCALES.has(locale)) {
    return { voice: voiceOf(foreign, choice.baseVoice), language: foreign, listen, speaks: locale as LangLocale };
  }
  return { voice: voiceOf(locale, choice.baseVoice), language: locale, listen };
}

/** SSML `<prosody>` attributes; null when the delivery is the voice's own. */
export interface Prosody { rate?: string; volume?: string; pitch?: string }

const PACE_RATE: Record<Pace, number> = { slow: 85, normal: 100, fast: 115 };
const ENERGY_RATE: Record<EnergyLevel, number> = { low: -5, medium: 0, high: 5 };
const FORMALITY_RATE: Record<Formality, number> = { formal: -5, neutral: 0, casual: 5 };
const ENERGY_VOLUME: Record<EnergyLevel, string | undefined> = { low: 'soft', medium: undefined, high: 'loud' };
const ENERGY_PITCH: Record<EnergyLevel, string | undefined> = { low: '-5%', medium: undefined, high: '+5%' };

/**
 * A profile's delivery as `<prosody>`: the rate from its pace (slow 85%, fast 115%), nudged by energy (low -5, high +5)
 * and formality (formal -5, casual +5); energy also sets the volume (low `soft`, high `loud`) and, on voices that
 * take it, the pitch (low -5%, high +5%). Polly's neural and generative voices refuse `pitch` (InvalidSsml), so it is
 * left out for them. Null when everything is the default.
 */
export function prosodyOf(profile: { pace?: Pace | null; energy?: EnergyLevel | null; formality?: Formality | null } | null, voice: VoiceName): Prosody | null {
  if (!profile) return null;
  const energy = profile.energy ?? 'medium';
  const rate = PACE_RATE[profile.pace ?? 'normal'] + ENERGY_RATE[energy] + FORMALITY_RATE[profile.formality ?? 'neutral'];
  const pitch = /-(Neural|Generative)$/.test(voice) ? undefined : ENERGY_PITCH[energy];
  const prosody: Prosody = {
    ...(rate !== 100 ? { rate: `${rate}%` } : {}),
    ...(ENERGY_VOLUME[energy] ? { volume: ENERGY_VOLUME[energy] } : {}),
    ...(pitch ? { pitch } : {}),
  };
  return Object.keys(prosody).length ? prosody : null;
}
