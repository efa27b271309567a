import { request as httpRequest } from 'node:http';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, client, freshDatabase, startTestService, type ApiResponse, type TestService } from './helpers.ts';
import { useApiOnlyService } from './support/api-service.ts';
import { keyWith, newAgent } from './support/orgs.ts';
import { expectFieldError, expectProblem, WELL_FORMED_REQUEST_ID } from './support/problems.ts';

/**
 * Every error row of the contract that the current endpoints (agents, api-keys) can produce,
 * each checked as a complete RFC 9457 problem document.
 */

const REST = '/api/v1/rest';
const MIB = 1024 * 1024;

let svc: TestService;
let admin: { orgId: string; token: string };
let api: ReturnType<typeof client>;

useApiOnlyService((s) => ({ svc, admin, api } = s));

/** A request through node:http, for what fetch cannot send (no Content-Type, chunked bodies). */
function rawRequest(base: string, method: string, path: string, opts: {
  headers?: Record<string, string>; body?: Buffer | string; chunked?: boolean;
} = {}): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, base);
    const headers: Record<string, string> = { ...opts.headers };
    const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
    if (body && !opts.chunked) headers['content-length'] = String(body.length);
    if (body && opts.chunked) headers['transfer-encoding'] = 'chunked';
    const req = httpRequest({ hostname: url.hostname, port: url.port, path: url.pathname + url.search, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try { parsed = text ? JSON.parse(text) : undefined; } catch { /* keep the text */ }
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
        resolve({ status: res.statusCode!, headers: h, body: parsed, text });
      });
      res.on('error', reject);
    });
    // The server may answer (413, 401) before it has read everything: that is not a failure here.
    req.on('error', (err) => { if ((err as NodeJS.ErrnoException).code !== 'EPIPE' && (err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err); });
    if (body && opts.chunked) {
      const size = 64 * 1024;
      for (let i = 0; i < body.length; i += size) req.write(body.subarray(i, i + size));
    } else if (body) {
      req.write(body);
    }
    req.end();
  });
}

function allowOf(res: ApiResponse): string[] {
  return (res.headers.get('allow') ?? '').split(',').map((m) => m.trim().toUpperCase()).filter(Boolean);
}

describe('404 not_found for unknown routes', () => {
  it('answers an unknown route under /api/v1/rest (authenticated) with 404', async () => {
    for (const path of [`${REST}/nope`, `${REST}/agents/${randomUUID()}/nope`, `${REST}`, '/api/v1/nope', '/api/v2/agents']) {
      expectProblem(await api.get(path), 404, 'not_found');
    }
    expectProblem(await api.post(`${REST}/nope`, { name: 'x' }), 404, 'not_found');
  });

  it('answers an unknown route outside /api with 404, no token needed', async () => {
    for (const path of ['/nope', '/', '/agents', '/healthz/extra']) {
      expectProblem(await call(svc.url, 'GET', path), 404, 'not_found');
    }
    expectProblem(await call(svc.url, 'DELETE', '/nope'), 404, 'not_found');
  });
});

describe('405 method_not_allowed with Allow', () => {
  const cases: { method: string; path: () => string; allowed: string[] }[] = [
    { method: 'PUT', path: () => `${REST}/agents`, allowed: ['GET', 'POST'] },
    { method: 'DELETE', path: () => `${REST}/agents`, allowed: ['GET', 'POST'] },
    { method: 'PATCH', path: () => `${REST}/agents`, allowed: ['GET', 'POST'] },
    { method: 'PUT', path: () => `${REST}/agents/${randomUUID()}`, allowed: ['GET', 'PATCH', 'DELETE'] },
    { method: 'POST', path: () => `${REST}/agents/${randomUUID()}`, allowed: ['GET', 'PATCH', 'DELETE'] },
    { method: 'PUT', path: () => `${REST}/api-keys`, allowed: ['GET', 'POST'] },
    { method: 'PATCH', path: () => `${REST}/api-keys/${randomUUID()}`, allowed: ['GET', 'DELETE'] },
  ];
  for (const c of cases) {
    it(`${c.method} ${c.path().replace(/[0-9a-f-]{36}/, ':id')} is 405 listing ${c.allowed.join(', ')}`, async () => {
      const res = await call(svc.url, c.method, c.path(), { token: admin.token, body: c.method === 'DELETE' ? undefined : { name: 'x' } });
      expectProblem(res, 405, 'method_not_allowed');
      const allow = allowOf(res);
      for (const m of c.allowed) expect(allow).toContain(m);
      expect(allow).not.toContain(c.method);
    });
  }
});

