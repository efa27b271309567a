import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { E164, Email, Identifier, Nullable, PageQueryProps, StringEnum, Timestamp, Uuid, ListEnvelope } from './common.ts';
import { AgentModelSchema, AgentModelShownSchema } from './llm-providers.ts';
import { BaseVoiceSchema } from './voices.ts';

export const AGENT_STATUSES = ['draft', 'active', 'paused'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

// Value sets of the writable fields (the contract's where it decides, ours where it is silent).
export const INTERRUPTIONS = ['allow', 'wait'] as const;
export const RESPONSIVENESS = ['patient', 'normal', 'quick'] as const;
export const THEME_MODES = ['light', 'dark', 'auto'] as const;
export const DISPLAY_MODES = ['floating', 'inline', 'fullscreen'] as const;
export const POSITIONS = ['bottom_right', 'bottom_left'] as const;
export const LAUNCHER_ICON_KINDS = ['default', 'logo', 'custom'] as const;
export const VOICEMAIL_BEHAVIORS = ['leave_message', 'hang_up'] as const;
export const LIVE_CHAT_ALERT_SCOPES = ['all', 'unassigned', 'assigned'] as const;
export const DATA_FIELD_TYPES = ['string', 'number', 'boolean', 'email', 'phone', 'date'] as const;

/** Speech models of the carrier's recognizer (Twilio `<Gather speechModel>`). */
/** How an agent's calls are spoken (issue 44): turn by turn (`<Gather>`), or streamed audio both ways. */
export const VOICE_MODES = ['turn', 'stream'] as const;

export const SPEECH_MODELS = ['default', 'phone_call', 'numbers_and_commands', 'experimental_conversations'] as const;

/**
 * What `phone_settings` keys do on the agent's calls (src/telephony/phone-settings.ts). Each is
 * nullable: null removes the key (the object merges per key). Other keys are accepted and kept for
 * the business's own use; the service never reads them.
 */
export const PHONE_SETTING_KEYS = {
  record_calls: Type.Boolean({ description: 'Record each call the agent answers or places, both parties: a turn-by-turn call by the carrier (`<Start><Recording>`, downloaded when its recording-status callback arrives), a streamed call by the service; served at `GET /conversations/:id/recording`' }),
  max_call_minutes: Type.Integer({ minimum: 1, maximum: 240, description: 'Once a call has lasted this long, the agent\'s next turn is a goodbye and the line is hung up' }),
  answer_delay_seconds: Type.Integer({ minimum: 0, maximum: 10, description: 'Silence before the greeting of a call the agent answers (`<Pause>`)' }),
  speech_hints: Type.Array(Type.String({ minLength: 1, maxLength: 100, 'x-code': 'invalid_hint', description: 'A word or phrase, without a comma', pattern: '^[^,]*[^,\\s][^,]*$' }), {
    maxItems: 100, description: 'Words and phrases the carrier\'s speech recognition should expect, such as product names (`<Gather hints>`)',
  }),
  speech_model: StringEnum(SPEECH_MODELS, { description: 'The recognizer\'s model (`<Gather speechModel>`); `default` is the carrier\'s own choice' }),
  profanity_filter: Type.Boolean({ description: 'false: the recognizer writes profanity as said instead of masking it (`<Gather profanityFilter>`; the carrier masks by default)' }),
  voice_mode: StringEnum(VOICE_MODES, {
    description: 'How calls are spoken: `turn` (default), turn by turn through the carrier\'s `<Gather>` and `<Say>`; `stream`, real-time audio over the carrier\'s media stream (`<Connect><Stream>`): our own speech recognition and synthesis, barge-in, per-turn latency timings. A phone number\'s own `voice_mode`, when set, wins for its calls',
  }),
  recording_consent: Type.String({ minLength: 1, maxLength: 500, description: 'With `record_calls`, a line the agent says first on each call, before the greeting (for example that the call is recorded)' }),
};

const setting = <K extends keyof typeof PHONE_SETTING_KEYS>(key: K) => Type.Optional(Nullable(PHONE_SETTING_KEYS[key]));

export const PhoneSettingsSchema = Type.Object({
  record_calls: setting('record_calls'),
  max_call_minutes: setting('max_call_minutes'),
  answer_delay_seconds: setting('answer_delay_seconds'),
  speech_hints: setting('speech_hints'),
  speech_model: setting('speech_model'),
  profanity_filter: setting('profanity_filter'),
  voice_mode: setting('voice_mode'),
  recording_consent: setting('recording_consent'),
}, {
  additionalProperties: Type.Unknown(), maxProperties: 50, propertyNames: { minLength: 1, maxLength: 100 },
  description: 'Call settings: the keys below act on the agent\'s calls; other keys are kept for the business\'s own use and never read. Sent keys are merged into the stored object, a null value removes its key',
});

export const AgentName = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Display name, 1 to 200 characters' });
const Text = (maxLength: number, description: string) => Type.String({ maxLength, description });
const Line = (maxLength: number, description: string) => Type.String({ minLength: 1, maxLength, pattern: '\\S', description });
const List = <T extends TSchema>(item: T, maxItems: number, description: string) => Type.Array(item, { maxItems, description });

export const SiteUrl = Type.String({
  format: 'uri', pattern: '^[hH][tT][tT][pP][sS]?://[^/?#@\\s]+', maxLength: 2048, 'x-code': 'invalid_url',
  description: 'http or https URL of the website the agent learns from',
});
const HttpsUrl = (description: string) => Type.String({
  format: 'uri', pattern: '^[hH][tT][tT][pP][sS]://[^/?#@\\s]+', maxLength: 2048, 'x-code': 'https_required', description,
});
const LanguageTag = Type.String({
  pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$', maxLength: 35, 'x-code': 'invalid_language',
  description: 'BCP 47 language tag, e.g. `en`, `fr`, `pt-BR`',
});
const Color = Type.String({ pattern: '^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$', 'x-code': 'invalid_color', description: 'Hex color, `#RGB` or `#RRGGBB`' });

const SuggestedPrompts = List(Line(200, 'A prompt the visitor can click'), 8, 'Up to 8 suggested prompts, each 1 to 200 characters');
const IntroTitle = Text(120, 'Title of the chat window, up to 120 characters');
const IntroSubtitle = Text(300, 'Subtitle of the chat window, up to 300 characters');

export const ThemeSchema = Type.Object({
  mode: StringEnum(THEME_MODES, { description: 'light, dark or auto (follows the visitor\'s system)' }),
  primary: Color,
  radius: Type.Integer({ minimum: 0, maximum: 32, description: 'Corner radius in pixels, 0 to 32' }),
}, { $id: 'Theme', additionalProperties: false });
export type Theme = Static<typeof ThemeSchema>;
const ThemePatch = Type.Partial(Type.Object(ThemeSchema.properties), {
  additionalProperties: false, description: 'Theme keys to change; unsent keys are kept',
});

export const LocalizedCopySchema = Type.Object({
  intro_title: Type.Optional(Nullable(IntroTitle)),
  intro_subtitle: Type.Optional(Nullable(IntroSubtitle)),
  suggested_prompts: Type.Optional(SuggestedPrompts),
}, { additionalProperties: false, description: 'The intro copy for one page language' });

const PromptModule = Type.Object({
  name: Line(100, 'Module name'),
  content: Text(10_000, 'Instructions appended to the system prompt'),
  enabled: Type.Optional(Type.Boolean({ description: 'Default true' })),
}, { additionalProperties: false });

const DataField = Type.Object({
  name: Identifier,
  type: StringEnum(DATA_FIELD_TYPES, { description: `Value type: ${DATA_FIELD_TYPES.join(', ')}` }),
  description: Type.Optional(Nullable(Text(500, 'What to ask for and how to recognise it'))),
  required: Type.Optional(Type.Boolean({ description: 'Whether the agent must try to capture it (default false)' })),
}, { additionalProperties: false });

/** A data field as the agent shows it (and as the runtime reads it): every key present. */
export const DataFieldSchema = Type.Object({
  name: Type.String(), type: StringEnum(DATA_FIELD_TYPES), description: Nullable(Type.String()), required: Type.Boolean(),
});
export type DataField = Static<typeof DataFieldSchema>;

const TrackingRule = Type.Object({
  name: Line(100, 'Label applied to matching conversations'),
  condition: Line(1000, 'Natural-language condition'),
  enabled: Type.Optional(Type.Boolean({ description: 'Default true' })),
}, { additionalProperties: false });

/** Every writable field of PATCH, by group; the draft, the MCP tool and the widget view share them. */
export const AgentPatchProps = {
  // Basics
  name: Type.Optional(AgentName),
  persona: Type.Optional(Nullable(Text(20_000, 'System prompt, up to 20,000 characters'))),
  voice: Type.Optional(Nullable(BaseVoiceSchema)),
  status: Type.Optional(StringEnum(['paused', 'active'] as const, { description: '`paused` stops new conversations; `active` resumes them' })),
  // Persona and voice
  guardrails: Type.Optional(Nullable(List(Line(1000, 'A rule the agent never breaks'), 50, 'Up to 50 rules'))),
  greeting: Type.Optional(Nullable(Text(2000, 'First message of a conversation'))),
  interruptions: Type.Optional(StringEnum(INTERRUPTIONS, { description: 'Voice: `allow` lets the caller talk over the agent, `wait` does not (default allow)' })),
  responsiveness: Type.Optional(StringEnum(RESPONSIVENESS, { description: 'Voice turn-taking speed: patient, normal (default) or quick' })),
  voice_profile_id: Type.Optional(Nullable({ ...Uuid, description: 'A voice profile of the same organization' })),
  default_language: Type.Optional(Nullable(LanguageTag)),
  additional_languages: Type.Optional(Nullable(Type.Array(LanguageTag, { maxItems: 20, uniqueItems: true, description: 'Up to 20 further languages' }))),
  timezone: Type.Optional(Nullable(Type.String({ maxLength: 64, description: 'IANA time zone, e.g. Europe/Paris' }))),
  prompt_modules: Type.Optional(Nullable(List(PromptModule, 50, 'Up to 50 reusable prompt modules'))),
  // Goals and evaluation
  goals: Type.Optional(Nullable(List(Line(500, 'A goal the conversation should reach'), 50, 'Up to 50 goals; each gets a verdict on evaluation'))),
  data_schema: Type.Optional(Nullable(List(DataField, 50, 'Up to 50 fields to capture, with unique names'))),
  acceptance_criteria: Type.Optional(Nullable(List(Line(500, 'A criterion a good conversation meets'), 50, 'Up to 50 criteria'))),
  tracking_rules: Type.Optional(Nullable(List(TrackingRule, 50, 'Up to 50 tracking rules'))),
  // Appearance and distribution
  theme: Type.Optional(ThemePatch),
  position: Type.Optional(StringEnum(POSITIONS, { description: 'bottom_right (default) or bottom_left' })),
  display_mode: Type.Optional(StringEnum(DISPLAY_MODES, { description: 'floating (default), inline or fullscreen' })),
  intro_title: Type.Optional(Nullable(IntroTitle)),
  intro_subtitle: Type.Optional(Nullable(IntroSubtitle)),
  suggested_prompts: Type.Optional(SuggestedPrompts),
  localized_copy: Type.Optional(Type.Object({
    en: Type.Optional(Nullable(LocalizedCopySchema)),
    fr: Type.Optional(Nullable(LocalizedCopySchema)),
  }, { additionalProperties: false, description: 'Copy per page language (`en`, `fr`): a sent language replaces that language\'s copy, null removes it, unsent languages are kept' })),
  button_label: Type.Optional(Nullable(Text(40, 'Launcher button label, up to 40 characters'))),
  show_label: Type.Optional(Type.Boolean({ description: 'Show button_label beside the launcher (default true)' })),
  logo_url: Type.Optional(Nullable(HttpsUrl('https URL of the logo shown in the chat header; no user info, never a private address (400 private_network_target)'))),
  launcher_icon_url: Type.Optional(Nullable(HttpsUrl('https URL of a custom launcher icon; no user info, never a private address (400 private_network_target)'))),
  launcher_icon_kind: Type.Optional(StringEnum(LAUNCHER_ICON_KINDS, { description: 'default (built-in icon), logo (logo_url) or custom (launcher_icon_url)' })),
  domains: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 260 }), {
    maxItems: 100, description: 'Replace-set of hosts allowed to embed the widget (empty: any). Normalized to lower-case hosts; `*.example.com` covers subdomains',
  })),
  mcp_pill_enabled: Type.Optional(Type.Boolean({ description: 'Show the MCP pill in the widget (default false)' })),
  mcp_ui_cards_enabled: Type.Optional(Type.Boolean({ description: 'Render MCP UI cards in the widget (default false)' })),
  // Channels and phone
  cross_channel_memory: Type.Optional(Type.Boolean({ description: 'Recall a contact\'s facts across channels (default false)' })),
  notification_email: Type.Optional(Nullable(Email)),
  notification_phone: Type.Optional(Nullable(E164)),
  voicemail_behavior: Type.Optional(StringEnum(VOICEMAIL_BEHAVIORS, { description: 'On reaching voicemail: leave_message (default) or hang_up' })),
  phone_settings: Type.Optional(PhoneSettingsSchema),
  // Newer fields
  config_variables: Type.Optional(Nullable(Type.Record(Type.String(), Type.String({ maxLength: 2000 }), {
    maxProperties: 50, propertyNames: { maxLength: 64 }, description: 'Up to 50 variables, name to string value; names are identifiers and `agent_name` is reserved. Replaces the whole set',
  }))),
  live_chat_alerts: Type.Optional(Type.Boolean({
    description: 'An `alert` event on the live inbox stream (and a badge and a sound on /inbox) when a visitor of a web, SMS or e-mail conversation asks for a person, and when they write again while a person is wanted or answering (default false)',
  })),
  live_chat_alert_scope: Type.Optional(StringEnum(LIVE_CHAT_ALERT_SCOPES, {
    description: 'Which conversations alert: all (default); unassigned (no member assigned); assigned (a member is assigned, and only that member\'s stream is alerted)',
  })),  satisfaction_survey: Type.Optional(Type.Boolean({
    description: 'At the end of a web chat the widget asks the visitor for a 1-5 rating and an optional comment (default false); per-reply thumbs are always offered',
  })),  model: Type.Optional(Nullable(AgentModelSchema)),
};

