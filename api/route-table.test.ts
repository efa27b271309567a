import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeTable } from './route-table.ts';
import { route, type Method, type RouteFamily } from './routing.ts';

const PREFIX = '/api/v1/public';
const Taken = Type.Object({ route: Type.String(), params: Type.Record(Type.String(), Type.String()) });

/** A route answering which route it is and the parameters its handler got. */
const taking = (method: Method, path: string, name: string) => route({
  method, path, operationId: name, summary: name, permissions: [],
  responses: { 200: { description: 'the route that took the request', schema: Taken } },
  async handler({ params }) { return { status: 200, body: { route: name, params: params as Record<string, string> } }; },
});

// Public routes: no principal needed. A route with a parameter first comes first, so it is a candidate of every path of its length.
const family: RouteFamily = {
  base: PREFIX, public: true, tag: 'Test', description: 'routes of the table under test',
  routes: [
    taking('DELETE', '/:kind/:id', 'delete-any'),
    taking('GET', '/things/:id', 'get-thing'),
    taking('PATCH', '/things/:id', 'patch-thing'),
    taking('GET', '/things/search', 'search-things'),
    taking('GET', '/things/:id/parts/:part', 'get-part'),
  ],
};

let server: Server;
let port: number;

beforeAll(async () => {
  const app = new Koa();
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      // As the front frame does, an AppError becomes the answer (Koa's own would drop the headers).
      ctx.status = (err as { status?: number }).status ?? 500;
      ctx.body = { code: (err as { code?: string }).code };
    }
    // What the audit frame reads around the table, a refused request's too: the taken route's parameters on the context.
    if (ctx.params) ctx.set('X-Params', JSON.stringify(ctx.params));
  });
  app.use(routeTable([family], PREFIX));
  // What follows the table in its area's chain: asked only for a path no route matches.
  app.use(async (ctx) => { ctx.set('X-Passed-On', 'yes'); });
  server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A request through node:http (fetch refuses TRACE and sends paths normalized). */
function send(method: string, path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path: PREFIX + path }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => {
        let body: unknown;
        try { body = JSON.parse(text); } catch { body = undefined; }
        resolve({ status: res.statusCode!, headers: res.headers, text, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('routeTable', () => {
  it('hands the first route matching path and method its parameters, percent-decoded, and sets them on the context', async () => {
    const res = await send('GET', '/things/a%20b');
    expect(res.body).toEqual({ route: 'get-thing', params: { id: 'a b' } });
    expect(JSON.parse(res.headers['x-params'] as string)).toEqual({ id: 'a b' });
    expect((await send('GET', '/things/a%2Fb/')).body).toEqual({ route: 'get-thing', params: { id: 'a/b' } });
    // The earlier route takes a path both match.
    expect((await send('GET', '/things/search')).body).toEqual({ route: 'get-thing', params: { id: 'search' } });
    expect((await send('DELETE', '/things/x')).body).toEqual({ route: 'delete-any', params: { kind: 'things', id: 'x' } });
    expect((await send('GET', '/things/x/parts/y%2Fz%C3%A9')).body).toEqual({ route: 'get-part', params: { id: 'x', part: 'y/zé' } });
    expect((await send('PATCH', '/things/%41')).body).toEqual({ route: 'patch-thing', params: { id: 'A' } });
  });

  it('keeps a parameter whose percent-encoding is malformed as it came; the route then refuses the path (400)', async () => {
    for (const [path, params] of [['/things/%E0%A4%A', { id: '%E0%A4%A' }], ['/things/100%', { id: '100%' }], ['/things/x/parts/%FF', { id: 'x', part: '%FF' }]] as const) {
      const res = await send('GET', path);
      expect([res.status, res.body]).toEqual([400, { code: 'validation_error' }]);
      expect(JSON.parse(res.headers['x-params'] as string)).toEqual(params);
    }
  });

  it('answers HEAD with the GET route', async () => {
    const res = await send('HEAD', '/things/x');
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(JSON.parse(res.headers['x-params'] as string)).toEqual({ id: 'x' });
  });

  it('answers 405 with Allow naming the methods of every route matching the path, in their order, HEAD before GET', async () => {
    const res = await send('PUT', '/things/x');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('DELETE, HEAD, GET, PATCH');
    expect(res.headers['x-passed-on']).toBeUndefined();
    expect(res.headers['x-params']).toBeUndefined();
    // Case matters: only the route with a parameter there matches.
    const upper = await send('GET', '/Things/x');
    expect([upper.status, upper.headers.allow]).toEqual([405, 'DELETE']);
    expect((await send('POST', '/things/x/parts/y')).headers.allow).toBe('HEAD, GET');
  });

  it('answers OPTIONS with the methods, and 501 for a method no area answers', async () => {
    const options = await send('OPTIONS', '/things/x/');
    expect([options.status, options.headers.allow, options.text]).toEqual([200, 'DELETE, HEAD, GET, PATCH', '']);
    const trace = await send('TRACE', '/things/x');
    expect([trace.status, trace.headers.allow]).toEqual([501, 'DELETE, HEAD, GET, PATCH']);
  });

  it('passes on a path no route matches: 404 unless what follows answers, 501 with an empty Allow for an unknown method', async () => {
    for (const path of ['/things/x/y', '/things//', '/things/x//', '/nothing', '/a/b/c/d/e/f', '']) {
      const res = await send('GET', path);
      expect([path, res.status, res.headers['x-passed-on'], res.headers.allow]).toEqual([path, 404, 'yes', undefined]);
    }
    const options = await send('OPTIONS', '/things/x/y');
    expect([options.status, options.headers.allow]).toEqual([404, undefined]);
    const trace = await send('TRACE', '/things/x/y');
    expect([trace.status, trace.headers.allow, trace.headers['x-passed-on']]).toEqual([501, '', 'yes']);
  });

  it('takes fixed-segment paths only, and no route of a path it passes on', () => {
    const one = (path: string): RouteFamily => ({ ...family, routes: [taking('GET', path, 'r')] });
    for (const path of ['/things/:id?', '/things/*rest', '/things/{:id}', '/things/:id.json', '/things//x', '/things/a:b'])
      expect(() => routeTable([one(path)], PREFIX), path).toThrow();
    expect(() => routeTable([one('/cards/:id')], PREFIX, [`${PREFIX}/cards`])).toThrow(/could serve/);
    expect(() => routeTable([one('/:kind/:id')], PREFIX, [`${PREFIX}/cards`])).toThrow(/could serve/);
    expect(() => routeTable([one('/things/:id')], PREFIX, [`${PREFIX}/cards`])).not.toThrow();
  });
});
