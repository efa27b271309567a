import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { SHAPE_CHECKS } from '../src/validation.ts';
import { responseCheck } from './response-check.ts';
import { route } from './routing.ts';

const Thing = Type.Object({ id: Type.String(), at: Type.String({ format: 'date-time' }) }, { $id: 'Thing', additionalProperties: false });
const def = route({
  method: 'GET', path: '/things/:id', operationId: 'getThing', summary: 'A thing', permissions: [],
  responses: { 200: { description: 'The thing', schema: Thing }, 204: { description: 'Nothing' } },
  handler: async () => ({ status: 200, body: { id: 'a', at: new Date().toISOString() } }),
});

describe('the response check of test mode', () => {
  it('is on under the test runner, so every response of the suite is checked', () => {
    expect(SHAPE_CHECKS).toBe(true);
  });

  it('accepts a declared status with a body of its schema (as JSON: a Date becomes its string)', () => {
    const check = responseCheck(def);
    expect(() => check({ status: 200, body: { id: 'a', at: new Date() } })).not.toThrow();
    expect(() => check({ status: 204 })).not.toThrow();
  });

  it('refuses a body off its schema, naming the field', () => {
    const check = responseCheck(def);
    expect(() => check({ status: 200, body: { id: 'a', at: 'yesterday' } })).toThrow(/at: /);
    expect(() => check({ status: 200, body: { id: 'a', at: new Date(), secret: 'x' } })).toThrow(/secret is not a known field/);
  });

  it('refuses an undeclared status, and a body where none is declared', () => {
    const check = responseCheck(def);
    expect(() => check({ status: 201, body: { id: 'a', at: new Date() } })).toThrow(/does not declare/);
    expect(() => check({ status: 204, body: { id: 'a' } })).toThrow(/declares none/);
  });
});
