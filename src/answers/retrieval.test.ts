import { describe, expect, it } from 'vitest';
import { siteEntities } from './entities.ts';
import { languageOfQuestion, languageOfWords } from './phrases.ts';
import { agreedIds, mergedKnowledge, questionIn, withNamesCapitalised } from './retrieval.ts';
import { vocabularyOf } from './spelling.ts';

/** A source as retrieval keeps it, for its words and language: `passages` copies of `text`. */
function source(text: string, passages: number) {
  const vocabulary = vocabularyOf(Array.from({ length: passages }, () => text));
  return { vocabulary, entities: siteEntities([]), language: languageOfWords(vocabulary.counts), passages };
}

describe('an agent\'s sources merged (several sites or files)', () => {
  const english = source('Call your nearest branch with your questions. We are open with extended hours from this week.', 400);
  const french = source('Bonjour et merci : pour vous servir, nous sommes chez vous avec votre commande dans la semaine. '
    + 'Quel jour, quand, combien, comment ? Cette offre est sans engagement, avez-vous des questions ?', 20);

  it('are in the language most of their passages are written in, each source\'s worked out on its own words', () => {
    expect([english.language, french.language]).toEqual(['en', 'fr']);
    const merged = mergedKnowledge([english, french]);
    expect(merged.language).toBe('en');
    // The merged words (capped at 20 a word) count French's many markers as often as the far larger English site's.
    expect(languageOfWords(merged.vocabulary.counts)).toBe('fr');
    // A question without two markers of a language is read in the sources': English here.
    expect(languageOfQuestion('hrs riverside?', merged.language)).toBe('en');
    const largerFrench = [source('Nous sommes ouverts pour vous avec plaisir.', 300), source('Open with free parking, your way.', 100)];
    expect(mergedKnowledge(largerFrench).language).toBe('fr');
    expect(mergedKnowledge([]).language).toBe('en');
  });

  it('are merged once while the sources stay the same, again when one changes', () => {
    const merged = mergedKnowledge([english, french]);
    expect(mergedKnowledge([english, french])).toBe(merged);
    const other = mergedKnowledge([english, source('Open every day with free parking.', 5)]);
    expect(other).not.toBe(merged);
    expect(other.vocabulary.counts.has('parking')).toBe(true);
    expect(mergedKnowledge([english])).toEqual({ entities: english.entities, vocabulary: english.vocabulary, language: 'en' });
  });
});

describe('a passage the rankings agree on', () => {
  const bySentences = ['a', 'b', 'c', 'd'];
  const fullText = ['c', 'a', 'e', 'b'];
  const meaning = ['f', 'g', 'c', 'a'];

  it('stands among the first three of two rankings at least', () => {
    expect(agreedIds(['a', 'b', 'c', 'f'], [bySentences, fullText, meaning])).toEqual(['a', 'c']);
  });

  it('is not one that a single ranking puts first, nor one the others find only further down', () => {
    // "f" is meaning's first and no other's; "b" is second by sentences and fourth by full text.
    expect(agreedIds(['f', 'b'], [bySentences, fullText, meaning])).toEqual([]);
    expect(agreedIds(['b'], [bySentences, fullText, meaning], 4)).toEqual(['b']);
  });

  it('keeps the order it is asked in, and needs two rankings', () => {
    expect(agreedIds(['c', 'a'], [bySentences, fullText, meaning])).toEqual(['c', 'a']);
    expect(agreedIds(['a'], [bySentences])).toEqual([]);
  });
});

describe('a name typed in lower case (issue 39, thirteenth pass)', () => {
  const site = vocabularyOf(['Installations come with a 5-year labor warranty on every boiler and water heater we fit.']);

  it('is a word neither English nor the site writes: written as the name it is', () => {
    expect(withNamesCapitalised('how long is the warranty on a navien boiler', site)).toBe('how long is the warranty on a Navien boiler');
  });

  it('is not a word of the site, an English word, nor a compound of two ("bloodwork", "motorhome")', () => {
    const text = 'can the installations of my motorhome boiler wait for bloodwork';
    expect(withNamesCapitalised(text, site)).toBe(text);
  });
});

describe('a question read with what was told before it', () => {
  const weighs = (q: ReturnType<typeof questionIn>) => Object.fromEntries(q.terms.map((t) => [t.word, !t.incidental]));

  it('asks "how much is it" of the question before it: its words are the subject, the story\'s stay circumstances', () => {
    const q = questionIn('how much is it', 'my dog is 9. does he need blood work before his dental');
    expect(q.want).toBe('price');
    expect(weighs(q)).toMatchObject({ blood: true, work: true, dental: true, dog: false });
  });

  it('keeps the story a circumstance when the question names its own subject, or the story asks nothing', () => {
    expect(weighs(questionIn('how much is boarding', 'does he need blood work'))).toMatchObject({ boarding: true, blood: false });
    expect(weighs(questionIn('how much is it', "been growing my hair out to donate it. it's about 12 inches now"))).toMatchObject({ hair: false, inches: false });
  });
});
