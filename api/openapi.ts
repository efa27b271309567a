import type { TSchema } from '@sinclair/typebox';
import { ProblemSchema } from '../src/schemas/common.ts';
import { EVENT_TYPES, EventSchema } from '../src/schemas/events.ts';
import type { RouteDef, RouteFamily } from './routing.ts';

type Json = Record<string, unknown>;

/** TypeBox marks schemas with symbol keys; JSON has none, and `$id` becomes a component name. */
function plain(schema: TSchema, components: Json): Json {
  const copy = JSON.parse(JSON.stringify(schema)) as Json;
  return hoist(copy, components);
}

function hoist(node: Json, components: Json): Json {
  for (const [key, value] of Object.entries(node)) {
    if (Array.isArray(value)) node[key] = value.map((v) => (v && typeof v === 'object' ? hoist(v as Json, components) : v));
    else if (value && typeof value === 'object') node[key] = hoist(value as Json, components);
  }
  if (typeof node.$id === 'string') {
    const name = node.$id;
    const { $id: _omit, ...rest } = node;
    components[name] = rest;
    return { $ref: `#/components/schemas/${name}` };
  }
  return node;
}

/**
 * Moves each `default` of the schemas a request body reaches (components included) into its
 * `description`: generators such as openapi-typescript read `default` as "always present" and
 * would make optional fields required in the request types (real-clients D9). The service still
 * applies the defaults; query parameters keep theirs (they are typed as optional either way).
 */
function stateRequestDefaults(paths: Record<string, Json>, components: Json): void {
  const done = new Set<string>();
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    const ref = (node as Json).$ref;
    if (typeof ref === 'string') {
      const name = ref.split('/').pop()!;
      if (done.has(name) || !components[name]) return;
      done.add(name);
      visit(components[name]);
      statedDefaults(components[name] as Json);
      return;
    }
    for (const value of Object.values(node)) visit(value);
  };
  for (const item of Object.values(paths)) {
    for (const op of Object.values(item) as Json[]) {
      const content = (op.requestBody as { content?: Record<string, { schema: Json }> } | undefined)?.content ?? {};
      for (const media of Object.values(content)) { visit(media.schema); statedDefaults(media.schema); }
    }
  }
}

function statedDefaults(node: Json): Json {
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) value.forEach((v) => { if (v && typeof v === 'object') statedDefaults(v as Json); });
    else if (value && typeof value === 'object') statedDefaults(value as Json);
  }
  if ('default' in node) {
    const { default: value, ...rest } = node;
    const description = typeof rest.description === 'string' ? rest.description : '';
    for (const key of Object.keys(node)) delete node[key];
    Object.assign(node, rest, /default/i.test(description) ? {} : { description: `${description}${description ? ' ' : ''}(default \`${JSON.stringify(value)}\`)`.trim() });
  }
  return node;
}

