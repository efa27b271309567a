import { describe, expect, it } from 'vitest';
import { importHeaderErrors, importRow } from './contact-import.ts';

const normalize = {
  phone: (v: string) => (/^\+[1-9]\d{6,14}$/.test(v.replace(/[\s-]/g, '')) ? v.replace(/[\s-]/g, '') : null),
  email: (v: string) => (/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v) ? v.toLowerCase() : null),
};

describe('contact import rules', () => {
  it('maps header names to fields and other columns to facts', () => {
    expect(importRow({ Email: 'Ada@Example.com', 'First Name': 'Ada', Plan: 'pro', 'do-not-call': 'yes' }, 1, normalize)).toEqual({
      contact: { phone: null, email: 'ada@example.com', first_name: 'Ada', last_name: null, do_not_call: true, facts: { plan: 'pro' } },
    });
    expect(importRow({ phone: '+1 415 555 0123', email: '' }, 2, normalize)).toMatchObject({ contact: { phone: '+14155550123', email: null } });
  });

  it('names each bad cell with its row', () => {
    expect(importRow({ phone: '555', email: 'nope', do_not_call: 'maybe' }, 7, normalize)).toEqual({
      errors: [
        expect.objectContaining({ row: 7, field: 'phone', code: 'invalid_e164' }),
        expect.objectContaining({ row: 7, field: 'email', code: 'invalid_email' }),
        expect.objectContaining({ row: 7, field: 'do_not_call', code: 'invalid_boolean' }),
      ],
    });
    expect(importRow({ first_name: 'Nobody' }, 3, normalize)).toEqual({ errors: [expect.objectContaining({ row: 3, code: 'no_identity' })] });
  });

  it('refuses a header without identity, with a column twice, or with a name no fact can have', () => {
    expect(importHeaderErrors(['first_name', 'plan']).map((e) => e.code)).toEqual(['missing_column']);
    expect(importHeaderErrors(['email', 'Email']).map((e) => e.code)).toEqual(['duplicate_column']);
    expect(importHeaderErrors(['email', '9lives!']).map((e) => e.code)).toEqual(['invalid_column']);
    expect(importHeaderErrors(['phone', 'email', 'plan'])).toEqual([]);
  });
});
