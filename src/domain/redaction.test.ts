import { describe, expect, it } from 'vitest';
import { findPersonalData, luhnValid, maskPhone, redactText, redactValue, type RedactionPolicy } from './redaction.ts';

const only = (kind: RedactionPolicy['kinds'][number], extra: Partial<RedactionPolicy> = {}): RedactionPolicy => ({ kinds: [kind], ...extra });

describe('redaction detectors: true and false positives', () => {
  it('email addresses', () => {
    expect(redactText('write to Jane.Doe+x@example.co.uk today', only('email'))).toBe('write to •••@••• today');
    expect(findPersonalData('an @mention, a user@localhost and 3@4', only('email'))).toEqual([]);
  });

  it('phone numbers (libphonenumber-js, valid for their country)', () => {
    expect(redactText('call +1 415 555 0142 please', only('phone'))).toBe('call +1 ••• ••• 0142 please');
    expect(redactText('ring 020 7946 0958', only('phone', { defaultCountry: 'GB' }))).toBe('ring +44 ••• ••• 0958');
    expect(maskPhone('+14155550142')).toBe('+1 ••• ••• 0142');
    for (const text of ['order 12345678', 'port 8080 pid 4123', '2026-12-06T15:30:50.000Z', 'id 01939b6e-5c0a-7d3e-8f1a-2b3c4d5e6f70']) {
      expect(findPersonalData(text, only('phone', { defaultCountry: 'US' }))).toEqual([]);
    }
  });

  it('payment card numbers, with the Luhn check', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(redactText('card 4111 1111 1111 1111 exp 12/29', only('card'))).toBe('card •••• •••• •••• 1111 exp 12/29');
    expect(redactText('card 5500-0000-0000-0004', only('card'))).toBe('card •••• •••• •••• 0004');
    expect(findPersonalData('tracking 4111 1111 1111 1112 and invoice 1234567890123', only('card'))).toEqual([]);
    // Among other numbers: the window of whole groups that passes, not the whole run that does not.
    expect(redactText('room 12 4111 1111 1111 1111', only('card'))).toBe('room 12 •••• •••• •••• 1111');
  });

  it('a phone number followed by a comma and more digits ends with its own digits (not read as an extension)', () => {
    const policy: RedactionPolicy = { kinds: ['phone', 'card'] };
    expect(redactText('+1 415 555 0142, 4111 1111 1111 1111', policy)).toBe('+1 ••• ••• 0142, •••• •••• •••• 1111');
  });

  it('IBANs (ibantools: country length and mod-97)', () => {
    expect(redactText('pay to DE89 3704 0044 0532 0130 00 thanks', only('iban'))).toBe('pay to DE•• •••• 3000 thanks');
    expect(redactText('GB82WEST12345698765432', only('iban'))).toBe('GB•• •••• 5432');
    expect(findPersonalData('DE89 3704 0044 0532 0130 01 and XX12 3456 7890 1234', only('iban'))).toEqual([]);
  });

  it('national ids of the configured countries only', () => {
    const us = only('national_id', { countries: ['US'] });
    expect(redactText('my SSN is 123-45-6789 ok', us)).toBe('my SSN is ••••••••• ok');
    expect(findPersonalData('not an SSN: 000-12-3456 or 666-12-3456', us)).toEqual([]);
    const gb = only('national_id', { countries: ['GB'] });
    expect(redactText('NI number AB123456C', gb)).toBe('NI number •••••••••');
    expect(findPersonalData('my SSN is 123-45-6789', gb)).toEqual([]);
    expect(findPersonalData('my SSN is 123-45-6789', only('national_id'))).toEqual([]);
  });

  it('free-form patterns, and a pattern that does not compile finds nothing', () => {
    const policy = only('pattern', { patterns: [{ name: 'member_no', pattern: 'MBR-\\d{6}' }, { name: 'broken', pattern: '(' }] });
    expect(redactText('member MBR-123456 here', policy)).toBe('member [member_no] here');
    expect(findPersonalData('member MBR-12 here', policy)).toEqual([]);
  });

  it('overlaps resolve to one mask; JSON values are walked, skipped keys kept', () => {
    const policy: RedactionPolicy = { kinds: ['email', 'phone', 'card'] };
    expect(redactValue({ id: 'jo@example.com', text: ['jo@example.com', 4], n: 1 }, policy, new Set(['id'])))
      .toEqual({ id: 'jo@example.com', text: ['•••@•••', 4], n: 1 });
    expect(redactText('nothing here', { kinds: [] })).toBe('nothing here');
  });
});
