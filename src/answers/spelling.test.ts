import { describe, expect, it } from 'vitest';
import { editDistance, nearestSiteWord, vocabularyOf, withSiteSpelling } from './spelling.ts';

// Issue 39: "tmrw", "reciept", "satuday" went unread. A slip is mended against the words the site writes.

const SITE = vocabularyOf([
  'Keep your receipt: returns need it. We are open Saturday and Sunday. Grooming appointments take an hour.',
  'Receipt copies are emailed. Saturday grooming is busy. Boarding for cats and dogs.',
]);
const english = (w: string) => ['the', 'what', 'open', 'need', 'lost', 'bring', 'tomorrow', 'pain'].includes(w);

describe('spelling against the site', () => {
  it('edit distance counts a swap of two neighbours as one edit', () => {
    expect(editDistance('reciept', 'receipt')).toBe(1);
    expect(editDistance('satuday', 'saturday')).toBe(1);
    expect(editDistance('groming', 'grooming')).toBe(1);
    expect(editDistance('cat', 'dog')).toBe(3);
  });

  it('a word the site never writes becomes the site\'s word one edit away (two for long words), the commonest', () => {
    expect(nearestSiteWord('reciept', SITE)).toBe('receipt');
    expect(nearestSiteWord('satuday', SITE)).toBe('saturday');
    expect(nearestSiteWord('bordingg', SITE)).toBe('boarding');
    // Too far, or another first letter: no guess.
    expect(nearestSiteWord('xyzzy', SITE)).toBeNull();
    expect(nearestSiteWord('oarding', SITE)).toBeNull();
  });

  it('mends a question: shorthand written out, slips mended, real words and names left alone', () => {
    expect(withSiteSpelling('lost my reciept, open satuday tmrw?', 'en', SITE, english)).toBe('lost my receipt, open saturday tomorrow?');
    // "pain" is an English word: not mended into anything; "Grooming" with a capital is a name as written.
    expect(withSiteSpelling('pain after Groming?', 'en', SITE, english)).toBe('pain after Groming?');
    expect(withSiteSpelling('rdv dispo samedi stp', 'fr', SITE, () => false)).toBe("rendez-vous disponible samedi s'il te plaît");
  });

  it('mends a slip in a question word, unless two question words are as near', () => {
    expect(withSiteSpelling('hiw much is boarding', 'en', SITE, english)).toBe('how much is boarding');
    expect(withSiteSpelling('waht time', 'en', SITE, english)).toBe('what time');
    // "hwo" is "how" or "who": left as typed.
    expect(withSiteSpelling('hwo much', 'en', SITE, english)).toBe('hwo much');
    expect(withSiteSpelling('a kel heure', 'fr', SITE, () => false)).toBe('a quel heure');
  });
});
