import { createHash } from 'node:crypto';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { AppError, missingPermission, validationError } from '../src/errors.ts';
import type { Permission } from '../src/schemas/permissions.ts';
import type { Principal } from '../src/auth/authenticator.ts';
import { compileValidator, formatErrors, SHAPE_CHECKS, type FieldError } from '../src/validation.ts';
import { NoQuery } from '../src/schemas/common.ts';
import type { AppContext, AppDeps } from './context.ts';
import { hasBody, isCsvRequest, readCsvBody, readJsonBody } from './middleware/body.ts';
import { isMultipartRequest, readUpload, type Upload } from './middleware/upload.ts';
import { nulCharacterErrors } from './json-scan.ts';
import { requestLineErrors } from './url-text.ts';
import { responseCheck } from './response-check.ts';
import { checkIdempotencyKey, fingerprint, runIdempotent, type StoredResponse } from './middleware/idempotency.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a handler answers; the route writes it to the response (and stores it for Idempotency-Key). */
export interface Reply<B = unknown> { status: number; body?: B; headers?: Record<string, string> }

/**
 * A route's declared responses, by status. `mediaType` names a body that is not JSON (an image,
 * an event stream): the OpenAPI document declares it under that type, so a generated client
 * neither parses it as JSON nor waits for it to end. A 4xx declared without a schema is a problem.
 */
type Responses = Record<number, { description: string; schema?: TSchema; mediaType?: string }>;

/** The body types a route's responses declare: a handler returns one of them (or none). */
type DeclaredBody<R extends Responses> = { [K in keyof R]: R[K] extends { schema: infer S extends TSchema } ? Static<S> : undefined }[keyof R];

export interface HandlerInput<P extends TSchema, Q extends TSchema, B extends TSchema> {
  params: Static<P>;
  query: Static<Q>;
  body: Static<B>;
  principal: Principal;
  deps: AppDeps;
  ctx: AppContext;
  /** A `text/csv` body's text, on a route with `acceptsCsv` (the JSON body is then `{}` and not validated). */
  csv?: string;
  /** A `multipart/form-data` file, on a route with `acceptsUpload` (the JSON body is then `{}` and not validated). */
  upload?: Upload;
}

/**
 * One endpoint: the single description from which the router, request validation and the
 * OpenAPI document are all made.
 */
export interface RouteDef<P extends TSchema = TSchema, Q extends TSchema = TSchema, B extends TSchema = TSchema, R extends Responses = Responses> {
  method: Method;
  /** Koa path below the family's base, e.g. `/agents/:id`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  /** Every one is required; checked before the request is validated (403 comes before 400). Empty in a public family. */
  permissions: Permission[];
  /** Only a user-scoped (`ut_`) token may call it: an org key is 403 `user_token_required`, before validation. */
  userToken?: boolean;
  /** Permissions that depend on the validated request, e.g. `delete_kbs=true`. */
  extraPermissions?: (input: { query: Static<Q>; body: Static<B> }) => Permission[];
  /**
   * Rules on the validated request that no schema can say, thrown as their own 400 (e.g.
   * `use_assign_endpoint`): checked with validation, so before the path's resource is looked up (400 before 404).
   */
  refuseRequest?: (input: { query: Static<Q>; body: Static<B> }) => void;
  params?: P;
  query?: Q;
  body?: B;
  /** Also takes a `text/csv` body (UTF-8, 1 MiB at most), handed to the handler as `csv`; the OpenAPI document lists it. */
  acceptsCsv?: boolean;
  /** Also takes one file as `multipart/form-data` (field `file`, at most `maxBytes`), handed to the handler as `upload`; the OpenAPI document lists it. */
  acceptsUpload?: { maxBytes: number; description: string };
  /** Every status a handler answers with, and its body's schema: the handler's return type is held to them. */
  responses: R;
  /**
   * The 200 is a `text/event-stream` (Server-Sent Events) that stays open, not one JSON body. Such a
   * route is no MCP tool: a tool call has one result, and an in-process call has no socket to stream on.
   */
  eventStream?: boolean;
  handler(input: HandlerInput<P, Q, B>): Promise<Reply<DeclaredBody<R>>>;
  /**
   * For a response holding a shown-once secret: whether the resource it shows still exists.
   * An Idempotency-Key replay of one that is gone is 409 `invalid_state`, never the secret again.
   */
  stillExists?(input: { deps: AppDeps; principal: Principal; body: unknown }): Promise<boolean>;
}

