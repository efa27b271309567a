import { isDeepStrictEqual } from 'node:util';
import type { FieldError } from '../validation.ts';
import { AgentPatchProps, type AgentPatch, type ConfigField, type Theme } from '../schemas/agents.ts';
import { normalizeEmbedHost } from './hosts.ts';
import { isTimeZone } from './report-periods.ts';

/**
 * The rules of an agent's configuration that a JSON Schema cannot say: normalization, the
 * merge semantics of each field (specification, Agent, rules 1 to 5), drafts and their pruning.
 * Pure functions: the repository and the routes call them inside a transaction.
 */

/** The columns of the agents row; every other writable field lives in its `config` object. */
export const BASIC_FIELDS = ['name', 'persona', 'voice', 'status'] as const;
export type BasicField = (typeof BASIC_FIELDS)[number];

export const CONFIG_FIELDS = Object.keys(AgentPatchProps).filter((k) => !(BASIC_FIELDS as readonly string[]).includes(k)) as ConfigField[];

export const DEFAULT_THEME: Theme = { mode: 'auto', primary: '#2563EB', radius: 12 };

/** Values a field has until it is set; every other field reads null when unset. */
export const CONFIG_DEFAULTS: Partial<Record<ConfigField, unknown>> = {
  interruptions: 'allow',
  responsiveness: 'normal',
  theme: DEFAULT_THEME,
  position: 'bottom_right',
  display_mode: 'floating',
  suggested_prompts: [],
  localized_copy: {},
  show_label: true,
  launcher_icon_kind: 'default',
  domains: [],
  mcp_pill_enabled: false,
  mcp_ui_cards_enabled: false,
  cross_channel_memory: false,
  voicemail_behavior: 'leave_message',
  phone_settings: {},
  live_chat_alerts: false,
  live_chat_alert_scope: 'all',
  satisfaction_survey: false,
};

/**
 * Fields merged key by key rather than replaced: localized_copy per language and
 * phone_settings per key (a null value removes the key), theme per key.
 */
const MERGED_FIELDS = new Set<string>(['localized_copy', 'phone_settings', 'theme']);

export type ConfigObject = Record<string, unknown>;

/** Each configuration field with the value it reads when unset, in CONFIG_FIELDS order. */
const FIELD_DEFAULTS = CONFIG_FIELDS.map((field) => [field, CONFIG_DEFAULTS[field] ?? null] as const);

/**
 * Writes every configuration field with its value, default or null, onto `out` (what GET shows).
 * One pass over the fields, no intermediate object: it runs for every agent a response shows.
 */
export function writeConfig(stored: ConfigObject, out: Record<string, unknown>): void {
  for (const [field, fallback] of FIELD_DEFAULTS) {
    const value = stored[field];
    out[field] = value === undefined ? fallback : value;
  }
  const theme = stored.theme as object | undefined;
  out.theme = theme === undefined ? { ...DEFAULT_THEME } : { ...DEFAULT_THEME, ...theme };
}

/** What `agentShapeBuilder` makes: the agent's API object from the row's own columns, its config and the has_pending_draft flag. */
export type AgentShapeBuilder = (
  row: { id: string; public_key: string; name: string; status: string; voice: string | null; persona: string | null; site_url: string | null; created_at: Date; updated_at: Date },
  stored: ConfigObject, hasPendingDraft: boolean,
) => Record<string, unknown>;

/**
 * The agent's API object (what toAgent answers) as one object literal of its fields in its order: the row's columns,
 * every configuration field as `writeConfig` writes it (its stored value, else its default, else null; theme merged
 * onto DEFAULT_THEME), has_pending_draft, the two times. Compiled once from CONFIG_FIELDS, whose names are checked to be
 * plain identifiers. Writing the 37 fields by a computed name onto a copy of a 48-field shape went through V8's
 * megamorphic keyed stores and loads and, for the copy, its runtime (property transitions, map migrations): about 20 %
 * of a GET's instructions beyond the bare route's (issue 48, round eleven, bench/README.md). A literal is made from
 * its boilerplate and each field is a named access: the same values, the same order, the same shared default objects.
 */
export function agentShapeBuilder(): AgentShapeBuilder {
  const fields = CONFIG_FIELDS.map((field) => {
    if (!/^[a-z_][a-z0-9_]*$/.test(field)) throw new Error(`configuration field ${field} is not a plain identifier`);
    if (field === 'theme') return 'theme: c.theme === undefined ? { ...t } : { ...t, ...c.theme }';
    return `${field}: c.${field} === undefined ? ${field in CONFIG_DEFAULTS ? `d.${field}` : 'null'} : c.${field}`;
  });
  const source = `return function agentShape(row, c, hasPendingDraft) {
    return {
      id: row.id, public_key: row.public_key, name: row.name, status: row.status, voice: row.voice, persona: row.persona, site_url: row.site_url,
      ${fields.join(',\n      ')},
      has_pending_draft: hasPendingDraft, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
    };
  };`;
  // The text is made above from the schema's field names only.
  return (new Function('d', 't', source) as (d: unknown, t: unknown) => AgentShapeBuilder)(CONFIG_DEFAULTS, DEFAULT_THEME);
}

/** Every configuration field with its value, default or null: what GET shows. */
export function readConfig(stored: ConfigObject): Record<ConfigField, unknown> {
  const out = {} as Record<ConfigField, unknown>;
  writeConfig(stored, out);
  return out;
}

const RESERVED_VARIABLES = new Set(['agent_name']);
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Checks the rules beyond the schema and returns the patch in stored form (domains
 * normalized and de-duplicated, optional list-item keys filled in), or the field errors.
 */
