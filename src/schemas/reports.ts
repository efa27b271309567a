import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Email, ListEnvelope, Nullable, PageQueryProps, StringEnum, Timestamp, Uuid } from './common.ts';

export const REPORT_FORMATS = ['document', 'presentation', 'raw'] as const;
export const REPORT_FREQUENCIES = ['manual', 'daily', 'weekly', 'monthly'] as const;
export const DATA_CATEGORIES = ['volume', 'goals', 'outcomes', 'intents', 'contacts', 'calls', 'usage'] as const;
export type DataCategory = (typeof DATA_CATEGORIES)[number];
export const RUN_STATUSES = ['generating', 'succeeded', 'failed'] as const;
export const RUN_TRIGGERS = ['manual', 'schedule'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];
export const MAX_RECIPIENTS = 20;

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: '1 to 200 characters' });
const WidgetIds = Type.Array(Uuid, { maxItems: 100, uniqueItems: true, description: 'Agents the report covers (their `id`); empty or omitted: the whole organization' });
const Categories = Type.Array(StringEnum(DATA_CATEGORIES), {
  minItems: 1, uniqueItems: true,
  description: '`volume` (conversations per day by surface and agent), `goals` (pass rate per criterion, `not_applicable` left out), `outcomes`, '
    + '`intents` (top 10), `contacts` (new and returning), `calls` (voice call outcomes, talk time, and voice latency p50 and p95 per agent), `usage` (conversation minutes and credits spent)',
});
const Format = StringEnum(REPORT_FORMATS, { description: '`document` (PDF), `presentation` (PPTX) or `raw` (JSON)' });
const Frequency = StringEnum(REPORT_FREQUENCIES, { description: '`manual`, or a Schedule firing `daily`, `weekly` (Mondays) or `monthly` (the 1st) at `send_at`' });
const Recipients = Type.Array(Email, { maxItems: MAX_RECIPIENTS, uniqueItems: true, description: `Up to ${MAX_RECIPIENTS} email addresses the artifact is mailed to` });
const Timezone = Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone of `send_at` and of the periods, e.g. `Europe/Paris` (default `UTC`)' });
const SendAt = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', 'x-code': 'invalid_time', description: '`HH:MM` (24 h) in `timezone` (default `06:00`)' });

export const ReportSchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  widget_ids: Type.Array(Uuid),
  data_categories: Type.Array(StringEnum(DATA_CATEGORIES)),
  format: Format,
  frequency: Frequency,
  recipients: Type.Array(Type.String()),
  schedule_enabled: Type.Boolean({ description: 'Whether the Schedule `report-schedule:<id>` fires (false: paused); always false for `manual`, which has none' }),
  timezone: Type.String(),
  send_at: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Report', additionalProperties: false });
export type Report = Static<typeof ReportSchema>;

export const ReportListSchema = ListEnvelope(ReportSchema, 'ReportList');

export const ReportCreateSchema = Type.Object({
  name: Name,
  widget_ids: Type.Optional(WidgetIds),
  data_categories: Categories,
  format: Format,
  frequency: Frequency,
  recipients: Type.Optional(Recipients),
  schedule_enabled: Type.Optional(Type.Boolean({ description: 'Default true; with `manual` it takes effect when a frequency is set' })),
  timezone: Type.Optional(Timezone),
  send_at: Type.Optional(SendAt),
}, { $id: 'ReportCreate', additionalProperties: false });
export type ReportCreate = Static<typeof ReportCreateSchema>;

export const ReportPatchSchema = Type.Object({
  name: Type.Optional(Name),
  widget_ids: Type.Optional(WidgetIds),
  data_categories: Type.Optional(Categories),
  format: Type.Optional(Format),
  frequency: Type.Optional(Frequency),
  recipients: Type.Optional(Recipients),
  schedule_enabled: Type.Optional(Type.Boolean()),
  timezone: Type.Optional(Timezone),
  send_at: Type.Optional(SendAt),
}, { $id: 'ReportPatch', additionalProperties: false, description: 'Any subset; `{}` changes nothing' });
export type ReportPatch = Static<typeof ReportPatchSchema>;

export const ReportRunSchema = Type.Object({
  id: Uuid,
  report_id: Uuid,
  status: StringEnum(RUN_STATUSES),
  trigger: StringEnum(RUN_TRIGGERS, { description: '`manual` (POST /reports/:id/run) or `schedule`' }),
  period_start: Timestamp,
  period_end: Type.String({ format: 'date-time', description: 'End of the period covered (exclusive)' }),
  created_at: Timestamp,
  completed_at: Nullable(Timestamp),
  error: Nullable(Type.String({ description: 'Why a `failed` run failed (`insufficient_credits` for a scheduled run the balance could not pay)' })),
  download_url: Type.Optional(Type.String({ description: 'Only when `succeeded`: a signed link to the artifact, valid 15 minutes' })),
}, { $id: 'ReportRun', additionalProperties: false });
export type ReportRun = Static<typeof ReportRunSchema>;

