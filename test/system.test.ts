import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { call, client, freshDatabase, startTestService, type TestService } from './helpers.ts';
import { startTemporalDevServer } from '../src/infra/temporal-dev-server.ts';
import { SEARCH_ATTRIBUTES } from '../src/temporal/index.ts';
import { PERMISSIONS } from '../src/schemas/permissions.ts';
import { EVENT_TYPES } from '../src/schemas/events.ts';
import openapiTS, { astToString } from 'openapi-typescript';

let svc: TestService;
beforeAll(async () => { svc = await startTestService({}, { worker: false }); });
afterAll(async () => { await svc?.stop(); });

describe('health', () => {
  it('answers /healthz and /readyz without a token', async () => {
    const health = await call(svc.url, 'GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.headers.get('x-request-id')).toBeTruthy();
    const ready = await call(svc.url, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { postgres: 'ok', temporal: 'ok' } });
  });

  it('answers /readyz 503 while Temporal or PostgreSQL is unreachable', async () => {
    const temporal = await startTemporalDevServer({
      cliPath: inject('cliPath'), uiPort: false,
      searchAttributes: Object.fromEntries(Object.keys(SEARCH_ATTRIBUTES).map((k) => [k, 'Keyword' as const])),
    });
    const db = await freshDatabase();
    const own = await startTestService({}, { worker: false, databaseUrl: db.url, temporalAddress: temporal.address });
    try {
      expect((await call(own.url, 'GET', '/readyz')).status).toBe(200);
      await temporal.stop();
      const noTemporal = await call(own.url, 'GET', '/readyz');
      expect(noTemporal.status).toBe(503);
      expect(noTemporal.body.checks).toEqual({ postgres: 'ok', temporal: 'unreachable' });
      expect((await call(own.url, 'GET', '/healthz')).status).toBe(200);
      await db.drop();
      const neither = await call(own.url, 'GET', '/readyz');
      expect(neither.status).toBe(503);
      expect(neither.body.checks).toEqual({ postgres: 'unreachable', temporal: 'unreachable' });
    } finally {
      await own.stop().catch(() => {});
      await temporal.stop();
    }
  });
});

