import { describe, expect, it } from 'vitest';
import { sandboxCallOutcome, sandboxCandidates, SMS_REFUSING_NUMBER } from './sandbox.ts';
import { addMonths, billingPeriodAt, billingReference } from '../domain/billing-periods.ts';
import { matchTransferRule } from '../runtime/transfer.ts';

const timing = { SANDBOX_RING_SECONDS: 2, SANDBOX_CALL_SECONDS: 30 };

describe('sandbox carrier: the contract\'s table of test numbers', () => {
  it.each([
    ['+15005550001', { status: 'failed', ended_reason: 'error' }],
    ['+15005550002', { status: 'busy', ended_reason: 'carrier' }],
    ['+15005550003', { status: 'no_answer', ended_reason: 'carrier', ringSeconds: 2, talkSeconds: 0 }],
    ['+14155550123', { status: 'completed', ended_reason: 'carrier', ringSeconds: 2, talkSeconds: 30 }],
  ])('a call to %s', (to, outcome) => {
    expect(sandboxCallOutcome(to, timing)).toMatchObject(outcome);
  });

  it('rings and lasts as SANDBOX_RING_SECONDS and SANDBOX_CALL_SECONDS say', () => {
    expect(sandboxCallOutcome('+447700900123', { SANDBOX_RING_SECONDS: 0, SANDBOX_CALL_SECONDS: 1 })).toEqual({ status: 'completed', ended_reason: 'carrier', ringSeconds: 0, talkSeconds: 1 });
  });

  it('names the number that refuses inbound-SMS configuration', () => {
    expect(SMS_REFUSING_NUMBER).toBe('+15005550009');
  });

  it('search gives at least 5 distinct candidates honouring country, type, area code and contains', () => {
    const local = sandboxCandidates({ country: 'US', type: 'local', area_code: '646', contains: '77' });
    expect(local.length).toBeGreaterThanOrEqual(5);
    expect(new Set(local.map((c) => c.phone_number)).size).toBe(local.length);
    for (const c of local) expect(c.phone_number).toMatch(/^\+1646\d*77$/);
    const tollFree = sandboxCandidates({ country: 'US', type: 'toll_free' });
    expect(tollFree[0]).toMatchObject({ number_type: 'toll_free', monthly_cost_cents: 215, locality: null });
    expect(tollFree[0]!.phone_number).toMatch(/^\+1800/);
    expect(sandboxCandidates({ country: 'FR', type: 'local' })[0]!.phone_number).toMatch(/^\+331\d{8}$/);
    // A pattern reaching into the area code must agree with it.
    expect(sandboxCandidates({ country: 'US', type: 'local', area_code: '415', contains: '5551234567' })).toEqual([]);
    expect(sandboxCandidates({ country: 'US', type: 'local', area_code: '415', contains: '154155550' }).map((c) => c.phone_number)).toEqual(['+14154155550']);
  });
});

describe('billing periods', () => {
  it('a month from the 31st clamps to the last day of the next month', () => {
    const jan31 = new Date('2027-01-31T10:00:00.000Z');
    expect(addMonths(jan31, 1).toISOString()).toBe('2027-02-28T10:00:00.000Z');
    expect(addMonths(jan31, 2).toISOString()).toBe('2027-03-31T10:00:00.000Z');
    expect(billingPeriodAt(jan31, new Date('2027-03-30T12:00:00.000Z'))).toEqual({ index: 1, start: new Date('2027-02-28T10:00:00.000Z') });
    expect(billingPeriodAt(jan31, new Date('2027-03-31T10:00:00.000Z')).index).toBe(2);
    expect(billingPeriodAt(jan31, new Date('2027-01-31T09:00:00.000Z')).index).toBe(0);
    expect(billingReference('n1', new Date('2027-02-28T10:00:00.000Z'))).toBe('number-billing:n1:2027-02-28');
  });
});

describe('transfer rule matching', () => {
  const rules = [
    { id: 'a', name: 'Sales', condition: 'Caller asks about pricing', priority: 1, enabled: true },
    { id: 'b', name: 'Billing', condition: 'Caller wants a refund', priority: 5, enabled: true },
    { id: 'c', name: 'Off', condition: 'Caller mentions pricing', priority: 9, enabled: false },
  ];
  it('takes the highest-priority enabled rule whose condition the caller\'s words meet', () => {
    expect(matchTransferRule(rules, 'What is your pricing? I also want a refund')?.id).toBe('b');
    expect(matchTransferRule(rules, 'Tell me about pricing')?.id).toBe('a');
    expect(matchTransferRule(rules, 'Can I speak to someone please')).toBeNull();
    expect(matchTransferRule(rules, '')).toBeNull();
  });
});
