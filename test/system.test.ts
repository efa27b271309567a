import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { call, client, freshDatabase, startTestService, type TestService } from './helpers.ts';
import { startTemporalDevServer } from '../src/infra/temporal-dev-server.ts';
import { SEARCH_ATTRIBUTES } from '../src/temporal/index.ts';
import { PERMISSIONS } from '../src/schemas/permissions.ts';
import { EVENT_TYPES } from '../src/schemas/events.ts';

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
      const data = type.startsWith('widget.') ? 'WidgetEventData' : type.startsWith('conversation.') ? 'ConversationEventData'
        : type.startsWith('campaign_call.') ? 'CampaignCallEventData' : 'CampaignEventData';
      expect(body.properties.data, type).toEqual({ $ref: `#/components/schemas/${data}` });
    }
    expect(doc.components.schemas.CampaignEventData.properties).toEqual({ campaign: { $ref: '#/components/schemas/Campaign' } });
    expect(doc.components.schemas.CampaignCallEventData.properties).toEqual({ call: { $ref: '#/components/schemas/CampaignCall' } });
    expect(doc.components.schemas.WidgetEventData.properties).toEqual({ agent: { $ref: '#/components/schemas/Agent' }, widget: { $ref: '#/components/schemas/Widget' } });
    expect(doc.components.schemas.ConversationEventData.properties).toEqual({ conversation: { $ref: '#/components/schemas/Conversation' } });
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
