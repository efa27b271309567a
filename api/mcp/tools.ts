import type { TSchema } from '@sinclair/typebox';
import type { FieldError } from '../../src/validation.ts';
import type { Method, RouteDef, RouteFamily } from '../routing.ts';

type Json = Record<string, unknown>;

/** How a tool's arguments become the REST request it mirrors. */
export interface RouteTool {
  /** The route's `operationId`: verb_noun, the specification's tool names where it gives them. */
  name: string;
  summary: string;
  description: string;
  method: Method;
  /** Koa path template with the family's base, e.g. `/api/v1/rest/agents/:id/transfer-rules/:ruleId`. */
  path: string;
  permissions: readonly string[];
  /** Path parameters and the argument naming each (`:id` under `/agents` is `agent_id`). */
  pathIds: { param: string; arg: string }[];
  queryKeys: ReadonlySet<string>;
  /** Body properties spread among the arguments; `'whole'` when the body is not an object schema (sent as `body`); null without a body. */
  bodyKeys: ReadonlySet<string> | 'whole' | null;
  inputSchema: Json;
  annotations: { readOnlyHint: boolean; destructiveHint?: boolean; idempotentHint?: boolean };
}

/** A JSON copy of a schema without TypeBox's symbols and without `$id` (names for OpenAPI components, not for tools). */
export function plainSchema(schema: TSchema): Json {
  return JSON.parse(JSON.stringify(schema), (key, value: unknown) => {
    if (value && typeof value === 'object' && !Array.isArray(value) && typeof (value as Json).$id === 'string') {
      const { $id: _omit, ...rest } = value as Json;
      return rest;
    }
    return value;
  }) as Json;
}

function singular(segment: string): string {
  const word = segment.replace(/-/g, '_');
  if (/ies$/.test(word)) return `${word.slice(0, -3)}y`;
  if (/(x|ch|sh|ss)es$/.test(word)) return word.slice(0, -2);
  return word.replace(/s$/, '');
}

/**
 * The argument naming a path parameter, as the contract wants: `:id` takes its collection's
 * name (`/agents/:id` → `agent_id`, `/api-keys/:id` → `api_key_id`); `:ruleId` → `rule_id`.
 */
export function pathIdName(path: string, param: string): string {
  if (param !== 'id') return param.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  const segments = path.split('/');
  const at = segments.indexOf(':id');
  const collection = at > 0 ? segments[at - 1]! : '';
  if (!collection || collection.startsWith(':')) return 'id';
  return `${singular(collection)}_id`;
}

function objectParts(schema: TSchema | undefined): { properties: Record<string, TSchema>; required: string[] } | null {
  const s = schema as unknown as { type?: unknown; properties?: Record<string, TSchema>; required?: string[] } | undefined;
  if (!s || s.type !== 'object' || !s.properties) return null;
  return { properties: s.properties, required: s.required ?? [] };
}

function annotationsFor(method: Method): RouteTool['annotations'] {
  // MCP reads destructiveHint and idempotentHint only when readOnlyHint is false.
  if (method === 'GET') return { readOnlyHint: true };
  return { readOnlyHint: false, destructiveHint: method === 'DELETE', idempotentHint: method === 'PUT' || method === 'DELETE' };
}