describe('405 and 404 for methods the service does not implement at all', () => {
  it('PROPFIND on a known route is 405 with Allow', async () => {
    const res = await rawRequest(svc.url, 'PROPFIND', `${REST}/agents`, { headers: { authorization: `Bearer ${admin.token}` } });
    expectProblem(res, 405, 'method_not_allowed');
    expect(allowOf(res)).toEqual(expect.arrayContaining(['GET', 'POST']));
  });

  it('PROPFIND on an unknown route is 404, as any method on it', async () => {
    expectProblem(await rawRequest(svc.url, 'PROPFIND', '/nope'), 404, 'not_found');
    expectProblem(await rawRequest(svc.url, 'PROPFIND', `${REST}/nope`, { headers: { authorization: `Bearer ${admin.token}` } }), 404, 'not_found');
  });
});

describe('400 invalid_json', () => {
  const texts = ['{', '{"name": "x",}', "{'name': 'x'}", 'nul', '{"name": "x"} trailing', '{"name": "x"}}', '[1, 2', '"unterminated', '{"name": "\\x"}'];
  for (const text of texts) {
    it(`POST /agents with ${JSON.stringify(text)} is 400 invalid_json`, async () => {
      const before = (await api.get(`${REST}/agents`)).body.total;
      expectProblem(await call(svc.url, 'POST', `${REST}/agents`, { token: admin.token, body: text }), 400, 'invalid_json');
      expect((await api.get(`${REST}/agents`)).body.total).toBe(before);
    });
  }

  it('is decided the same with a charset parameter and on PATCH and POST /api-keys', async () => {
    const agent = await newAgent(api, `Agent ${randomUUID().slice(0, 8)}`);
    expectProblem(await call(svc.url, 'POST', `${REST}/agents`, {
      token: admin.token, body: '{"name":', headers: { 'content-type': 'application/json; charset=utf-8' },
    }), 400, 'invalid_json');
    expectProblem(await call(svc.url, 'PATCH', `${REST}/agents/${agent.id}`, { token: admin.token, body: '{"name": }' }), 400, 'invalid_json');
    expectProblem(await call(svc.url, 'POST', `${REST}/api-keys`, { token: admin.token, body: '{"name": "k", "permissions": [' }), 400, 'invalid_json');
    expect((await api.get(`${REST}/agents/${agent.id}`)).body).toEqual(agent);
  });

  // (A lone U+FEFF may be read as a byte order mark, which RFC 8259 lets a parser ignore.)
  it('a body of characters that are not JSON whitespace (U+00A0, U+2028, U+3000) does not parse: 400 invalid_json', async () => {
    const agent = await newAgent(api, `Agent ${randomUUID().slice(0, 8)}`);
    for (const text of ['\u00a0', '\u2028', '\u3000']) {
      const res = await rawRequest(svc.url, 'PATCH', `${REST}/agents/${agent.id}`, {
        headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' }, body: text,
      });
      const label = `U+${text.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
      expect(`body ${label} -> ${res.status}`).toBe(`body ${label} -> 400`);
      expectProblem(res, 400, 'invalid_json');
    }
    expect((await api.get(`${REST}/agents/${agent.id}`)).body).toEqual(agent);
  });
});

describe('400 validation_error with errors[] and field paths', () => {
  const createCases: { title: string; body: unknown; field: string; code: string }[] = [
    { title: 'wrong type', body: { name: 5 }, field: 'name', code: 'invalid_type' },
    { title: 'null for a required string', body: { name: null }, field: 'name', code: 'invalid_type' },
    { title: 'unknown field', body: { name: 'x', foo: 1 }, field: 'foo', code: 'unknown_field' },
    { title: 'read-only field', body: { name: 'x', id: randomUUID() }, field: 'id', code: 'unknown_field' },
    { title: 'unknown field named with digits', body: { name: 'x', 0: true }, field: '0', code: 'unknown_field' },
    { title: 'unknown field with a dot in its name', body: { name: 'x', 'a.b': 1 }, field: 'a.b', code: 'unknown_field' },
    { title: 'missing required', body: {}, field: 'name', code: 'required' },
    { title: 'over maxLength', body: { name: 'a'.repeat(201) }, field: 'name', code: 'too_long' },
    { title: 'under minLength', body: { name: '' }, field: 'name', code: 'too_short' },
    { title: 'whitespace-only name', body: { name: '   ' }, field: 'name', code: 'invalid_format' },
    { title: 'non-http site_url', body: { name: 'x', site_url: 'ftp://example.com/' }, field: 'site_url', code: 'invalid_url' },
    { title: 'relative site_url', body: { name: 'x', site_url: '/just/a/path' }, field: 'site_url', code: 'invalid_url' },
    { title: 'site_url of the wrong type', body: { name: 'x', site_url: ['https://example.com'] }, field: 'site_url', code: 'invalid_type' },
  ];
  for (const c of createCases) {
    it(`POST /agents, ${c.title}: field ${c.field}, code ${c.code}`, async () => {
      const before = (await api.get(`${REST}/agents`)).body.total;
      expectFieldError(await api.post(`${REST}/agents`, c.body), c.field, c.code);
      expect((await api.get(`${REST}/agents`)).body.total).toBe(before);
    });
  }

  it('POST /agents lists every problem at once', async () => {
    const body = expectFieldError(await api.post(`${REST}/agents`, { name: 5, foo: 1, bar: { x: 1 } }), 'name', 'invalid_type');
    const fields = (body.errors as { field: string }[]).map((e) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['name', 'foo', 'bar']));
  });

  it('a body that is not an object is 400 validation_error', async () => {
    for (const body of ['[]', '"text"', '42', 'null', 'true']) {
      expectProblem(await call(svc.url, 'POST', `${REST}/agents`, { token: admin.token, body }), 400, 'validation_error');
    }
  });

  const patchCases: { title: string; body: unknown; field: string; code?: string }[] = [
    { title: 'status outside its enum', body: { status: 'deleted' }, field: 'status', code: 'invalid_value' },
    { title: 'status draft (not settable)', body: { status: 'draft' }, field: 'status', code: 'invalid_value' },
    { title: 'name null (not nullable)', body: { name: null }, field: 'name', code: 'invalid_type' },
    { title: 'persona of the wrong type', body: { persona: 5 }, field: 'persona' },
    { title: 'persona over maxLength', body: { persona: 'p'.repeat(20_001) }, field: 'persona' },
    { title: 'empty voice', body: { voice: '' }, field: 'voice' },
    { title: 'unknown field', body: { foo: 'bar' }, field: 'foo', code: 'unknown_field' },
    { title: 'read-only field', body: { updated_at: new Date().toISOString() }, field: 'updated_at', code: 'unknown_field' },
    { title: 'nested junk', body: { name: { first: 'x' } }, field: 'name', code: 'invalid_type' },
  ];
  for (const c of patchCases) {
    it(`PATCH /agents/:id, ${c.title}: field ${c.field}${c.code ? `, code ${c.code}` : ''}; nothing changes`, async () => {
      const agent = await newAgent(api, `Agent ${randomUUID().slice(0, 8)}`);
      expectFieldError(await api.patch(`${REST}/agents/${agent.id}`, c.body), c.field, c.code);
      expect((await api.get(`${REST}/agents/${agent.id}`)).body).toEqual(agent);
    });
  }

  const keyCases: { title: string; body: unknown; field: string; code: string }[] = [
    { title: 'unknown permission at index 1', body: { name: 'k', permissions: ['agents.read', 'agents.fly'] }, field: 'permissions[1]', code: 'invalid_value' },
    { title: 'missing permissions', body: { name: 'k' }, field: 'permissions', code: 'required' },
    { title: 'permissions not an array', body: { name: 'k', permissions: 'agents.read' }, field: 'permissions', code: 'invalid_type' },
    { title: 'duplicate permissions', body: { name: 'k', permissions: ['agents.read', 'agents.read'] }, field: 'permissions', code: 'duplicate_items' },
    { title: 'bad user_email', body: { name: 'k', permissions: [], user_email: 'not-an-email' }, field: 'user_email', code: 'invalid_email' },
    { title: 'empty name', body: { name: '', permissions: [] }, field: 'name', code: 'too_short' },
    { title: 'unknown field', body: { name: 'k', permissions: [], token: 'sk_mine' }, field: 'token', code: 'unknown_field' },
  ];
  for (const c of keyCases) {
    it(`POST /api-keys, ${c.title}: field ${c.field}, code ${c.code}`, async () => {
      const before = (await api.get(`${REST}/api-keys`)).body.total;
      expectFieldError(await api.post(`${REST}/api-keys`, c.body), c.field, c.code);
      expect((await api.get(`${REST}/api-keys`)).body.total).toBe(before);
    });
  }

  it('a NUL character in a text field is refused with 400 or stored, never a 500', async () => {
    const agent = await newAgent(api, `Agent ${randomUUID().slice(0, 8)}`);
    const responses: [string, string, ApiResponse][] = [
      ['POST /agents {name}', 'name', await api.post(`${REST}/agents`, { name: 'nul\u0000name' })],
      ['PATCH /agents/:id {persona}', 'persona', await api.patch(`${REST}/agents/${agent.id}`, { persona: 'a\u0000b' })],
      ['PATCH /agents/:id {voice}', 'voice', await api.patch(`${REST}/agents/${agent.id}`, { voice: '\u0000' })],
      ['POST /api-keys {name}', 'name', await api.post(`${REST}/api-keys`, { name: 'k\u0000', permissions: [] })],
    ];
    expect(responses.map(([what, , res]) => `${what} -> ${res.status < 500 ? 'not 5xx' : res.status}`))
      .toEqual(responses.map(([what]) => `${what} -> not 5xx`));
    for (const [, field, res] of responses) if (res.status >= 400) expectFieldError(res, field);
  });
});

describe('413 payload_too_large', () => {
  it('refuses a body over 1 MiB', async () => {
    const before = (await api.get(`${REST}/agents`)).body.total;
    const prefix = '{"name": "';
    const text = prefix + 'a'.repeat(MIB + 1 - prefix.length - 2) + '"}';
    expect(Buffer.byteLength(text)).toBe(MIB + 1);
    expectProblem(await api.post(`${REST}/agents`, text), 413, 'payload_too_large');
    expect((await api.get(`${REST}/agents`)).body.total).toBe(before);
  });

  it('reads a body of exactly 1 MiB (then validates it)', async () => {
    const prefix = '{"name": "';
    const text = prefix + 'a'.repeat(MIB - prefix.length - 2) + '"}';
    expect(Buffer.byteLength(text)).toBe(MIB);
    expectFieldError(await api.post(`${REST}/agents`, text), 'name', 'too_long');
  });

  it('refuses a chunked body (no Content-Length) over 1 MiB', async () => {
    const text = `{"name": "x", "persona": "${'p'.repeat(MIB + 100)}"}`;
    const res = await rawRequest(svc.url, 'POST', `${REST}/agents`, {
      headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' }, body: text, chunked: true,
    });
    expectProblem(res, 413, 'payload_too_large');
  });

  it('refuses an oversized PATCH and changes nothing', async () => {
    const agent = await newAgent(api, `Agent ${randomUUID().slice(0, 8)}`);
    const res = await api.patch(`${REST}/agents/${agent.id}`, { persona: 'p'.repeat(MIB + 10) });
    expectProblem(res, 413, 'payload_too_large');
    expect((await api.get(`${REST}/agents/${agent.id}`)).body).toEqual(agent);
  });
});

describe('415 unsupported_media_type', () => {
  for (const type of ['text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x']) {
    it(`POST /agents with a ${type} body is 415`, async () => {
      const before = (await api.get(`${REST}/agents`)).body.total;
      expectProblem(await api.post(`${REST}/agents`, JSON.stringify({ name: 'plain' }), { 'content-type': type }), 415, 'unsupported_media_type');
      expect((await api.get(`${REST}/agents`)).body.total).toBe(before);
    });
  }

  it('decides 415 on the Content-Type before parsing: text/plain invalid JSON is 415', async () => {
    expectProblem(await api.post(`${REST}/agents`, '{not json', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type');
  });

  it('a body without any Content-Type is 415', async () => {
    const res = await rawRequest(svc.url, 'POST', `${REST}/agents`, {
      headers: { authorization: `Bearer ${admin.token}` }, body: JSON.stringify({ name: 'untyped' }),
    });
    expectProblem(res, 415, 'unsupported_media_type');
  });

  it('PATCH with a text/plain body is 415 and changes nothing', async () => {
    const agent = await newAgent(api, `Agent ${randomUUID().slice(0, 8)}`);
    expectProblem(await api.patch(`${REST}/agents/${agent.id}`, JSON.stringify({ name: 'renamed' }), { 'content-type': 'text/plain' }), 415, 'unsupported_media_type');
    expect((await api.get(`${REST}/agents/${agent.id}`)).body).toEqual(agent);
  });
});

describe('400 for bad query parameters', () => {
  const cases: { query: string; field: string; code?: string }[] = [
    { query: 'limit=0', field: 'limit', code: 'out_of_range' },
    { query: 'limit=101', field: 'limit', code: 'out_of_range' },
    { query: 'limit=abc', field: 'limit', code: 'invalid_type' },
    { query: 'limit=1.5', field: 'limit', code: 'invalid_type' },
    { query: 'limit=', field: 'limit' },
    { query: 'limit=-1', field: 'limit', code: 'out_of_range' },
    { query: 'offset=-1', field: 'offset', code: 'out_of_range' },
    { query: 'offset=x', field: 'offset', code: 'invalid_type' },
    { query: 'status=bogus', field: 'status', code: 'invalid_value' },
    { query: 'status=ACTIVE', field: 'status', code: 'invalid_value' },
    { query: 'limit=1&limit=2', field: 'limit' },
    { query: 'status=active&status=paused', field: 'status' },
    { query: 'foo=1', field: 'foo', code: 'unknown_field' },
    // Non-finite numbers: JSON Schema integers are finite.
    { query: 'limit=Infinity', field: 'limit' },
    { query: 'offset=-Infinity', field: 'offset' },
    { query: 'offset=1e400', field: 'offset' },
  ];
  for (const c of cases) {
    it(`GET /agents?${c.query} is 400 on ${c.field}`, async () => {
      expectFieldError(await api.get(`${REST}/agents?${c.query}`), c.field, c.code);
    });
  }

  it('GET /api-keys checks its page parameters the same way', async () => {
    expectFieldError(await api.get(`${REST}/api-keys?limit=0`), 'limit', 'out_of_range');
    expectFieldError(await api.get(`${REST}/api-keys?limit=101`), 'limit', 'out_of_range');
    expectFieldError(await api.get(`${REST}/api-keys?offset=-1`), 'offset', 'out_of_range');
    expectFieldError(await api.get(`${REST}/api-keys?limit=5&limit=6`), 'limit');
    expectFieldError(await api.get(`${REST}/api-keys?limit=Infinity`), 'limit');
  });

  it('accepts the bounds and defaults limit to 50', async () => {
    for (const [query, limit] of [['limit=1', 1], ['limit=100', 100], ['', 50]] as const) {
      const res = await api.get(`${REST}/agents${query ? `?${query}` : ''}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ limit, offset: 0 });
    }
  });

  it('DELETE /agents/:id?delete_kbs=maybe is 400 and deletes nothing', async () => {
    const agent = await newAgent(api, `Agent ${randomUUID().slice(0, 8)}`);
    expectFieldError(await api.delete(`${REST}/agents/${agent.id}?delete_kbs=maybe`), 'delete_kbs');
    expectFieldError(await api.delete(`${REST}/agents/${agent.id}?bogus=1`), 'bogus', 'unknown_field');
    expect((await api.get(`${REST}/agents/${agent.id}`)).body).toEqual(agent);
  });
});

