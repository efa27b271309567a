import { describe, expect, it } from 'vitest';
import { smsText } from './sms-text.ts';

describe('smsText: an SMS reply as a person would text it', () => {
  it('says the greeting once: a greeting answered by another greeting is one greeting', () => {
    expect(smsText(["Hi! I'm Acme. How can I help you today?", 'Hello! How can I help you today?'])).toBe("Hi! I'm Acme. How can I help you today?");
    expect(smsText(["Hi! I'm Acme. How can I help you today?", 'Hello! We open at 9 am. How can I help you today?']))
      .toBe("Hi! I'm Acme. How can I help you today?\n\nWe open at 9 am.");
  });

  it('keeps a reply with no repeats as it is', () => {
    expect(smsText(['We open at 9 am on weekdays.'])).toBe('We open at 9 am on weekdays.');
  });

  it('stays within three segments, cut at a sentence boundary (459 GSM-7 characters, 201 UCS-2)', () => {
    const sentence = 'Our shop on Main Street opens at nine in the morning and closes at six in the evening on weekdays.';
    const long = Array.from({ length: 10 }, () => sentence).map((s, i) => s.replace('Our', `Shop ${i}:`)).join(' ');
    const text = smsText([long]);
    expect(text.length).toBeLessThanOrEqual(459);
    expect(text).toMatch(/weekdays\.$/);
    expect(text.length).toBeGreaterThan(300);
    const emoji = smsText([`${long} 🙂`]);
    expect(emoji.length).toBeLessThanOrEqual(201);
    expect(emoji).toMatch(/\.$/);
  });

  it('cuts one sentence longer than the budget at a word, with "..."', () => {
    const text = smsText([`${'word '.repeat(200)}end.`]);
    expect(text.length).toBeLessThanOrEqual(459);
    expect(text).toMatch(/word\.\.\.$/);
  });
});