export const ReportRunListSchema = ListEnvelope(ReportRunSchema, 'ReportRunList');
export const ReportListQuery = Type.Object(PageQueryProps, { additionalProperties: false });

export const ReportRunCreateSchema = Type.Object({
  period_start: Type.Optional(Type.String({ format: 'date-time', description: 'With `period_end`: another period than the current one to date' })),
  period_end: Type.Optional(Type.String({ format: 'date-time' })),
}, { $id: 'ReportRunCreate', additionalProperties: false, description: 'Optional; omitted, a run covers the current period up to the end of today in the report\'s time zone (daily: today, weekly: this week from Monday, monthly or manual: this month). Scheduled runs cover the period just closed' });
export type ReportRunCreate = Static<typeof ReportRunCreateSchema>;

export const RunParams = Type.Object({ id: Uuid, run_id: Uuid }, { additionalProperties: false });

// ---- The figures of a run: the `raw` artifact, and what the PDF and PPTX draw. ----

const Count = Type.Integer({ minimum: 0 });
const Latency = {
  turns: { ...Count, description: 'Streamed agent turns with audio' },
  p50_ms: Nullable(Type.Integer({ description: 'Median, ms' })),
  p95_ms: Nullable(Type.Integer({ description: '95th percentile, ms' })),
};
const Named = <T extends Record<string, TSchema>>(props: T, opts: { description?: string } = {}) => Type.Object(props, { additionalProperties: false, ...opts });

export const ReportDataSchema = Type.Object({
  report: Named({ id: Uuid, name: Type.String(), widget_ids: Type.Array(Uuid), data_categories: Type.Array(Type.String()) }),
  period: Named({ start: Timestamp, end: Timestamp, timezone: Type.String() }),
  generated_at: Timestamp,
  agents: Type.Array(Named({ id: Uuid, name: Type.String() }), { description: 'Agents named in the figures' }),
  headline: Named({
    conversations: Count,
    pass_rate: Nullable(Type.Number({ description: 'Passed criteria over passed and failed ones, 0 to 1; null when none was judged' })),
    contacts: Count,
  }),
  volume: Type.Optional(Named({
    total: Count,
    by_day: Type.Array(Named({ day: Type.String({ description: 'YYYY-MM-DD in the report\'s timezone' }), count: Count })),
    by_surface: Type.Array(Named({ surface: Type.String(), count: Count })),
    by_agent: Type.Array(Named({ agent_id: Uuid, count: Count })),
    by_day_surface_agent: Type.Array(Named({ day: Type.String(), surface: Type.String(), agent_id: Uuid, count: Count })),
  })),
  goals: Type.Optional(Named({
    criteria: Type.Array(Named({ criterion: Type.String(), pass: Count, fail: Count, not_applicable: Count, pass_rate: Nullable(Type.Number()) })),
  })),
  outcomes: Type.Optional(Named({ items: Type.Array(Named({ outcome: Type.String(), count: Count })) })),
  intents: Type.Optional(Named({ top: Type.Array(Named({ intent: Type.String(), count: Count }), { maxItems: 10 }) })),
  contacts: Type.Optional(Named({ new: Count, returning: Count })),
  calls: Type.Optional(Named({
    total: Count, talk_seconds: Count,
    average_talk_seconds: Nullable(Type.Number()),
    by_outcome: Type.Array(Named({ outcome: Type.String(), count: Count, talk_seconds: Count })),
    latency: Named({
      ...Latency,
      by_agent: Type.Array(Named({ agent_id: Uuid, ...Latency })),
    }, { description: 'Voice latency of streamed calls (`voice_mode: stream`): end of the caller\'s speech → first audio byte of the agent\'s answer, '
      + 'p50 and p95 in milliseconds over the agent turns with audio of the period\'s conversations; null when there is none' }),
  })),
  usage: Type.Optional(Named({
    conversation_minutes: Type.Number(),
    credits_spent_cents: Count,
    input_tokens: Type.Optional({ ...Count, description: 'Prompt tokens the LLM used in the period\'s ended conversations' }),
    output_tokens: Type.Optional({ ...Count, description: 'Completion tokens the LLM used in the period\'s ended conversations' }),
    by_surface: Type.Array(Named({ surface: Type.String(), minutes: Type.Number() })),
  })),
  annotations: Named({
    tags: Type.Array(Named({ tag: Type.String(), count: Count })),
    labels: Type.Array(Named({ label: Type.String(), count: Count })),
    ratings: Type.Array(Named({ rating: Type.Integer({ minimum: 1, maximum: 5 }), count: Count })),
    average_rating: Nullable(Type.Number()),
    notes: Count,
  }, { description: 'Live inbox annotations of the period\'s conversations (always included)' }),
}, { $id: 'ReportData', additionalProperties: false, description: 'The `raw` artifact: every figure behind the document\'s and the presentation\'s charts' });
export type ReportData = Static<typeof ReportDataSchema>;
