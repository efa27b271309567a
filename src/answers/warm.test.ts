import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { analyzeQuestion, words } from './analysis.ts';
import { rankSentences } from './rank.ts';

/** Words of this folder's README, and each with a letter left out (slips for `nearestKnownWord`). */
const text = readFileSync(new URL('./README.md', import.meta.url), 'utf8');
const sample = [...new Set(words(text).filter((w) => /^[a-z]{3,}$/.test(w)))];
const slips = sample.filter((w) => w.length >= 6).map((w) => w.slice(0, 2) + w.slice(3));

describe('the answer engine warmed ahead (issue 44)', () => {
  it('WordNet read a few lines at a time (warmWordNet) reads what its read at once does', async () => {
    vi.resetModules();
    const warmed = await import('./wordnet.ts');
    await warmed.warmWordNet();
    vi.resetModules();
    const atOnce = await import('./wordnet.ts');
    expect(warmed).not.toBe(atOnce);
    const read = (wn: typeof warmed) => ({
      known: sample.map((w) => wn.isKnownWord(w)),
      senses: sample.map((w) => wn.senseCount(w)),
      synonyms: sample.map((w) => wn.synonyms(w)),
      compounds: sample.map((w) => wn.compoundHeads(w)),
      nearest: slips.map((w) => wn.nearestKnownWord(w)),
    });
    expect(read(warmed)).toEqual(read(atOnce));
    expect(sample.length).toBeGreaterThan(500);
  });
});

describe('what the engine keeps between questions', () => {
  it('a question read twice is the one reading, frozen', () => {
    const q = analyzeQuestion('What are your opening hours on Saturday?');
    expect(analyzeQuestion('What are your opening hours on Saturday?')).toBe(q);
    expect(Object.isFrozen(q) && Object.isFrozen(q.terms) && q.terms.every((t) => Object.isFrozen(t))).toBe(true);
  });

  it('passages read again (new rows, the same text) rank as before, each sentence from the passage given this time', () => {
    const passages = () => [
      { text: 'Saturday — Riverside: 8 am – 6 pm; Maplewood: 9 am – 5 pm. Sunday — both clinics closed.', section: 'Hours › Weekend', url: 'https://vet.example/hours', title: 'Hours | Pawsome Vets' },
      { text: 'Dr. Helen Park sees cats and dogs. Parking is free behind the building.', section: 'Visit us › Parking', url: 'https://vet.example/visit', title: 'Visit | Pawsome Vets' },
    ];
    const first = passages();
    const again = passages();
    const a = rankSentences('Is there parking at the Riverside clinic?', first);
    const b = rankSentences('Is there parking at the Riverside clinic?', again);
    const plain = (rs: typeof a) => rs.map(({ source: _, ...r }) => r);
    expect(plain(b)).toEqual(plain(a));
    expect(b.every((r) => again.includes(r.source as (typeof again)[number]))).toBe(true);
    expect(a.every((r) => first.includes(r.source as (typeof first)[number]))).toBe(true);
  });
});
