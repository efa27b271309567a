import type Router from '@koa/router';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { AppError, missingPermission, validationError } from '../src/errors.ts';
import type { Permission } from '../src/auth/permissions.ts';
import type { Principal } from '../src/auth/authenticator.ts';
import { compileValidator, formatErrors, type FieldError } from '../src/validation.ts';
import type { AppContext, AppDeps } from './context.ts';
import { readJsonBody } from './middleware/body.ts';
import { checkIdempotencyKey, fingerprint, runIdempotent, type StoredResponse } from './middleware/idempotency.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a handler answers; the route writes it to the response (and stores it for Idempotency-Key). */
export interface Reply { status: number; body?: unknown; headers?: Record<string, string> }

export interface HandlerInput<P extends TSchema, Q extends TSchema, B extends TSchema> {
  params: Static<P>;
  query: Static<Q>;
  body: Static<B>;
  principal: Principal;
  deps: AppDeps;
  ctx: AppContext;
}

/**
 * One endpoint: the single description from which the router, request validation and the
 * OpenAPI document are all made.
 */
export interface RouteDef<P extends TSchema = TSchema, Q extends TSchema = TSchema, B extends TSchema = TSchema> {
  method: Method;
  /** Koa path below the family's base, e.g. `/agents/:id`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  /** Every one is required; checked before the request is validated (403 comes before 400). */
  permissions: Permission[];
  /**
   * A public endpoint (`/api/v1/public/...`): no bearer token, so no principal, no permissions
   * and no Idempotency-Key; the handler checks whatever it needs (an Origin, a visitor token).
   */
  public?: boolean;
  /** Permissions that depend on the validated request, e.g. `delete_kbs=true`. */
  extraPermissions?: (input: { query: Static<Q>; body: Static<B> }) => Permission[];
  params?: P;
  query?: Q;
  body?: B;
  responses: Record<number, { description: string; schema?: TSchema }>;
  handler(input: HandlerInput<P, Q, B>): Promise<Reply>;
  /**
   * For a response holding a shown-once secret: whether the resource it shows still exists.
   * An Idempotency-Key replay of one that is gone is 409 `invalid_state`, never the secret again.
   */
  stillExists?(input: { deps: AppDeps; principal: Principal; body: unknown }): Promise<boolean>;
}

/** The answer of a list endpoint: the page and the `limit` and `offset` it was asked for (`{data, total, limit, offset}`). */
export function pageReply<T>(page: { data: T[]; total: number }, query: { limit: number; offset: number }): Reply {
  return { status: 200, body: { data: page.data, total: page.total, limit: query.limit, offset: query.offset } };
}

/** Keeps the type parameters of a route while collecting it in a family's list. */
export function route<P extends TSchema, Q extends TSchema, B extends TSchema>(def: RouteDef<P, Q, B>): RouteDef {
  return def as unknown as RouteDef;
}

export interface RouteFamily {
  /** Path prefix, e.g. `/api/v1/rest`. */
  base: string;
  tag: string;
  description: string;
  routes: RouteDef[];
}

function validator(schema: TSchema | undefined, coerce: boolean): ValidateFunction | null {
  return schema ? compileValidator(schema, { coerce, defaults: coerce }) : null;
}

function check(validate: ValidateFunction | null, value: unknown): unknown {
  if (!validate) return value;
  if (!validate(value)) throw validationError(formatErrors(validate.errors));
  return value;
}

const QUERY_FORMS: Record<string, { form: RegExp; message: string }> = {
  integer: { form: /^-?\d{1,15}$/, message: 'must be a whole number in decimal digits' },
  number: { form: /^-?\d{1,15}(\.\d{1,15})?$/, message: 'must be a decimal number' },
  boolean: { form: /^(true|false)$/, message: 'must be true or false' },
};

/**
 * Query values arrive as strings. Numbers and booleans must be written plainly (no `0x10`, `1e2`,
 * `Infinity` or padding) before ajv coerces them; a repeated parameter is refused.
 */
