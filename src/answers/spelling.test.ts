import { describe, expect, it } from 'vitest';
import { clippedSiteWord, closedCompounds, editDistance, nearestSiteWord, openedCompound, vocabularyOf, withSiteSpelling } from './spelling.ts';
import { languageOfQuestion, languageOfWords } from './phrases.ts';

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
    // Spoken forms typed as one word are written out ("gotta" is no name the site lacks).
    expect(withSiteSpelling('anything i gotta do, havent booked', 'en', SITE, english)).toBe("anything i got to do, haven't booked");
  });

  it('reads a compound as the site writes it, open or closed', () => {
    const site = vocabularyOf(['Pre-anesthetic blood work is required. Book a checkup online.', 'Leave keys in the dropbox after hours.']);
    expect(openedCompound('bloodwork', site)).toBe('blood work');
    // Not a word the site has no halves of.
    expect(openedCompound('xylophone', site)).toBeNull();
    expect(closedCompounds('is there a drop box for the keys', site)).toBe('is there a dropbox for the keys');
    expect(closedCompounds('do i need a check up first', site)).toBe('do i need a checkup first');
    expect(closedCompounds('is the blood work included', site)).toBe('is the blood work included');
    expect(withSiteSpelling('does he need bloodwork first', 'en', site, english)).toBe('does he need blood work first');
  });

  it('mends a slip in a question word, unless two question words are as near', () => {
    expect(withSiteSpelling('hiw much is boarding', 'en', SITE, english)).toBe('how much is boarding');
    expect(withSiteSpelling('waht time', 'en', SITE, english)).toBe('what time');
    // "hwo" is "how" or "who": left as typed.
    expect(withSiteSpelling('hwo much', 'en', SITE, english)).toBe('hwo much');
    expect(withSiteSpelling('a kel heure', 'fr', SITE, () => false)).toBe('a quel heure');
  });

  it('counts the parts of hyphenated and elided words as the site\'s words', () => {
    const site = vocabularyOf(["Boutique Croix-Rousse : l'atelier ouvre au choix le samedi. Le choix du jour."]);
    // "croix" is written (in "Croix-Rousse"): not mended into "choix", which the site writes more often.
    expect(withSiteSpelling('croix rousse atelier', 'fr', site, () => false)).toBe('croix rousse atelier');
    expect(nearestSiteWord('atelir', site)).toBe('atelier');
  });

  it('a word cut short becomes the commonest site word it begins, never a guess between two as common', () => {
    const site = vocabularyOf(['Pedicures and manicures. Our pedicure chairs. A pediatric first-aid kit. Renovations. Renewals.']);
    expect(withSiteSpelling('pedi prices?', 'en', site, english)).toBe('pedicure prices?');
    expect(clippedSiteWord('mani', site)).toBe('manicures');
    // "ren" is too short to say; "rene" begins "renovations" and "renewals", written as often.
    expect(clippedSiteWord('ren', site)).toBeNull();
    expect(clippedSiteWord('rene', site)).toBe('renewals');
    expect(clippedSiteWord('reno', site)).toBe('renovations');
    expect(clippedSiteWord('xylo', site)).toBeNull();
    // A word of the language is left alone.
    expect(withSiteSpelling('pain after pedi', 'en', site, english)).toBe('pain after pedicure');
  });

  it('reads a French chat\'s "k" for "qu" or "c"', () => {
    const site = vocabularyOf(['La boutique ouvre à 7h. Notre boutique du centre. Nous acceptons les cartes bancaires.']);
    expect(withSiteSpelling('num de tel boutik', 'fr', site, () => false)).toBe('numéro de téléphone boutique');
    expect(withSiteSpelling('les kartes', 'fr', site, () => false)).toBe('les cartes');
  });

  it('writes out chat shorthand for days, question words and the means of payment', () => {
    expect(withSiteSpelling('whos the mgr', 'en', SITE, english)).toBe("who's the manager");
    expect(withSiteSpelling('mon hrs', 'en', SITE, english)).toBe('monday hours');
    expect(withSiteSpelling('amex ok?', 'en', SITE, english)).toBe('american express ok?');
    expect(withSiteSpelling('open xmas day?', 'en', SITE, english)).toBe('open christmas day?');
  });
});

describe('the language a question is read in', () => {
  it('is the site\'s when the question has one marker of a language or none', () => {
    const english = vocabularyOf(['Call your nearest branch with your questions. We are open with extended hours from this week.']);
    const french = vocabularyOf(['Passez nous voir dans nos boutiques, pour vous servir avec plaisir. Nous sommes ouverts.']);
    expect(languageOfWords(english.counts)).toBe('en');
    expect(languageOfWords(french.counts)).toBe('fr');
    // "mon" is French's "my" and a chat's Monday.
    expect(languageOfQuestion('mon hrs riverside?', 'en')).toBe('en');
    expect(languageOfQuestion('mon hrs riverside?', 'fr')).toBe('fr');
    // Two markers or more: the question's own.
    expect(languageOfQuestion('vous êtes ouverts le dimanche ?', 'en')).toBe('fr');
    expect(languageOfQuestion('are you open on sunday?', 'fr')).toBe('en');
  });
});