describe('OpenAPI and docs', () => {
  it('publishes an OpenAPI 3.1 document generated from the route schemas', async () => {
    const res = await call(svc.url, 'GET', '/api/v1/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toBe('3.1.0');
    const agents = doc.paths['/api/v1/rest/agents'];
    expect(Object.keys(agents).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/api/v1/rest/agents/{id}']).sort()).toEqual(['delete', 'get', 'patch']);
    expect(agents.post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/AgentCreate' });
    const create = doc.components.schemas.AgentCreate;
    expect(create.required).toEqual(['name']);
    expect(create.additionalProperties).toBe(false);
    expect(create.properties.name).toMatchObject({ type: 'string', minLength: 1, maxLength: 200 });
    const patch = doc.components.schemas.AgentPatch;
    expect(patch.properties.status.enum).toEqual(['paused', 'active']);
    const list = agents.get.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(list).toMatchObject({ in: 'query', required: false, schema: { minimum: 1, maximum: 100, default: 50 } });
    expect(doc.components.schemas.ApiKeyCreate.properties.permissions.items.enum).toEqual([...PERMISSIONS]);
    expect(doc.components.schemas.Problem.required).toEqual(expect.arrayContaining(['type', 'title', 'status', 'code', 'detail', 'request_id']));
    expect(agents.post.responses['400'].content['application/problem+json'].schema).toEqual({ $ref: '#/components/schemas/Problem' });
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    // Every $ref resolves.
    const refs = JSON.stringify(doc).match(/#\/components\/schemas\/[A-Za-z]+/g) ?? [];
    for (const ref of new Set(refs)) expect(doc.components.schemas[ref.split('/').pop()!], ref).toBeDefined();
  });

  it('publishes every event type under webhooks, with the schema of the body its deliveries carry', async () => {
    const doc = (await call(svc.url, 'GET', '/api/v1/openapi.json')).body;
    expect(Object.keys(doc.webhooks)).toEqual([...EVENT_TYPES]);
    for (const type of EVENT_TYPES) {
      const body = doc.webhooks[type].post.requestBody.content['application/json'].schema;
      expect(body.required, type).toEqual(['id', 'type', 'created_at', 'data']);
      expect(body.properties.type, type).toMatchObject({ const: type });
      const data = type.startsWith('widget.') ? 'WidgetEventData'
        : type === 'conversation.assigned' || type === 'conversation.released' ? 'AssignmentEventData'
        : type === 'conversation.feedback' ? 'FeedbackEventData'
        : type.startsWith('conversation.') ? 'ConversationEventData'
        : type.startsWith('campaign_call.') ? 'CampaignCallEventData' : type.startsWith('contact.') ? 'ContactErasedEventData' : 'CampaignEventData';
      expect(body.properties.data, type).toEqual({ $ref: `#/components/schemas/${data}` });
    }
    expect(doc.components.schemas.CampaignEventData.properties).toEqual({ campaign: { $ref: '#/components/schemas/Campaign' } });
    expect(doc.components.schemas.CampaignCallEventData.properties).toEqual({ call: { $ref: '#/components/schemas/CampaignCall' } });
    expect(doc.components.schemas.WidgetEventData.properties).toEqual({ agent: { $ref: '#/components/schemas/Agent' }, widget: { $ref: '#/components/schemas/Widget' } });
    expect(doc.components.schemas.ConversationEventData.properties).toEqual({ conversation: { $ref: '#/components/schemas/Conversation' } });
    expect(doc.components.schemas.AssignmentEventData.properties).toEqual({
      conversation: { $ref: '#/components/schemas/Conversation' }, assignment: { $ref: '#/components/schemas/Assignment' },
    });
  });

  it('serves a browsable reference from local assets', async () => {
    const page = await call(svc.url, 'GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const assets = [...page.text.matchAll(/(?:src|href)="(\/docs\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(3);
    expect(page.text).not.toMatch(/https?:\/\/(?!localhost)/);
    for (const asset of assets) {
      const res = await call(svc.url, 'GET', asset);
      expect(res.status, asset).toBe(200);
      expect(res.text.length, asset).toBeGreaterThan(10);
    }
    expect((await call(svc.url, 'GET', '/docs/assets/package.json')).status).toBe(404);
  });

  it('is reachable without a token, while the rest of /api/v1 is not', async () => {
    expect((await client(svc.url).get('/api/v1/openapi.json')).status).toBe(200);
    expect((await client(svc.url).get('/api/v1/rest/agents')).status).toBe(401);
  });
});

describe('OpenAPI through independent clients (real-clients D7, D8, D9)', () => {
  it('declares the non-JSON bodies by their media type: the screenshot as image/png, the live stream as text/event-stream', async () => {
    const doc = (await call(svc.url, 'GET', '/api/v1/openapi.json')).body;
    const screenshot = doc.paths['/api/v1/rest/simulations/{id}/screenshot'].get.responses['200'].content;
    expect(Object.keys(screenshot)).toEqual(['image/png']);
    const stream = doc.paths['/api/v1/rest/conversations/live/stream'].get.responses['200'].content;
    expect(Object.keys(stream)).toEqual(['text/event-stream']);
    // openapi-typescript then types them as what they are, not as JSON objects.
    const types = astToString(await openapiTS(doc as never));
    expect(types).toMatch(/"image\/png": string;/);
    expect(types).toMatch(/"text\/event-stream": string;/);
  });

  it('gives every error response the Problem body, the route\'s own 409s included', async () => {
    const doc = (await call(svc.url, 'GET', '/api/v1/openapi.json')).body;
    const problem = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };
    expect(doc.paths['/api/v1/rest/sip-trunks/{id}'].delete.responses['409'].content).toEqual(problem);
    expect(doc.paths['/api/v1/rest/email-inboxes/{id}'].patch.responses['409'].content).toEqual(problem);
    // A route's own description of a status is kept (not replaced by the generic one).
    expect(doc.paths['/api/v1/rest/sip-trunks/{id}'].delete.responses['409'].description).toMatch(/sip_trunk_in_use/);
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        for (const [status, response] of Object.entries<any>(op.responses)) {
          if (Number(status) >= 400) expect(response.content, `${method} ${path} ${status}`).toEqual(problem);
        }
      }
    }
  });

  it('states request-body defaults in descriptions, so generated request types keep optional fields optional', async () => {
    const doc = (await call(svc.url, 'GET', '/api/v1/openapi.json')).body;
    // No `default` anywhere a request body reaches (following $refs).
    const seen = new Set<string>();
    const walk = (node: unknown, where: string): void => {
      if (!node || typeof node !== 'object') return;
      const ref = (node as { $ref?: string }).$ref;
      if (ref) {
        if (seen.has(ref)) return;
        seen.add(ref);
        walk(doc.components.schemas[ref.split('/').pop()!], ref);
        return;
      }
      expect('default' in (node as object), where).toBe(false);
      for (const [key, value] of Object.entries(node)) walk(value, `${where}.${key}`);
    };
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        for (const media of Object.values<any>(op.requestBody?.content ?? {})) walk(media.schema, `${method} ${path}`);
      }
    }
    const ref = doc.paths['/api/v1/rest/simulations'].post.requestBody.content['application/json'].schema.$ref as string;
    const types = astToString(await openapiTS(doc as never));
    const start = types.indexOf(`${ref.split('/').pop()}: {`);
    expect(start).toBeGreaterThan(0);
    const body = types.slice(start, types.indexOf('\n        };', start));
    for (const field of ['max_turns', 'tool_mode', 'surface', 'mode']) expect(body, field).toMatch(new RegExp(`${field}\\?:`));
  });
});

describe('the organization (real-clients D10)', () => {
  it('GET /organization names the calling key\'s organization, its settings and the Temporal search for its runs', async () => {
    const { token, orgId } = await svc.newOrg();
    const res = await client(svc.url, token).get('/api/v1/rest/organization');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      id: orgId,
      settings: { rate_limit_per_minute: expect.any(Number), public_rate_limit_per_minute: expect.any(Number) },
      temporal: { search_attribute: 'OrganizationId', visibility_query: `OrganizationId = "${orgId}"` },
    });
    expect(Date.parse(res.body.created_at)).not.toBeNaN();
    // Another organization's key reads its own.
    const other = await svc.newOrg();
    expect((await client(svc.url, other.token).get('/api/v1/rest/organization')).body.id).toBe(other.orgId);
    // org.read is needed.
    const scoped = await client(svc.url, token).post('/api/v1/rest/api-keys', { name: 'agents only', permissions: ['agents.read'] });
    expect(scoped.status, scoped.text).toBe(201);
    const refused = await client(svc.url, scoped.body.token).get('/api/v1/rest/organization');
    expect(refused.status).toBe(403);
  });
});
