import { describe, expect, it } from 'vitest';
import { FEATURES, featuresOf, fitReader, isPost, readerProbabilities, type ReaderInput, type ReaderModel } from './reader.ts';

// Issue 39: the offline reader's weights and threshold are fitted by a committed script, not set by hand.

const input = (over: Partial<ReaderInput>): ReaderInput => ({
  lexical: 0.3, lexicalRank: 5, fusedRank: Infinity, passageCosine: 0.2, denseRank: Infinity, sentenceCosine: 0, sentenceRank: Infinity,
  wantsKind: false, holdsKind: false, yesNo: false, entityAsked: false, entityOther: false, post: false, missing: false, absent: false, asks: false,
  ...over,
});

describe('the learned reader', () => {
  it('describes a candidate by one number per feature, none naming a word', () => {
    const f = featuresOf(input({ lexical: 0.8, lexicalRank: 0, post: true }));
    expect(f).toHaveLength(FEATURES.length);
    expect(f[FEATURES.indexOf('lexical')]).toBe(0.8);
    expect(f[FEATURES.indexOf('lexical_top')]).toBe(1);
    expect(f[FEATURES.indexOf('post')]).toBe(1);
    expect(f[FEATURES.indexOf('fused_rank')]).toBe(0);
  });

  it('gives each candidate its probability against the others and against "none of them"', () => {
    const model: ReaderModel = { features: FEATURES, weights: FEATURES.map((f) => (f === 'lexical' ? 10 : 0)), bias: 5, threshold: 0.5 };
    const strong = readerProbabilities([input({ lexical: 0.9 }), input({ lexical: 0.1 })], model);
    expect(strong[0]!).toBeGreaterThan(0.95);
    expect(strong[0]! + strong[1]!).toBeLessThan(1);
    // Weak candidates leave most of the probability to "none of them".
    const weak = readerProbabilities([input({ lexical: 0.1 }), input({ lexical: 0.2 })], model);
    expect(weak.reduce((a, b) => a + b, 0)).toBeLessThan(0.1);
  });

  it('fits weights that pick the answering candidate and say "none" for an unknown', () => {
    // A toy world: the answer is the candidate whose sentence is close in meaning; an unknown has none close.
    const questions = Array.from({ length: 40 }, (_, k) => {
      const answered = k % 4 !== 0;
      const inputs = [0, 1, 2, 3].map((i) => input({ sentenceCosine: answered && i === k % 4 ? 0.8 : 0.1 + 0.05 * i, lexical: 0.3 + 0.01 * ((k + i) % 5) }));
      return { rows: inputs.map(featuresOf), positive: inputs.map((c) => c.sentenceCosine === 0.8) };
    });
    const { weights, bias } = fitReader(questions, { epochs: 800 });
    expect(weights[FEATURES.indexOf('sentence_cosine')]!).toBeGreaterThan(1);
    const model: ReaderModel = { features: FEATURES, weights, bias, threshold: 0.5 };
    const picked = readerProbabilities([input({ sentenceCosine: 0.1 }), input({ sentenceCosine: 0.8 })], model);
    expect(picked[1]!).toBeGreaterThan(picked[0]!);
    expect(picked[0]! + picked[1]!).toBeGreaterThan(0.5);
    const none = readerProbabilities([input({ sentenceCosine: 0.1 }), input({ sentenceCosine: 0.15 })], model);
    expect(none[0]! + none[1]!).toBeLessThan(0.5);
  });

  it('knows blog and news posts by their path', () => {
    expect(isPost('https://shop.test/blog/our-trip')).toBe(true);
    expect(isPost('https://shop.test/news')).toBe(true);
    expect(isPost('https://shop.test/actualites/salon-2024')).toBe(true);
    expect(isPost('https://shop.test/pricing')).toBe(false);
    expect(isPost('https://shop.test/blogging-tips-service')).toBe(false);
  });
});