/** The answer of a list endpoint: the page and the `limit` and `offset` it was asked for (`{data, total, limit, offset}`). */
export function pageReply<T>(page: { data: T[]; total: number }, query: { limit: number; offset: number }): Reply<{ data: T[]; total: number; limit: number; offset: number }> {
  return { status: 200, body: { data: page.data, total: page.total, limit: query.limit, offset: query.offset } };
}

/** Keeps the type parameters of a route while collecting it in a family's list. */
export function route<P extends TSchema, Q extends TSchema, B extends TSchema, const R extends Responses>(def: RouteDef<P, Q, B, R>): RouteDef {
  return def as unknown as RouteDef;
}

export interface RouteFamily {
  /** Path prefix, e.g. `/api/v1/rest`. */
  base: string;
  /**
   * A public family (`/api/v1/public/...`) is mounted in the public area, behind its CORS and
   * per-address rate limit: no bearer token, so no principal, no permissions and no
   * Idempotency-Key; the handler checks whatever it needs (an Origin, a visitor token). Every
   * other family is mounted in the authenticated area, behind the token check and its rate limit.
   */
  public?: boolean;
  tag: string;
  description: string;
  routes: RouteDef[];
  /**
   * Where the family comes in the API reference (OpenAPI tags and paths, MCP tools): families
   * sort by it, those without one last, by file name. The route table is every module of
   * api/routes/ that exports a RouteFamily (api/families.ts): no list to add a family to.
   */
  order?: number;
}

/**
 * A route's validator, compiled by ajv on the route's first request rather than at start (issue 48): an idle
 * service held every route's compiled validators, for routes it may never serve. ajv compiles a schema into the
 * same function whenever it does, so each request is checked as before. test/fuzz-routes.test.ts calls every
 * route, so a schema ajv refuses still fails the tests, where it used to fail the start.
 */
function validator(schema: TSchema | undefined, coerce: boolean): (() => ValidateFunction) | null {
  if (!schema) return null;
  let compiled: ValidateFunction | undefined;
  return () => (compiled ??= compileValidator(schema, { coerce, defaults: coerce }));
}

