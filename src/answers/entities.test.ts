import { describe, expect, it } from 'vitest';
import { entitiesAsked, entityMatch, preferAsked, siteEntities, siteNames } from './entities.ts';
import { fuseRankings } from './retrieval.ts';

// Issue 39: one location's hours were given for another's. A passage knows the entity it stands under.

const page = (url: string, title: string, section: string | null, text: string) => ({ url, title, section, text });

const SITE = [
  page('/', 'Home | Alder Vets', 'Home | Alder Vets', 'Alder Vets has two clinics: Millbrook and Rowan Lake. Both Millbrook and Rowan Lake see cats and dogs.'),
  page('/clinics/millbrook', 'Millbrook | Alder Vets', 'Millbrook | Alder Vets › Hours', 'Monday to Friday, 8 am to 6 pm. Saturday 9 am to noon.'),
  page('/clinics/rowan-lake', 'Rowan Lake | Alder Vets', 'Rowan Lake | Alder Vets › Hours', 'Monday to Friday, 9 am to 7 pm. Closed on Saturday.'),
  page('/faq', 'FAQ | Alder Vets', 'FAQ | Alder Vets › Payments', 'We accept cash and cards at Millbrook and at Rowan Lake.'),
  page('/team', 'Team | Alder Vets', 'Team | Alder Vets › Dr. Ines Okafor', 'Dr. Okafor leads surgery. Ask for Dr. Okafor at either clinic.'),
  page('/team', 'Team | Alder Vets', 'Team | Alder Vets › Dr. Sam Reyes', 'Dr. Reyes sees exotic pets. Book Dr. Reyes on Saturdays.'),
  page('/blog/portland-trip', 'A trip to Portland | Alder Vets', 'A trip to Portland | Alder Vets', 'Our team went to Portland. Portland has great vets.'),
];

describe('site entities', () => {
  it('names are words written with a capital inside sentences, twice at least, never in lower case', () => {
    const names = siteNames(['We open at Millbrook daily. The Millbrook clinic is new.', 'Our Hours are long. Check the hours page.', 'Monday is busy.']);
    expect(names.has('millbrook')).toBe(true);
    // "Hours" is also written in lower case; "Monday" starts its sentence only.
    expect(names.has('hours')).toBe(false);
    expect(names.has('monday')).toBe(false);
  });

  it('a name in an e-mail or web address is no lower-case writing of it', () => {
    const texts = ['Visit Eastfield today. The Eastfield office is open.', 'Email: eastfield@example.com, or see https://example.com/eastfield.'];
    expect(siteNames(texts).has('eastfield')).toBe(true);
    expect(siteNames([...texts, 'Go east, then take the eastfield road.']).has('eastfield')).toBe(false);
  });

  it('a passage\'s entity is the names of its section path, the brand\'s left out', () => {
    const site = siteEntities(SITE);
    expect([...site.brand].sort()).toEqual(['alder', 'vets']);
    expect([...entitiesAsked('what time does millbrook close on saturday', site)]).toEqual(['millbrook']);
    expect(entityMatch(entitiesAsked('rowan lake hours?', site), SITE[1]!, site)).toBe('other');
    expect(entityMatch(entitiesAsked('rowan lake hours?', site), SITE[2]!, site)).toBe('asked');
    // A section naming no entity is about none: the FAQ's payments hold for both. A person is no sibling of a clinic.
    expect(entityMatch(entitiesAsked('rowan lake hours?', site), SITE[3]!, site)).toBe('neutral');
    expect(entityMatch(entitiesAsked('rowan lake hours?', site), SITE[4]!, site)).toBe('neutral');
    // A question naming none prefers nothing.
    expect(entityMatch(entitiesAsked('what are your hours', site), SITE[1]!, site)).toBe('neutral');
    // A sentence under another clinic's heading that names the one asked about is about it.
    expect(entityMatch(entitiesAsked('rowan lake on saturday?', site), { ...SITE[1]!, sentence: 'Rowan Lake is closed on Saturday.' }, site)).toBe('asked');
    expect(entityMatch(entitiesAsked('rowan lake on saturday?', site), { ...SITE[1]!, sentence: 'Saturday 9 am to noon.' }, site)).toBe('other');
  });

  it('a question naming one entity gets its passages before a sibling\'s (another of its kind), each group in its order', () => {
    const site = siteEntities(SITE);
    const ranked = [SITE[1]!, SITE[3]!, SITE[2]!, SITE[4]!, SITE[5]!];
    expect(preferAsked('is rowan lake open saturdays?', ranked, site).map((p) => p.section))
      .toEqual([SITE[3]!.section, SITE[2]!.section, SITE[4]!.section, SITE[5]!.section, SITE[1]!.section]);
    expect(preferAsked('are you open saturdays?', ranked, site)).toEqual(ranked);
    // People are entities too: asking for Dr. Okafor puts Dr. Reyes's section after the others, not the clinics'.
    expect(preferAsked('does dr okafor work saturdays', ranked, site).map((p) => p.section))
      .toEqual([SITE[1]!.section, SITE[3]!.section, SITE[2]!.section, SITE[4]!.section, SITE[5]!.section]);
    // A town a post is about is no sibling of the clinics: naming it demotes no clinic.
    expect(preferAsked('do you have a clinic in portland?', ranked, site)).toEqual(ranked);
  });
});

describe('reciprocal rank fusion', () => {
  it('an item high in two rankings beats one first in a single ranking; ties keep the order first met', () => {
    const fused = fuseRankings([['a', 'b', 'c'], ['b', 'd'], ['e', 'b']], [], 60);
    expect(fused.map(([id]) => id)).toEqual(['b', 'a', 'e', 'd', 'c']);
    expect(fused[0]![1]).toBeCloseTo(1 / 62 + 1 / 61 + 1 / 62, 10);
  });

  it('weighs each ranking by its weight: a first place in a ranking weighted twice beats a second place in two others', () => {
    const fused = fuseRankings([['a', 'b'], ['b', 'c'], ['c', 'b']], [2, 1, 1], 10);
    expect(fused.map(([id]) => id)).toEqual(['b', 'a', 'c']);
    expect(fused[0]![1]).toBeCloseTo(2 / 12 + 1 / 11 + 1 / 12, 10);
    expect(fused[1]![1]).toBeCloseTo(2 / 11, 10);
    // Equal weights: the item in two rankings' first places wins.
    expect(fuseRankings([['a', 'b'], ['b', 'c'], ['c', 'b']], [1, 1, 1], 10)[0]![0]).toBe('b');
  });

  it('reads each ranking to a bounded depth only', () => {
    const long = Array.from({ length: 100 }, (_, i) => `x${i}`);
    expect(fuseRankings([long]).length).toBe(40);
  });
});
