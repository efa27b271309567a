import { describe, expect, it } from 'vitest';
import { questionParts } from './parts.ts';

const asks = (message: string) => questionParts(message).asks;

describe('questionParts', () => {
  it('reads a one-question message whole', () => {
    expect(questionParts('How much is a haircut?')).toEqual({ asks: ['How much is a haircut?'], story: '' });
    expect(asks('do u take cash')).toEqual(['do u take cash']);
    expect(asks('opening hours downtown')).toEqual(['opening hours downtown']);
    // "and" between two things asked about is one question.
    expect(asks('Do you sell bread and cakes?')).toEqual(['Do you sell bread and cakes?']);
  });

  it('sets apart the story told before the question', () => {
    expect(questionParts('my son starts school in the fall and needs new glasses. how much is an eye exam for a kid')).toEqual({
      asks: ['how much is an eye exam for a kid'], story: 'my son starts school in the fall and needs new glasses',
    });
    expect(asks("we're hosting a party for about 20 people, do you deliver to the north side?")).toEqual(['do you deliver to the north side']);
    expect(asks('je travaille tard le soir, la boutique du centre est encore ouverte à 20h ?')).toEqual(['la boutique du centre est encore ouverte à 20h']);
  });

  it('splits two questions joined by "and", or asked in two sentences', () => {
    expect(asks('whats the setup fee and do you charge a deposit')).toEqual(['whats the setup fee', 'do you charge a deposit']);
    expect(asks('price of a tune-up and can i drop the bike off the night before')).toEqual(['price of a tune-up', 'can i drop the bike off the night before']);
    // A typed "+" joins as "and" does.
    expect(asks('gift card price + which shop sells it')).toEqual(['gift card price', 'which shop sells it']);
    expect(asks('What are your hours? Where do I park?')).toEqual(['What are your hours', 'Where do I park']);
    expect(asks('combien coûte la révision et faut il prendre rendez-vous')).toEqual(['combien coûte la révision', 'faut il prendre rendez-vous']);
  });

  it('keeps a message whose clauses do not ask whole, and at most three parts', () => {
    expect(asks('I would like to book a table for four on Friday.')).toEqual(['I would like to book a table for four on Friday.']);
    expect(asks('what is a? what is b? what is c? what is d?')).toHaveLength(3);
  });
});