function queryObject(ctx: AppContext, schema: TObject | undefined): Record<string, unknown> {
  const query = { ...ctx.query } as Record<string, unknown>;
  if (!schema) return query;
  const errors: FieldError[] = [];
  for (const [name, value] of Object.entries(query)) {
    const prop = schema.properties[name] as { type?: string } | undefined;
    if (Array.isArray(value) && prop?.type !== 'array') {
      errors.push({ field: name, code: 'invalid_type', message: `${name} must be given once` });
      continue;
    }
    const rule = prop?.type ? QUERY_FORMS[prop.type] : undefined;
    if (rule && typeof value === 'string' && !rule.form.test(value)) {
      errors.push({ field: name, code: 'invalid_type', message: `${name} ${rule.message}` });
    }
  }
  if (errors.length) throw validationError(errors);
  return query;
}

/** PostgreSQL text cannot hold U+0000: refuse it up front, naming the field, rather than fail later. */
function findNulCharacters(value: unknown, path: string, out: FieldError[]): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) out.push({ field: path, code: 'invalid_characters', message: `${path || 'body'} must not contain the NUL character` });
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => findNulCharacters(item, `${path}[${i}]`, out));
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) out.push({ field: path, code: 'invalid_characters', message: 'property names must not contain the NUL character' });
      else findNulCharacters(item, path ? `${path}.${key}` : key, out);
    }
  }
}

function compose(def: RouteDef) {
  const params = validator(def.params, true);
  const query = validator(def.query, true);
  const body = def.body ? validator(def.body, false) : null;
  return async (ctx: AppContext): Promise<void> => {
    // Public routes have none (their handlers never read it); every other route runs after authentication.
    const principal = ctx.state.principal as Principal;
    if (!principal && !def.public) throw new AppError(401, 'unauthorized', 'authentication required');
    if (!def.public) for (const p of def.permissions) if (!principal.permissions.has(p)) throw missingPermission(p);
    const input = {
      params: ctx.params,
      query: query || ctx.querystring ? check(query, queryObject(ctx, def.query as TObject | undefined)) : {},
      body: undefined as unknown,
      principal, deps: ctx.deps, ctx,
    };
    const raw = await readJsonBody(ctx);
    if (body) {
      input.body = check(body, raw === undefined ? {} : raw);
      const nul: FieldError[] = [];
      findNulCharacters(input.body, '', nul);
      if (nul.length) throw validationError(nul);
    }
    else if (raw !== undefined && !(raw && typeof raw === 'object' && Object.keys(raw).length === 0)) {
      throw validationError([{ field: '', code: 'unexpected_body', message: 'this endpoint takes no body' }]);
    }
    if (!def.public) for (const p of def.extraPermissions?.(input as never) ?? []) if (!principal.permissions.has(p)) throw missingPermission(p);
    // A path id that is not even well-formed names nothing: 404, as for an unknown one.
    if (params && !params(ctx.params)) throw new AppError(404, 'not_found', 'resource not found');

    const execute = async (): Promise<StoredResponse> => {
      const reply = await def.handler(input as never);
      return { status: reply.status, headers: reply.headers ?? {}, body: reply.body };
    };
    const key = def.method === 'POST' && !def.public ? ctx.get('Idempotency-Key') : '';
    let reply: StoredResponse & { replayed?: boolean };
    if (key) {
      checkIdempotencyKey(key);
      const canReplay = def.stillExists && ((body: unknown) => def.stillExists!({ deps: ctx.deps, principal, body }));
      reply = await runIdempotent(ctx.deps.sql, ctx.deps.secrets, { orgId: principal.orgId, keyId: principal.keyId }, key,
        fingerprint(ctx.deps.secrets, def.method, ctx.path, input.body), execute, canReplay);
      if (reply.replayed) ctx.set('Idempotent-Replayed', 'true');
    } else {
      reply = await execute();
    }
    ctx.status = reply.status;
    for (const [name, value] of Object.entries(reply.headers)) ctx.set(name, value);
    if (reply.body !== undefined) ctx.body = reply.body;
  };
}

/** Registers a family's routes on a router mounted at the family's base path. */
export function mountFamily(router: Router, family: RouteFamily): void {
  for (const def of family.routes) {
    const handler = compose(def);
    router.register(family.base + def.path, [def.method], (ctx) => handler(ctx as unknown as AppContext));
  }
}
