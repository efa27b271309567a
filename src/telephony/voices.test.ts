import { describe, expect, it } from 'vitest';
import { carrierVoice, prosodyOf } from './voices.ts';

describe('carrier voices (issue 43, "The voice profile acts")', () => {
  it('the locale comes from the agent\'s region, else the accent, else the language; the base voice picks within it', () => {
    expect(carrierVoice({ baseVoice: 'ash', language: 'en' })).toEqual({ voice: 'Polly.Matthew-Neural', language: 'en-US', listen: 'en-US' });
    expect(carrierVoice({ baseVoice: 'alloy', language: 'en', accent: 'australian' })).toMatchObject({ voice: 'Polly.Olivia-Neural', language: 'en-AU' });
    expect(carrierVoice({ baseVoice: 'onyx', language: 'en', accent: 'irish' })).toMatchObject({ voice: 'Polly.Niamh-Neural', language: 'en-IE' });
    expect(carrierVoice({ baseVoice: 'ash', language: 'fr', accent: 'canadian' })).toMatchObject({ voice: 'Polly.Liam-Neural', language: 'fr-CA' });
    expect(carrierVoice({ baseVoice: 'ash', language: 'pt', agentLanguage: 'pt-PT' })).toMatchObject({ voice: 'Polly.Cristiano', language: 'pt-PT' });
    expect(carrierVoice({ baseVoice: 'alloy', language: 'zh' })).toEqual({ voice: 'Polly.Zhiyu-Neural', language: 'cmn-CN', listen: 'cmn-Hans-CN' });
    expect(carrierVoice({ baseVoice: 'alloy', language: 'xx' })).toEqual({ voice: 'Polly.Joanna-Neural', language: 'en-US', listen: 'en-US' });
  });

  it('an accent of another language: that language\'s voice says the words inside <lang>, recognition stays the call\'s', () => {
    expect(carrierVoice({ baseVoice: 'alloy', language: 'en', accent: 'german' }))
      .toEqual({ voice: 'Polly.Vicki-Neural', language: 'de-DE', listen: 'en-US', speaks: 'en-US' });
    // The accent of the call's own language is no foreign accent.
    expect(carrierVoice({ baseVoice: 'alloy', language: 'fr', accent: 'french' })).toEqual({ voice: 'Polly.Lea-Neural', language: 'fr-FR', listen: 'fr-FR' });
  });

  it('pace, energy and formality give the <prosody>; pitch only on voices that take it; the defaults give none', () => {
    expect(prosodyOf({ pace: 'normal', energy: 'medium', formality: 'neutral' }, 'Polly.Joanna-Neural')).toBeNull();
    expect(prosodyOf({ pace: 'slow', energy: 'low', formality: 'formal' }, 'Polly.Joanna-Neural')).toEqual({ rate: '75%', volume: 'soft' });
    expect(prosodyOf({ pace: 'fast', energy: 'high', formality: 'casual' }, 'Polly.Maxim')).toEqual({ rate: '125%', volume: 'loud', pitch: '+5%' });
  });
});