describe('404 for malformed or unknown path ids', () => {
  const malformed = ['not-a-uuid', '123', 'null', `${randomUUID()}x`, randomUUID().replace(/-/g, ''), `urn:uuid:${randomUUID()}`, '%20'];
  for (const id of malformed) {
    it(`id ${JSON.stringify(id)} answers 404 on every agents and api-keys route`, async () => {
      const responses: [string, ApiResponse][] = [
        [`GET /agents/${id}`, await api.get(`${REST}/agents/${id}`)],
        [`PATCH /agents/${id}`, await api.patch(`${REST}/agents/${id}`, { name: 'x' })],
        [`DELETE /agents/${id}`, await api.delete(`${REST}/agents/${id}`)],
        [`GET /api-keys/${id}`, await api.get(`${REST}/api-keys/${id}`)],
        [`DELETE /api-keys/${id}`, await api.delete(`${REST}/api-keys/${id}`)],
      ];
      // All statuses first, so a failure names every route that misbehaves.
      expect(responses.map(([what, res]) => `${what} -> ${res.status}`)).toEqual(responses.map(([what]) => `${what} -> 404`));
      for (const [, res] of responses) expectProblem(res, 404, 'not_found');
    });
  }

  it('a well-formed unknown id answers 404', async () => {
    const id = randomUUID();
    expectProblem(await api.get(`${REST}/agents/${id}`), 404, 'not_found');
    expectProblem(await api.patch(`${REST}/agents/${id}`, {}), 404, 'not_found');
    expectProblem(await api.delete(`${REST}/agents/${id}`), 404, 'not_found');
    expectProblem(await api.get(`${REST}/api-keys/${id}`), 404, 'not_found');
  });

  it("another organization's agent answers 404, exactly as a missing one", async () => {
    const other = await svc.newOrg();
    const theirs = await newAgent(client(svc.url, other.token), `Agent ${randomUUID().slice(0, 8)}`);
    expectProblem(await api.get(`${REST}/agents/${theirs.id}`), 404, 'not_found');
    expectProblem(await api.patch(`${REST}/agents/${theirs.id}`, { name: 'mine now' }), 404, 'not_found');
    expectProblem(await api.delete(`${REST}/agents/${theirs.id}`), 404, 'not_found');
    expect((await client(svc.url, other.token).get(`${REST}/agents/${theirs.id}`)).body).toEqual(theirs);
  });
});