/** One tool from one route: the path ids, query parameters and body of the route's own schemas, merged. */
export function toolFromRoute(def: RouteDef, base: string): RouteTool {
  const path = base + def.path;
  const properties: Json = {};
  const required: string[] = [];
  const add = (arg: string, schema: TSchema, isRequired: boolean) => {
    if (arg in properties) throw new Error(`MCP tool ${def.operationId}: the argument ${arg} would come from two places`);
    const plain = plainSchema(schema);
    properties[arg] = plain;
    if (isRequired && !('default' in plain)) required.push(arg);
  };

  const pathIds: RouteTool['pathIds'] = [];
  const params = objectParts(def.params);
  for (const param of [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!)) {
    const arg = pathIdName(path, param);
    pathIds.push({ param, arg });
    add(arg, params?.properties[param] ?? ({ type: 'string' } as unknown as TSchema), true);
  }
  const query = objectParts(def.query);
  for (const [name, schema] of Object.entries(query?.properties ?? {})) add(name, schema, query!.required.includes(name));
  let bodyKeys: RouteTool['bodyKeys'] = null;
  if (def.body) {
    const body = objectParts(def.body);
    if (body) {
      for (const [name, schema] of Object.entries(body.properties)) add(name, schema, body.required.includes(name));
      bodyKeys = new Set(Object.keys(body.properties));
    } else {
      add('body', def.body, true);
      bodyKeys = 'whole';
    }
  }
  const bodyNote = (def.body as { description?: string } | undefined)?.description;
  return {
    name: def.operationId,
    summary: def.summary,
    description: [def.summary + '.', def.description, bodyNote].filter(Boolean).join(' '),
    method: def.method,
    path,
    permissions: def.permissions,
    pathIds,
    queryKeys: new Set(Object.keys(query?.properties ?? {})),
    bodyKeys,
    inputSchema: { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false },
    annotations: annotationsFor(def.method),
  };
}

/** The visitor endpoints: no token, so no principal to call them as. */
const isPublicFamily = (family: RouteFamily): boolean => family.public === true || family.base.startsWith('/api/v1/public');

/**
 * Every operation that takes a token and answers once becomes a tool. Public (visitor) endpoints do
 * not, nor event streams (`eventStream`): a call has one result, and nothing could ever read or end
 * the stream it would open (issue 40, D21).
 */
export function buildRouteTools(families: RouteFamily[]): Map<string, RouteTool> {
  const tools = new Map<string, RouteTool>();
  for (const family of families) {
    if (isPublicFamily(family)) continue;
    for (const def of family.routes) {
      if (def.eventStream) continue;
      if (tools.has(def.operationId)) throw new Error(`MCP tool ${def.operationId} is defined twice`);
      tools.set(def.operationId, toolFromRoute(def, family.base));
    }
  }
  return tools;
}

export interface ToolRequest { method: Method; url: string; body?: unknown }

/**
 * The REST request a call makes. Path ids go into the path, query parameters into the query
 * string, the rest into the body, where the route's own validation judges them; an argument the
 * route cannot take at all is refused here, as REST would refuse an unknown field.
 */
export function requestForCall(tool: RouteTool, args: Json): ToolRequest | FieldError[] {
  const errors: FieldError[] = [];
  const rest: Json = { ...args };
  let url = tool.path;
  for (const { param, arg } of tool.pathIds) {
    const value = rest[arg];
    delete rest[arg];
    if (typeof value !== 'string' && typeof value !== 'number') {
      errors.push(value === undefined
        ? { field: arg, code: 'required', message: `${arg} is required` }
        : { field: arg, code: 'invalid_type', message: `${arg} must be of type string` });
      continue;
    }
    // URL parsing resolves dot segments (`/knowledge-bases/../agents/x` is `/agents/x`), and an empty
    // segment can reach another route: none of them is an id, and none may change what is called.
    if (['', '.', '..'].includes(String(value))) {
      errors.push({ field: arg, code: 'invalid_value', message: `${arg} must name a resource` });
      continue;
    }
    url = url.replace(new RegExp(`:${param}(?=/|$)`), encodeURIComponent(String(value)));
  }
  const search = new URLSearchParams();
  for (const key of tool.queryKeys) {
    const value = rest[key];
    delete rest[key];
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) search.append(key, typeof item === 'object' ? JSON.stringify(item) : String(item));
  }
  let body: unknown;
  if (tool.bodyKeys instanceof Set) {
    body = rest; // unknown fields included: the body schema names them
  } else {
    if (tool.bodyKeys === 'whole') {
      body = rest.body;
      delete rest.body;
    }
    for (const key of Object.keys(rest)) errors.push({ field: key, code: 'unknown_field', message: `${key} is not a known field` });
  }
  if (errors.length) return errors;
  const qs = search.toString();
  return { method: tool.method, url: qs ? `${url}?${qs}` : url, ...(tool.bodyKeys ? { body: body ?? {} } : {}) };
}