export function normalizePatch(input: AgentPatch): { patch: AgentPatch; errors: FieldError[] } {
  const errors: FieldError[] = [];
  // Lone surrogates never reach here: request bodies are made well-formed at the door (api/middleware/body.ts).
  const out: Record<string, unknown> = { ...input };
  const patch = out as AgentPatch;
  if (patch.domains) {
    const hosts: string[] = [];
    patch.domains.forEach((d, i) => {
      const host = normalizeEmbedHost(d);
      if (!host) errors.push({ field: `domains[${i}]`, code: 'invalid_domain', message: `domains[${i}] must be a host such as example.com or *.example.com` });
      else if (!hosts.includes(host)) hosts.push(host);
    });
    out.domains = hosts;
  }
  if (typeof patch.timezone === 'string' && !isTimeZone(patch.timezone)) {
    errors.push({ field: 'timezone', code: 'invalid_timezone', message: 'timezone must be an IANA time zone such as Europe/Paris' });
  }
  if (patch.config_variables) {
    for (const name of Object.keys(patch.config_variables)) {
      const field = `config_variables.${name}`;
      if (!IDENTIFIER.test(name)) errors.push({ field, code: 'invalid_identifier', message: `${field}: a variable name must be an identifier (letters, digits, _; not starting with a digit)` });
      else if (RESERVED_VARIABLES.has(name)) errors.push({ field, code: 'reserved_name', message: `${field}: agent_name is reserved` });
    }
  }
  if (patch.data_schema) {
    const seen = new Set<string>();
    patch.data_schema.forEach((f, i) => {
      if (seen.has(f.name)) errors.push({ field: `data_schema[${i}].name`, code: 'duplicate_name', message: `data_schema[${i}].name ${f.name} is used twice` });
      seen.add(f.name);
    });
    out.data_schema = patch.data_schema.map((f) => ({ name: f.name, type: f.type, description: f.description ?? null, required: f.required ?? false }));
  }
  if (patch.prompt_modules) out.prompt_modules = patch.prompt_modules.map((m) => ({ ...m, enabled: m.enabled ?? true }));
  if (patch.tracking_rules) out.tracking_rules = patch.tracking_rules.map((r) => ({ ...r, enabled: r.enabled ?? true }));
  if (patch.model) {
    // Stored with every member, so the agent shows its whole setting (issue 46, item 3).
    const m = patch.model;
    out.model = { provider_id: m.provider_id ?? null, model: m.model ?? null, temperature: m.temperature ?? null, max_tokens: m.max_tokens ?? null, reply_language: m.reply_language ?? 'auto' };
  }
  if (patch.phone_settings && JSON.stringify(patch.phone_settings).length > 16_384) {
    errors.push({ field: 'phone_settings', code: 'too_large', message: 'phone_settings must serialize to at most 16 KiB' });
  }
  return { patch: out as AgentPatch, errors };
}

/** Sets an own property, even one named `__proto__` (plain assignment would set the prototype). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function mergeObject(current: unknown, changes: Record<string, unknown>, nullRemoves: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(current as Record<string, unknown> | null ?? {}) };
  for (const [key, value] of Object.entries(changes)) {
    if (value === null && nullRemoves) delete out[key];
    else setOwn(out, key, value);
  }
  return out;
}

/** The agent's basics and configuration after applying a (normalized) patch. */
export function applyPatch(
  basics: Record<BasicField, unknown>, config: ConfigObject, patch: AgentPatch,
): { basics: Record<BasicField, unknown>; config: ConfigObject } {
  const nextBasics = { ...basics };
  const nextConfig: ConfigObject = { ...config };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if ((BASIC_FIELDS as readonly string[]).includes(key)) nextBasics[key as BasicField] = value;
    else if (MERGED_FIELDS.has(key)) nextConfig[key] = mergeObject(config[key], value as Record<string, unknown>, key !== 'theme');
    else if (value === null) delete nextConfig[key];
    else nextConfig[key] = value;
  }
  return { basics: nextBasics, config: nextConfig };
}

/**
 * Stages `patch` on top of a draft's changes: later values win, and merged fields combine at
 * their own granularity (a draft's `localized_copy.fr: null` survives a later `localized_copy.en`).
 */
export function combineChanges(draft: AgentPatch, patch: AgentPatch): AgentPatch {
  const out: Record<string, unknown> = { ...draft };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    out[key] = MERGED_FIELDS.has(key) ? mergeObject((draft as Record<string, unknown>)[key], value as Record<string, unknown>, false) : value;
  }
  return out as AgentPatch;
}

/**
 * Removes from a draft what a live PATCH just set (the specification: PATCH "prunes overlapping
 * keys from a pending draft"): whole fields, or the languages/keys of a merged field.
 */
export function pruneChanges(draft: AgentPatch, patch: AgentPatch): AgentPatch {
  const out: Record<string, unknown> = { ...draft };
  for (const key of Object.keys(patch)) {
    if (!(key in out)) continue;
    if (MERGED_FIELDS.has(key)) {
      const rest = { ...(out[key] as Record<string, unknown>) };
      for (const sub of Object.keys((patch as Record<string, object>)[key]!)) delete rest[sub];
      if (Object.keys(rest).length) out[key] = rest;
      else delete out[key];
    } else {
      delete out[key];
    }
  }
  return out as AgentPatch;
}

/** Whether publishing `changes` would change anything. */
export function changesSomething(basics: Record<BasicField, unknown>, config: ConfigObject, changes: AgentPatch): boolean {
  const next = applyPatch(basics, config, changes);
  return !isDeepStrictEqual(next.basics, basics) || !isDeepStrictEqual(readConfig(next.config), readConfig(config));
}