function check(validator: (() => ValidateFunction) | null, value: unknown): unknown {
  if (!validator) return value;
  const validate = validator();
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
function queryObject(ctx: AppContext, schema: TObject): Record<string, unknown> {
  const query = { ...ctx.query } as Record<string, unknown>;
  const errors: FieldError[] = [];
  for (const [name, value] of Object.entries(query)) {
    const prop = schema.properties[name] as { type?: string } | undefined;
    // An unknown name is the schema's to refuse (additionalProperties: `unknown_field`, named), repeated or not.
    if (!prop) continue;
    if (Array.isArray(value) && prop.type !== 'array') {
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

/**
 * Every router matches paths case-sensitively: `/API/V1/...` names no route. (The router's
 * default folds case, while the areas that guard routes are chosen by exact path.)
 */
export const ROUTER_OPTIONS = { sensitive: true } as const;

function compose(def: RouteDef, isPublic: boolean) {
  const params = validator(def.params, true);
  // A route without a query schema takes no parameters: an unknown one is 400, as an unknown body field is (issue 40, I15).
  const querySchema = (def.query ?? NoQuery) as TObject;
  const query = validator(querySchema, true);
  const body = def.body ? validator(def.body, false) : null;
  const checkReply = SHAPE_CHECKS ? responseCheck(def) : null;
  return async (ctx: AppContext, pathParams: Record<string, string>): Promise<void> => {
    // Public routes have none (their handlers never read it); every other route runs after authentication.
    const principal = ctx.state.principal as Principal;
    ctx.state.operation = def.operationId;
    if (!principal && !isPublic) throw new AppError(401, 'unauthorized', 'authentication required');
    if (!isPublic) for (const p of def.permissions) if (!principal.permissions.has(p)) throw missingPermission(p);
    if (!isPublic && def.userToken && (principal.kind !== 'user' || !principal.memberId)) {
      throw new AppError(403, 'user_token_required', 'this action is taken by a person: use a user-scoped (ut_) token');
    }
    const querystring = ctx.querystring;
    const lineErrors = requestLineErrors(ctx.path, querystring);
    if (lineErrors.length) throw validationError(lineErrors);
    const input = {
      params: pathParams,
      // No query on a route that declares none (most GETs by id): the empty object NoQuery's check would pass
      // unchanged (no property, so no default and nothing to coerce), without parsing and validating it (issue 48).
      query: querystring === '' && !def.query ? {} : check(query, queryObject(ctx, querySchema)),
      body: undefined as unknown,
      principal, deps: ctx.deps, ctx,
    };
    const upload = def.acceptsUpload && isMultipartRequest(ctx) ? await readUpload(ctx, def.acceptsUpload.maxBytes) : undefined;
    const csv = !upload && def.acceptsCsv && isCsvRequest(ctx) ? await readCsvBody(ctx) : undefined;
    // A request without a body (every GET, nearly) has nothing to read: no promise to wait for (issue 48).
    const raw = csv === undefined && !upload && hasBody(ctx) ? await readJsonBody(ctx) : undefined;
    if (upload) Object.assign(input, { upload, body: {} });
    else if (csv !== undefined) Object.assign(input, { csv, body: {} });
    else if (body) {
      input.body = check(body, raw === undefined ? {} : raw);
      const nul = nulCharacterErrors(input.body);
      if (nul.length) throw validationError(nul);
    }
    else if (raw !== undefined && !(raw && typeof raw === 'object' && Object.keys(raw).length === 0)) {
      throw validationError([{ field: '', code: 'unexpected_body', message: 'this endpoint takes no body' }]);
    }
    if (!isPublic) for (const p of def.extraPermissions?.(input as never) ?? []) if (!principal.permissions.has(p)) throw missingPermission(p);
    def.refuseRequest?.(input as never);
    // A path id that is not even well-formed names nothing: 404, as for an unknown one.
    if (params && !params()(pathParams)) throw new AppError(404, 'not_found', 'resource not found');

    const stored = (reply: Reply): StoredResponse => {
      checkReply?.(reply);
      return { status: reply.status, headers: reply.headers ?? {}, body: reply.body };
    };
    const execute = async (): Promise<StoredResponse> => stored(await def.handler(input as never));
    const key = def.method === 'POST' && !isPublic ? ctx.get('Idempotency-Key') : '';
    let reply: StoredResponse & { replayed?: boolean };
    if (key) {
      checkIdempotencyKey(key);
      const canReplay = def.stillExists && ((body: unknown) => def.stillExists!({ deps: ctx.deps, principal, body }));
      reply = await runIdempotent(ctx.deps.sql, ctx.deps.secrets, { orgId: principal.orgId, keyId: principal.keyId }, key,
        fingerprint(ctx.deps.secrets, def.method, ctx.path, upload ? { upload: uploadFingerprint(upload) } : csv === undefined ? input.body : { csv }), execute, canReplay);
      if (reply.replayed) ctx.set('Idempotent-Replayed', 'true');
    } else {
      // The handler's answer without a function of its own around it: one promise fewer per request (issue 48).
      reply = stored(await def.handler(input as never));
    }
    ctx.status = reply.status;
    for (const [name, value] of Object.entries(reply.headers)) ctx.set(name, value);
    if (reply.body !== undefined) ctx.body = reply.body;
  };
}

/** What an Idempotency-Key remembers of an upload: its name, fields and a digest of its bytes. */
function uploadFingerprint(upload: Upload): Record<string, unknown> {
  return { name: upload.fileName, type: upload.contentType, fields: upload.fields, sha256: createHash('sha256').update(upload.bytes).digest('hex') };
}

/**
 * A route ready for the route table (api/route-table.ts): its full path, its method and the handler made from its
 * definition, which takes the path's parameters (decoded) from the table.
 */
export interface CompiledRoute { path: string; method: Method; handler: (ctx: AppContext, params: Record<string, string>) => Promise<void> }

/** Makes each of a family's routes into a handler (its validators compiled once, on its first request), with its full path. */
export function compileFamily(family: RouteFamily): CompiledRoute[] {
  return family.routes.map((def) => ({ path: family.base + def.path, method: def.method, handler: compose(def, family.public === true) }));
}
