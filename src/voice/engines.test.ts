import { describe, expect, it } from 'vitest';
import { createEspeak, ttsVoiceOf } from './engines.ts';
import { MulawFramer } from './mulaw.ts';

describe('espeak-ng, each sentence synthesized once (issue 44)', () => {
  it('a sentence asked for at once by many calls, and again, is the audio of a fresh engine; each caller gets its own copy', async () => {
    const voice = ttsVoiceOf('en', null);
    const alone = await createEspeak().synthesize('Is there anything else I can help with?', voice);
    expect(alone.length).toBeGreaterThan(8000);
    const tts = createEspeak();
    const atOnce = await Promise.all(Array.from({ length: 5 }, () => tts.synthesize('Is there anything else I can help with?', voice)));
    for (const samples of atOnce) expect(samples).toEqual(alone);
    atOnce[0]!.fill(0);
    expect(atOnce[1]).toEqual(alone);
    expect(await tts.synthesize('Is there anything else I can help with?', voice)).toEqual(alone);
  });

  it('another voice, prosody or text is synthesized, not taken from what was kept', async () => {
    const tts = createEspeak();
    const plain = ttsVoiceOf('en', null);
    const said = await tts.synthesize('Thank you for calling.', plain);
    const fast = await tts.synthesize('Thank you for calling.', ttsVoiceOf('en', { pace: 'fast' }));
    const high = await tts.synthesize('Thank you for calling.', ttsVoiceOf('en', { energy: 'high' }));
    const other = await tts.synthesize('Thank you for waiting.', plain);
    expect(fast.length).toBeLessThan(said.length);
    expect(high).not.toEqual(said);
    expect(other).not.toEqual(said);
    expect(await createEspeak().synthesize('Thank you for calling.', ttsVoiceOf('en', { pace: 'fast' }))).toEqual(fast);
  });
});

describe('the μ-law framer cut by index', () => {
  it('frames a long synthesis as frames pushed a sample at a time', () => {
    const samples = Int16Array.from({ length: 24_037 }, (_, i) => Math.round(Math.sin(i / 7) * 12_000 + ((i * 7919) % 2001) - 1000));
    const whole = new MulawFramer();
    const one = [...whole.pushSamples(samples), ...whole.flush()];
    const bit = new MulawFramer();
    const many = [...Array.from(samples, (s) => bit.pushSamples(Int16Array.of(s))).flat(), ...bit.flush()];
    expect(one.length).toBe(Math.ceil(24_037 / 160));
    expect(Buffer.concat(one)).toEqual(Buffer.concat(many));
  });
});
