import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { POCKETSPHINX_MODEL } from './engines.ts';
import { lexiconOf, wordsOf } from './lexicon.ts';

describe("a call's lexicon for the offline recognizer", () => {
  it('reads words as the dictionary spells them: lower case, apostrophes kept, each once', () => {
    expect(wordsOf(['Hello, Acme here. It’s Acme!', null, "Don't call after 6pm"])).toEqual(['hello', 'acme', 'here', "it's", "don't", 'call', 'after', 'pm']);
  });

  it("holds the language model's most probable words and the given ones; a given word the model lacks is added; others are left out", async () => {
    // Ranks in Debian's en-us model: "the" 2nd, "acme" and "alchemy" beyond the 1,000th; "cortese" is in the dictionary only.
    const lexicon = await lexiconOf(POCKETSPHINX_MODEL, ['acme', 'cortese', 'zzqx'], 1000);
    expect(lexicon).not.toBeNull();
    const dict = (await readFile(lexicon!.dict, 'utf8')).split('\n');
    expect(dict).toContain('the DH AH');
    expect(dict).toContain('acme AE K M IY');
    expect(dict.some((line) => line.startsWith('alchemy '))).toBe(false);
    expect(dict.some((line) => line.startsWith('cortese ') || line.startsWith('zzqx '))).toBe(false);
    expect(dict.length).toBeGreaterThan(1000);
    expect(dict.length).toBeLessThan(1500);
    expect(await readFile(lexicon!.added!, 'utf8')).toBe('cortese K ER T EY Z IY\n');
    // The same words (in any order) are the same lexicon; other words another.
    expect(await lexiconOf(POCKETSPHINX_MODEL, ['zzqx', 'cortese', 'acme'], 1000)).toEqual(lexicon);
    expect((await lexiconOf(POCKETSPHINX_MODEL, ['alchemy'], 1000))!.dict).not.toBe(lexicon!.dict);
  });
});