describe('X-Request-Id', () => {
  const wellFormed = ['abc', 'a', 'req.ABC_123-xyz', 'x'.repeat(200), '0', '...', '-_-'];
  for (const id of wellFormed) {
    it(`echoes the well-formed ${JSON.stringify(id.length > 20 ? `${id.slice(0, 10)}…(${id.length})` : id)}`, async () => {
      const ok = await api.get(`${REST}/agents`, { 'x-request-id': id });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-request-id')).toBe(id);
      const bad = await api.get(`${REST}/agents?limit=0`, { 'x-request-id': id });
      expect(expectProblem(bad, 400, 'validation_error').request_id).toBe(id);
      const unknown = await call(svc.url, 'GET', '/nope', { headers: { 'x-request-id': id } });
      expect(expectProblem(unknown, 404, 'not_found').request_id).toBe(id);
    });
  }

  const malformed = ['x'.repeat(201), 'has space', 'a/b', 'semi;colon', 'caf\u00e9', 'a+b', '{id}', 'tab\there'];
  for (const id of malformed) {
    it(`replaces the malformed ${JSON.stringify(id.length > 20 ? `${id.slice(0, 10)}…(${id.length})` : id)}`, async () => {
      const ok = await api.get(`${REST}/agents`, { 'x-request-id': id });
      expect(ok.status).toBe(200);
      const fresh = ok.headers.get('x-request-id');
      expect(fresh).toMatch(WELL_FORMED_REQUEST_ID);
      expect(fresh).not.toBe(id);
      const bad = await api.get(`${REST}/agents/nope`, { 'x-request-id': id });
      const body = expectProblem(bad, 404, 'not_found');
      expect(body.request_id).not.toBe(id);
    });
  }

  it('gives every response one, different per request, when none is sent', async () => {
    const a = await api.get(`${REST}/agents`);
    const b = await api.get(`${REST}/agents`);
    const c = await call(svc.url, 'GET', '/healthz');
    for (const r of [a, b, c]) expect(r.headers.get('x-request-id')).toMatch(WELL_FORMED_REQUEST_ID);
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });
});