export const AgentPatchSchema = Type.Object(AgentPatchProps, {
  $id: 'AgentPatch', additionalProperties: false,
  description: 'Any subset of the writable fields; `{}` changes nothing',
});
export type AgentPatch = Static<typeof AgentPatchSchema>;

/** Names of the configuration fields (everything writable but the basics columns). */
export type ConfigField = Exclude<keyof typeof AgentPatchProps, 'name' | 'persona' | 'voice' | 'status'>;

/** The agent as every endpoint returns it: every writable field under its PATCH name (null when unset). */
export const AgentSchema = Type.Object({
  id: Uuid,
  public_key: Type.String({ pattern: '^wgt_[A-Za-z0-9_-]{20,}$', description: 'Widget id, used in the embed snippet' }),
  name: Type.String(),
  status: StringEnum(AGENT_STATUSES),
  voice: Nullable(Type.String()),
  persona: Nullable(Type.String()),
  site_url: Nullable(Type.String()),
  guardrails: Nullable(Type.Array(Type.String())),
  greeting: Nullable(Type.String()),
  interruptions: StringEnum(INTERRUPTIONS),
  responsiveness: StringEnum(RESPONSIVENESS),
  voice_profile_id: Nullable(Uuid),
  default_language: Nullable(Type.String()),
  additional_languages: Nullable(Type.Array(Type.String())),
  timezone: Nullable(Type.String()),
  prompt_modules: Nullable(Type.Array(Type.Object({ name: Type.String(), content: Type.String(), enabled: Type.Boolean() }))),
  goals: Nullable(Type.Array(Type.String())),
  data_schema: Nullable(Type.Array(DataFieldSchema)),
  acceptance_criteria: Nullable(Type.Array(Type.String())),
  tracking_rules: Nullable(Type.Array(Type.Object({ name: Type.String(), condition: Type.String(), enabled: Type.Boolean() }))),
  theme: ThemeSchema,
  position: StringEnum(POSITIONS),
  display_mode: StringEnum(DISPLAY_MODES),
  intro_title: Nullable(Type.String()),
  intro_subtitle: Nullable(Type.String()),
  suggested_prompts: Type.Array(Type.String()),
  localized_copy: Type.Object({ en: Type.Optional(LocalizedCopySchema), fr: Type.Optional(LocalizedCopySchema) }),
  button_label: Nullable(Type.String()),
  show_label: Type.Boolean(),
  logo_url: Nullable(Type.String()),
  launcher_icon_url: Nullable(Type.String()),
  launcher_icon_kind: StringEnum(LAUNCHER_ICON_KINDS),
  domains: Type.Array(Type.String(), { description: 'Host allowlist' }),
  mcp_pill_enabled: Type.Boolean(),
  mcp_ui_cards_enabled: Type.Boolean(),
  cross_channel_memory: Type.Boolean(),
  notification_email: Nullable(Type.String()),
  notification_phone: Nullable(Type.String()),
  voicemail_behavior: StringEnum(VOICEMAIL_BEHAVIORS),
  phone_settings: Type.Record(Type.String(), Type.Unknown()),
  config_variables: Nullable(Type.Record(Type.String(), Type.String())),
  live_chat_alerts: Type.Boolean(),
  live_chat_alert_scope: StringEnum(LIVE_CHAT_ALERT_SCOPES),
  satisfaction_survey: Type.Boolean(),
  model: Nullable(AgentModelShownSchema),
  has_pending_draft: Type.Boolean({ description: 'True when publishing the staged draft would change the configuration' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Agent', additionalProperties: false });
export type Agent = Static<typeof AgentSchema>;

export const AgentCreateSchema = Type.Object({
  name: AgentName,
  site_url: Type.Optional(SiteUrl),
}, { $id: 'AgentCreate', additionalProperties: false });

export const AgentListQuery = Type.Object({
  status: Type.Optional(StringEnum(AGENT_STATUSES)),
  ...PageQueryProps,
}, { additionalProperties: false });

export const AgentDeleteQuery = Type.Object({
  delete_kbs: Type.Optional(Type.Boolean({ description: 'Also delete knowledge bases used only by this agent (needs knowledge.write)' })),
}, { additionalProperties: false });

export const AgentListSchema = ListEnvelope(AgentSchema, 'AgentList');

/** A staged draft: the PATCH fields that publishing would apply. */
export const AgentDraftSchema = Type.Object({
  changes: AgentPatchSchema,
  updated_at: Timestamp,
}, { $id: 'AgentDraft', additionalProperties: false });
