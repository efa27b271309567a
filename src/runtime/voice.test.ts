import { describe, expect, it } from 'vitest';
import { spokenForm } from './voice.ts';

describe('prices and times as a person says them (issue 43, "Voice")', () => {
  it('English: amounts with their currency, clock times with a.m. and p.m.', () => {
    expect(spokenForm('Plans start at $39.95 and we open at 9:00 am.', 'en')).toBe('Plans start at 39 dollars 95 and we open at 9 a.m.');
    expect(spokenForm('Only $1, or $0.50; $1,200 a year; 25 USD; £10.50; €3', 'en'))
      .toBe('Only 1 dollar, or 50 cents; 1,200 dollars a year; 25 dollars; 10 pounds 50; 3 euros');
    expect(spokenForm('Open 09:00-17:30, lunch at 12:00, last call 00:15, or 7pm, 7:45 P.M.', 'en'))
      .toBe('Open 9 a.m.-5:30 p.m., lunch at 12 p.m., last call 12:15 a.m., or 7 p.m., 7:45 p.m.');
    expect(spokenForm('We close at 17:30.', 'en-GB')).toBe('We close at 5:30 p.m.');
  });

  it('French: euros and heures; other shapes and languages are left alone', () => {
    expect(spokenForm('Le forfait coûte 25,50 € ou 1 200 €, ouvert de 9h30 à 18h, fermé à 14:00.', 'fr'))
      .toBe('Le forfait coûte 25 euros 50 ou 1 200 euros, ouvert de 9 heures 30 à 18 heures, fermé à 14 heures.');
    expect(spokenForm('dans 2 hôtels', 'fr')).toBe('dans 2 hôtels');
    expect(spokenForm('version 2.10, a 3:1 ratio, 10:30:15 elapsed', 'en')).toBe('version 2.10, a 3:1 ratio, 10:30:15 elapsed');
    expect(spokenForm('Es kostet 5 € um 9:00', 'de')).toBe('Es kostet 5 € um 9:00');
  });
});

describe("a streamed call's words read ahead of their turn (issue 44)", () => {
  it('readAhead reads the question the offline turn looks its answer up by (one reading, kept for the turn)', async () => {
    const { readAhead } = await import('./reply.ts');
    const { analyzeQuestion } = await import('../answers/analysis.ts');
    const early = readAhead('  what are   your opening hours on saturday  ');
    expect(early.terms.length).toBeGreaterThan(0);
    // The offline reply looks notes, data tables and knowledge up by the message with single spaces, at most 500 characters.
    expect(analyzeQuestion('what are your opening hours on saturday')).toBe(early);
    expect(readAhead(`write to me at someone@example.com about ${'prices '.repeat(100)}`))
      .toBe(analyzeQuestion(`write to me at about ${'prices '.repeat(100)}`.replace(/\s+/g, ' ').trim().slice(0, 500)));
  });
});