describe('order of checks: 401, 403, 400, 404', () => {
  it('no token with a bad body is 401 with WWW-Authenticate: Bearer', async () => {
    for (const res of [
      await call(svc.url, 'POST', `${REST}/agents`, { body: '{bad json' }),
      await call(svc.url, 'POST', `${REST}/agents`, { body: { name: 5, foo: 1 } }),
      await call(svc.url, 'POST', `${REST}/agents`, { body: 'plain', headers: { 'content-type': 'text/plain' } }),
      await call(svc.url, 'PATCH', `${REST}/agents/not-a-uuid`, { body: '{bad json' }),
      await call(svc.url, 'GET', `${REST}/agents?limit=0`),
      await call(svc.url, 'GET', `${REST}/nope`),
      await call(svc.url, 'PUT', `${REST}/agents`),
    ]) {
      expectProblem(res, 401, 'unauthorized');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
    }
  });

  it('an unknown, malformed or revoked token is 401 too', async () => {
    const revoked = await api.post(`${REST}/api-keys`, { name: 'to revoke', permissions: ['agents.write'] });
    expect(revoked.status).toBe(201);
    expect((await api.delete(`${REST}/api-keys/${revoked.body.id}`)).status).toBe(204);
    for (const authorization of [`Bearer sk_${'0'.repeat(40)}`, 'Bearer', `Basic ${Buffer.from('a:b').toString('base64')}`, admin.token, `Bearer ${revoked.body.token}`]) {
      const res = await call(svc.url, 'POST', `${REST}/agents`, { body: { name: 5 }, headers: { authorization } });
      expectProblem(res, 401, 'unauthorized');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
    }
  });

  it('no token with an oversized body is 401', async () => {
    const res = await call(svc.url, 'POST', `${REST}/agents`, { body: { name: 'a'.repeat(MIB + 10) } });
    expectProblem(res, 401, 'unauthorized');
  });

  it('a token lacking the permission with a bad body is 403 missing_permission', async () => {
    const reader = (await keyWith(svc, api, ['agents.read'])).token;
    const agent = await newAgent(api, `Agent ${randomUUID().slice(0, 8)}`);
    for (const res of [
      await call(svc.url, 'POST', `${REST}/agents`, { token: reader, body: '{bad json' }),
      await call(svc.url, 'POST', `${REST}/agents`, { token: reader, body: { name: 5, foo: 1 } }),
      await call(svc.url, 'POST', `${REST}/agents`, { token: reader, body: 'plain', headers: { 'content-type': 'text/plain' } }),
      await call(svc.url, 'PATCH', `${REST}/agents/${agent.id}`, { token: reader, body: { status: 'bogus' } }),
      await call(svc.url, 'PATCH', `${REST}/agents/${randomUUID()}`, { token: reader, body: { name: 'x' } }),
      await call(svc.url, 'DELETE', `${REST}/agents/not-a-uuid`, { token: reader }),
    ]) {
      expect(expectProblem(res, 403, 'missing_permission').required_permission).toBe('agents.write');
    }
    const writer = (await keyWith(svc, api, ['agents.write'])).token;
    for (const res of [
      await call(svc.url, 'GET', `${REST}/agents?limit=0`, { token: writer }),
      await call(svc.url, 'GET', `${REST}/agents/${randomUUID()}`, { token: writer }),
    ]) {
      expect(expectProblem(res, 403, 'missing_permission').required_permission).toBe('agents.read');
    }
    expect((await api.get(`${REST}/agents/${agent.id}`)).body).toEqual(agent);
  });

  it('delete_kbs=true needs knowledge.write, checked before the id is looked up', async () => {
    const writer = (await keyWith(svc, api, ['agents.write', 'agents.read'])).token;
    const res = await call(svc.url, 'DELETE', `${REST}/agents/${randomUUID()}?delete_kbs=true`, { token: writer });
    expect(expectProblem(res, 403, 'missing_permission').required_permission).toBe('knowledge.write');
  });

  it('a valid token with a bad body and an unknown or malformed id is 400, not 404', async () => {
    expectFieldError(await api.patch(`${REST}/agents/${randomUUID()}`, { name: 5 }), 'name', 'invalid_type');
    expectFieldError(await api.patch(`${REST}/agents/${randomUUID()}`, { foo: 1 }), 'foo', 'unknown_field');
    expectFieldError(await api.patch(`${REST}/agents/not-a-uuid`, { status: 'bogus' }), 'status', 'invalid_value');
    expectProblem(await call(svc.url, 'PATCH', `${REST}/agents/${randomUUID()}`, { token: admin.token, body: '{bad' }), 400, 'invalid_json');
    expectFieldError(await api.delete(`${REST}/agents/${randomUUID()}?delete_kbs=maybe`), 'delete_kbs');
  });

  it('RateLimit fields are on authenticated error responses', async () => {
    for (const res of [
      await api.get(`${REST}/agents?limit=0`),
      await api.get(`${REST}/agents/${randomUUID()}`),
      await api.put(`${REST}/agents`, {}),
      await api.get(`${REST}/nope`),
    ]) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.headers.get('ratelimit-policy')).toMatch(/^"default";q=\d+;w=60$/);
      expect(res.headers.get('ratelimit')).toMatch(/^"default";r=\d+;t=\d+$/);
    }
  });
});

