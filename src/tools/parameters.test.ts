import { describe, expect, it } from 'vitest';
import { argumentErrors, parametersErrors } from './parameters.ts';

describe('parametersErrors', () => {
  it('accepts an object schema that compiles', () => {
    expect(parametersErrors({ type: 'object', properties: {} })).toEqual([]);
    expect(parametersErrors({ type: 'object', properties: { date: { type: 'string', format: 'date' }, n: { type: ['integer', 'null'] } }, required: ['date'] })).toEqual([]);
  });

  it('refuses what is not an object schema, does not compile, or is too big', () => {
    const codes = (schema: Record<string, unknown>) => parametersErrors(schema).map((e) => e.code);
    expect(codes({ type: 'string' })).toEqual(['invalid_schema']);
    expect(codes({ properties: {} })).toEqual(['invalid_schema']);
    expect(codes({ type: 'object', properties: [] })).toEqual(['invalid_schema']);
    expect(codes({ type: 'object', properties: { a: { type: 'strin' } } })).toEqual(['invalid_schema']);
    expect(codes({ type: 'object', properties: { a: { minLenght: 1 } } })).toEqual(['invalid_schema']);
    expect(codes({ type: 'object', properties: { a: { $ref: 'https://example.com/schema.json' } } })).toEqual(['invalid_schema']);
    expect(codes({ type: 'object', properties: { a: { type: 'string', pattern: '(' } } })).toEqual(['invalid_schema']);
    expect(codes({ type: 'object', properties: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`p${i}`, {}])) })).toEqual(['too_many_properties']);
    expect(codes({ type: 'object', properties: { a: { description: 'x'.repeat(17 * 1024) } } })).toEqual(['too_large']);
    expect(parametersErrors({ type: 'array' }, 'tools[2].parameters')[0]!.field).toBe('tools[2].parameters');
  });
});

describe('argumentErrors', () => {
  const schema = { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'], additionalProperties: false };
  it('checks the model\'s arguments against the tool\'s schema', () => {
    expect(argumentErrors(schema, { order_id: 'A-17' })).toEqual([]);
    expect(argumentErrors(schema, {}).map((e) => [e.field, e.code])).toEqual([['order_id', 'required']]);
    expect(argumentErrors(schema, { order_id: 5, x: 1 }).map((e) => e.field).sort()).toEqual(['order_id', 'x']);
  });
});
