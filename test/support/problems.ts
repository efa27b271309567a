import { expect } from 'vitest';
import { ERROR_EXTENSIONS, ERROR_TITLES, type ErrorCode } from '../../src/errors.ts';
import type { ApiResponse } from '../helpers.ts';

const TYPE_BASE = 'https://docs.agents.dev/errors/';
export const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9._-]{1,200}$/;
const PROBLEM_KEYS = new Set(['type', 'title', 'status', 'code', 'detail', 'errors', 'request_id']);

/**
 * Any 4xx/5xx: RFC 9457 problem details carrying the response's request id, with only the members
 * the contract names (plus the extension members `ERROR_EXTENSIONS` declares for its code), a `type` made of the code, and well-formed `errors[]`. Returns the body.
 */
export function expectWellFormedProblem(res: ApiResponse, what = ''): Record<string, any> {
  const context = `${what} -> ${res.status} ${res.text.slice(0, 500)}`;
  expect(res.headers.get('content-type'), context).toMatch(/^application\/problem\+json(;|$)/);
  const body = res.body as Record<string, any>;
  expect(body && typeof body === 'object' && !Array.isArray(body), context).toBe(true);
  const requestId = res.headers.get('x-request-id');
  expect(requestId, context).toMatch(WELL_FORMED_REQUEST_ID);
  expect(body.request_id, context).toBe(requestId);
  expect(body.status, context).toBe(res.status);
  expect(body.code, context).toMatch(/^[a-z][a-z0-9_]*$/);
  expect(body.type, context).toBe(TYPE_BASE + body.code);
  expect(typeof body.title === 'string' && body.title.length > 0, context).toBe(true);
  expect(typeof body.detail === 'string' && body.detail.length > 0, context).toBe(true);
  const extensions: readonly string[] = ERROR_EXTENSIONS[body.code as ErrorCode] ?? [];
  for (const key of Object.keys(body)) expect(PROBLEM_KEYS.has(key) || extensions.includes(key), `${context}: unexpected member ${key}`).toBe(true);
  if (body.code === 'validation_error') expect(Array.isArray(body.errors) && body.errors.length > 0, context).toBe(true);
  if (body.errors !== undefined) {
    expect(Array.isArray(body.errors), context).toBe(true);
    for (const e of body.errors) {
      expect(Object.keys(e).sort(), context).toEqual(['code', 'field', 'message']);
      expect(typeof e.field === 'string' && typeof e.message === 'string' && e.message.length > 0, context).toBe(true);
      expect(e.code, context).toMatch(/^[a-z][a-z0-9_]*$/);
    }
  }
  if (res.status === 401) expect(res.headers.get('www-authenticate'), context).toMatch(/^Bearer\b/);
  if (res.status === 405) expect(res.headers.get('allow'), context).toBeTruthy();
  return body;
}

/** A complete problem document of `status` and `code`, titled as the contract says; returns its body. */
export function expectProblem(res: ApiResponse, status: number, code: ErrorCode): Record<string, any> {
  expect(res.status, res.text).toBe(status);
  const body = expectWellFormedProblem(res);
  expect(body.code, res.text).toBe(code);
  expect(body.title, res.text).toBe(ERROR_TITLES[code]);
  return body;
}

/** A 400 `validation_error` whose `errors[]` holds `{field, code}` (code omitted: any code); returns the body. */
export function expectFieldError(res: ApiResponse, field: string, code?: string): Record<string, any> {
  const body = expectProblem(res, 400, 'validation_error');
  const match = (body.errors as { field: string; code: string }[]).find((e) => e.field === field && (code === undefined || e.code === code));
  expect(match, `expected errors[] to hold field ${JSON.stringify(field)}${code ? ` with code ${code}` : ''}: ${res.text}`).toBeDefined();
  return body;
}