describe('PATCH {}', () => {
  it('is valid and changes nothing, updated_at included', async () => {
    const agent = await newAgent(api, { name: 'Unchanged', site_url: 'https://example.com/' });
    await new Promise((r) => setTimeout(r, 20));
    const res = await api.patch(`${REST}/agents/${agent.id}`, {});
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual(agent);
    expect((await api.get(`${REST}/agents/${agent.id}`)).body).toEqual(agent);
  });

  it('a PATCH without a body is the same as {}', async () => {
    const agent = await newAgent(api, `Agent ${randomUUID().slice(0, 8)}`);
    const res = await call(svc.url, 'PATCH', `${REST}/agents/${agent.id}`, { token: admin.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual(agent);
  });

  it('while a real change moves updated_at', async () => {
    const agent = await newAgent(api, `Agent ${randomUUID().slice(0, 8)}`);
    await new Promise((r) => setTimeout(r, 20));
    const res = await api.patch(`${REST}/agents/${agent.id}`, { persona: 'Helpful' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.persona).toBe('Helpful');
    expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(agent.updated_at));
    expect((await api.get(`${REST}/agents/${agent.id}`)).body).toEqual(res.body);
  });
});

describe('500 internal_error', () => {
  // A service of its own on a private database: renaming a table there breaks nobody else.
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let broken: TestService;
  let token: string;

  beforeAll(async () => {
    db = await freshDatabase();
    broken = await startTestService({ RATE_LIMIT_PER_MINUTE: 100_000 }, { databaseUrl: db.url, worker: false });
    ({ token } = await broken.newOrg());
  });
  afterAll(async () => {
    await broken?.stop();
    await db?.drop();
  });

  it('answers an unexpected failure with a bare problem: no stack, no SQL, no table name', async () => {
    const table = `agents_hidden_${randomUUID().slice(0, 8)}`;
    const brokenApi = client(broken.url, token);
    expect((await brokenApi.post(`${REST}/agents`, { name: 'before' })).status).toBe(201);
    await broken.sql.unsafe(`alter table agents rename to ${table}`);
    try {
      for (const res of [
        await brokenApi.get(`${REST}/agents`, { 'x-request-id': 'trace-500' }),
        await brokenApi.post(`${REST}/agents`, { name: 'during' }),
        await brokenApi.get(`${REST}/agents/${randomUUID()}`),
      ]) {
        const body = expectProblem(res, 500, 'internal_error');
        expect(body.errors).toBeUndefined();
        // Everything but the fixed `type` URL (whose host is docs.agents.dev) must be free of internals.
        const { type: _type, ...rest } = body;
        const text = JSON.stringify(rest);
        for (const leak of [/\bat .*\(/, /\.ts:\d+/, /node_modules/, /\bselect\b/i, /\bfrom\b/i, /relation/i, /postgres/i, /sql/i, /\bagents\b/, new RegExp(table), /stack/i, /Error:/]) {
          expect(text, `500 body leaks ${leak}`).not.toMatch(leak);
        }
      }
      const traced = await brokenApi.get(`${REST}/agents`, { 'x-request-id': 'trace-500' });
      expect(expectProblem(traced, 500, 'internal_error').request_id).toBe('trace-500');
    } finally {
      await broken.sql.unsafe(`alter table ${table} rename to agents`);
    }
    const healed = await brokenApi.get(`${REST}/agents`);
    expect(healed.status, healed.text).toBe(200);
    expect(healed.body.total).toBe(1);
  });
});

describe('the page behind each problem\'s type URL (issue 42)', () => {
  it('GET /errors/<code> is a short HTML page (title, what it means, what to do) for every code; an unknown code is the 404 problem', async () => {
    const { ERRORS } = await import('../src/errors.ts');
    for (const [code, e] of Object.entries(ERRORS)) {
      const res = await fetch(new URL(`/errors/${code}`, svc.url));
      expect(res.status, code).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const html = await res.text();
      expect(html).toContain(`<h1>${e.title.replace(/&/g, '&amp;').replace(/'/g, '&#39;')}</h1>`);
      expect(html).toContain('What it means');
      expect(html).toContain('What to do');
    }
    const unknown = await call(svc.url, 'GET', '/errors/no_such_code');
    expectProblem(unknown, 404, 'not_found');
    const index = await fetch(new URL('/errors', svc.url));
    expect(index.status).toBe(200);
    expect(await index.text()).toContain('href="/errors/validation_error"');
  });

  it('a real problem\'s type keeps the contract\'s URL, and its path resolves on the service to that code\'s page', async () => {
    const res = await api.post(`${REST}/agents`, { name: 'x', color: 'red' });
    expect(res.body.type).toBe('https://docs.agents.dev/errors/validation_error');
    const page = await fetch(new URL(new URL(res.body.type).pathname, svc.url));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<h1>Request is invalid</h1>');
    expect(html).toContain('<code>errors[]</code>');
  });
});
