import { Type, type Static } from '@sinclair/typebox';
import { Nullable, PageQueryProps, StringEnum, Timestamp, Uuid } from './common.ts';
import { ConversationListQuery } from './conversations.ts';

export const EXPORT_FORMATS = ['csv', 'ndjson'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const EXPORT_RESOURCES = ['conversations', 'contacts', 'data_table_rows'] as const;
export type ExportResource = (typeof EXPORT_RESOURCES)[number];
export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;

const Format = StringEnum(EXPORT_FORMATS, {
  default: 'csv',
  description: '`csv` (UTF-8, RFC 4180, CRLF; text a spreadsheet would run as a formula is prefixed with `\'`) or `ndjson` (one JSON object a line)',
});

/** The conversations list's filters, without the page. */
const { limit: _limit, offset: _offset, ...conversationFilters } = ConversationListQuery.properties;

export const ConversationExportQuery = Type.Object({
  format: Type.Optional(Format),
  transcripts: Type.Optional(Type.Boolean({ default: false, description: 'With each conversation\'s messages (CSV: a `transcript` cell of `[ts] role: text` lines)' })),
  ...conversationFilters,
}, { additionalProperties: false });
export type ConversationExportQuery = Static<typeof ConversationExportQuery>;

export const FormatQuery = Type.Object({ format: Type.Optional(Format) }, { additionalProperties: false });

export const DataExportCreateSchema = Type.Object({
  resource: StringEnum(EXPORT_RESOURCES),
  format: Type.Optional(Format),
  transcripts: Type.Optional(Type.Boolean({ description: '`conversations`: with each conversation\'s messages' })),
  filters: Type.Optional(Type.Object(conversationFilters, { additionalProperties: false, description: '`conversations`: the list\'s filters' })),
  widget_id: Type.Optional(Type.String({ ...Uuid, description: '`data_table_rows`: the agent whose table it is' })),
  table_id: Type.Optional(Type.String({ ...Uuid, description: '`data_table_rows`: the table' })),
}, { $id: 'DataExportCreate', additionalProperties: false });
export type DataExportCreate = Static<typeof DataExportCreateSchema>;

export const DataExportSchema = Type.Object({
  id: Uuid,
  resource: StringEnum(EXPORT_RESOURCES),
  format: StringEnum(EXPORT_FORMATS),
  status: StringEnum(JOB_STATUSES),
  row_count: Nullable(Type.Integer({ minimum: 0, description: 'Records written, once succeeded' })),
  byte_count: Nullable(Type.Integer({ minimum: 0 })),
  error: Nullable(Type.String()),
  download_path: Nullable(Type.String({ description: 'Once succeeded: `GET` it with the same token for the file' })),
  created_at: Timestamp,
  completed_at: Nullable(Timestamp),
}, { $id: 'DataExport', additionalProperties: false });
export type DataExport = Static<typeof DataExportSchema>;

export const DataExportListSchema = Type.Object({
  data: Type.Array(DataExportSchema), total: Type.Integer({ minimum: 0 }), limit: Type.Integer(), offset: Type.Integer(),
}, { $id: 'DataExportList', additionalProperties: false });

export const ImportErrorSchema = Type.Object({
  row: Type.Integer({ minimum: 0, description: '1 for the first line after the header; 0 for the header itself' }),
  field: Type.String({ description: 'The column, as the header names it' }),
  code: Type.String(),
  message: Type.String(),
}, { $id: 'ImportError', additionalProperties: false });

export const ContactImportQuery = Type.Object({
  dry_run: Type.Optional(Type.Boolean({ default: false, description: 'Check every row and say what would happen; change nothing' })),
}, { additionalProperties: false });

export const ContactImportDryRunSchema = Type.Object({
  dry_run: Type.Literal(true),
  rows: Type.Integer({ minimum: 0 }),
  valid: Type.Integer({ minimum: 0 }),
  creates: Type.Integer({ minimum: 0, description: 'Valid rows whose phone and email no contact holds' }),
  updates: Type.Integer({ minimum: 0, description: 'Valid rows that would update the contact holding their phone or email' }),
  errors: Type.Array(ImportErrorSchema, { description: 'Every refused cell (the first 1,000): those rows would be skipped' }),
}, { $id: 'ContactImportDryRun', additionalProperties: false });

export const ContactImportSchema = Type.Object({
  id: Uuid,
  status: StringEnum(JOB_STATUSES),
  rows: Type.Integer({ minimum: 0 }),
  created: Type.Integer({ minimum: 0 }),
  updated: Type.Integer({ minimum: 0 }),
  skipped: Type.Integer({ minimum: 0, description: 'Rows refused (see `errors`)' }),
  errors: Type.Array(ImportErrorSchema),
  error: Nullable(Type.String({ description: 'Why a failed import failed' })),
  created_at: Timestamp,
  completed_at: Nullable(Timestamp),
}, { $id: 'ContactImport', additionalProperties: false });
export type ContactImport = Static<typeof ContactImportSchema>;

export const ContactMergeSchema = Type.Object({
  source_contact_id: Type.String({ ...Uuid, description: 'The contact merged into this one, then deleted' }),
}, { $id: 'ContactMerge', additionalProperties: false });

export const ExportListQuery = Type.Object(PageQueryProps, { additionalProperties: false });