const problemResponse = (description: string) => ({
  description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

function parameters(def: RouteDef, components: Json): Json[] {
  const out: Json[] = [];
  for (const [where, schema] of [['path', def.params], ['query', def.query]] as const) {
    if (!schema) continue;
    const props = (schema as unknown as { properties: Record<string, TSchema> }).properties;
    const required = new Set((schema as unknown as { required?: string[] }).required ?? []);
    for (const [name, prop] of Object.entries(props)) {
      const s = plain(prop, components);
      out.push({ name, in: where, required: where === 'path' || (required.has(name) && !('default' in s)), schema: s, ...(s.description ? { description: s.description } : {}) });
    }
  }
  return out;
}

function operation(def: RouteDef, family: RouteFamily, components: Json): Json {
  const responses: Json = {};
  for (const [status, r] of Object.entries(def.responses)) {
    // A body that is not JSON names its media type: on the response (`mediaType`) or on its schema (`contentMediaType`).
    const media = r.mediaType ?? (r.schema as { contentMediaType?: string } | undefined)?.contentMediaType ?? 'application/json';
    // An error the route names (e.g. 409 `sip_trunk_in_use`) has the Problem body every error has.
    if (Number(status) >= 400 && !r.schema) responses[status] = problemResponse(r.description);
    else if (r.schema) responses[status] = { description: r.description, content: { [media]: { schema: plain(r.schema, components) } } };
    else responses[status] = { description: r.description };
  }
  // The errors every route of its kind can answer, unless the route describes that status itself.
  const common: Json = {
    400: problemResponse('Malformed or invalid request (`invalid_json`, `validation_error`)'),
    ...(family.public ? {} : {
      401: problemResponse('No, unknown or revoked token'),
      403: problemResponse(`Permission missing; needs ${def.permissions.join(' and ')}`),
    }),
    ...(def.params ? { 404: problemResponse('No such resource in this organization') } : {}),
    ...(def.body ? { 413: problemResponse('Body over 1 MiB'), 415: problemResponse('Body is not JSON') } : {}),
    ...(def.method === 'POST' && !family.public ? { 409: problemResponse('State conflict, or Idempotency-Key in progress'), 422: problemResponse('Idempotency-Key reused with another body') } : {}),
    429: problemResponse('Rate limit exceeded (see Retry-After)'),
    500: problemResponse('Unexpected error; quote request_id'),
  };
  for (const [status, response] of Object.entries(common)) responses[status] ??= response;
  const params = parameters(def, components);
  if (def.method === 'POST' && !family.public) {
    params.push({ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 },
      description: 'Repeat the request safely: the same key and body within 24 hours replay the first response.' });
  }
  return {
    operationId: def.operationId,
    summary: def.summary,
    ...(def.description ? { description: def.description } : {}),
    tags: [family.tag],
    ...(family.public ? { security: [] } : { 'x-permissions': def.permissions }),
    ...(params.length ? { parameters: params } : {}),
    ...(def.body ? { requestBody: { required: true, content: {
      'application/json': { schema: plain(def.body, components) },
      ...(def.acceptsUpload ? { 'multipart/form-data': { schema: {
        type: 'object', required: ['file'],
        properties: { file: { type: 'string', contentMediaType: 'application/octet-stream', description: def.acceptsUpload.description },
          name: { type: 'string', description: 'The file\'s name, when not the one the part carries' } },
      } } } : {}),
      ...(def.acceptsCsv ? { 'text/csv': { schema: { type: 'string', description: 'A header line naming the columns, then one line per row (RFC 4180)' } } } : {}),
    } } } : {}),
    responses,
  };
}

/**
 * The `webhooks` of OpenAPI 3.1: one entry per event type, the POST a subscribed endpoint receives,
 * with the schema of its body (the same one emitted events are held to in test mode).
 */
function webhooks(components: Json): Json {
  const out: Json = {};
  for (const type of EVENT_TYPES) {
    const schema = EventSchema(type);
    out[type] = {
      post: {
        operationId: `event_${type.replace(/\./g, '_')}`,
        summary: type,
        description: `${schema.description} Signed per Standard Webhooks (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`); retried until a 2xx.`,
        tags: ['Events'],
        requestBody: { required: true, content: { 'application/json': { schema: plain(schema, components) } } },
        responses: { '2XX': { description: 'Received; any other answer is retried' } },
      },
    };
  }
  return out;
}

/** The OpenAPI 3.1 document, made from the same route definitions and schemas that serve requests. */
export function buildOpenApi(families: RouteFamily[], opts: { version: string }): Json {
  const components: Json = {};
  plain(ProblemSchema, components);
  const paths: Record<string, Json> = {};
  for (const family of families) {
    for (const def of family.routes) {
      const path = (family.base + def.path).replace(/:([A-Za-z_]+)/g, '{$1}');
      paths[path] ??= {};
      paths[path][def.method.toLowerCase()] = operation(def, family, components);
    }
  }
  stateRequestDefaults(paths, components);
  // No `jsonSchemaDialect`: the default (OAS 3.1 base: JSON Schema 2020-12 plus the OAS keywords)
  // is what these schemas are, and Swagger UI shows a warning box for any other value (issue 11).
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Management Service API',
      version: opts.version,
      description: 'Create and run AI agents over web chat, phone, SMS, email and campaign calls. Errors are RFC 9457 problem details; see the `Problem` schema.',
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    tags: [
      ...families.map((f) => ({ name: f.tag, description: f.description })).filter((t, i, all) => all.findIndex((o) => o.name === t.name) === i),
      { name: 'Events', description: 'What the service POSTs to subscribed webhook endpoints (see `webhooks`).' },
    ],
    paths,
    webhooks: webhooks(components),
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An org key (`sk_...`) or a user token (`ut_...`)' } },
      schemas: components,
    },
  };
}
