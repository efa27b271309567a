import { describe, expect, it } from 'vitest';
import { resample } from './audio.ts';
import { createEspeak, createPocketsphinx, DECODER_SETTINGS, POCKETSPHINX_MODEL, ttsVoiceOf, WarmDecoder } from './engines.ts';
import { lexiconOf, wordsOf } from './lexicon.ts';
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

describe('the recognizer: decoders warmed while the greetings play (issue 44)', () => {
  it('calls warmed at once, then speaking at once, hear what a decoder process of their own hears', async () => {
    const tts = createEspeak();
    const voice = ttsVoiceOf('en', null);
    const lines = await Promise.all(['What are your opening hours', 'Do you deliver to my address', 'Can I speak to someone tomorrow']
      .map((line) => tts.synthesize(line, voice)));
    const words = Promise.resolve(wordsOf(['Acme deliveries', 'Hello, Acme here. How can I help?']));
    const lexicon = await lexiconOf(POCKETSPHINX_MODEL, await words);
    expect(lexicon).not.toBeNull();
    const frames = (samples: Int16Array) => Array.from({ length: Math.ceil(samples.length / 160) }, (_, i) => samples.subarray(i * 160, (i + 1) * 160));
    // A fresh decoder process for each line, given the line frame by frame as the recognizer gives it.
    const alone = await Promise.all(lines.map(async (samples) => {
      const decoder = new WarmDecoder([...DECODER_SETTINGS, '-dict', lexicon!.dict, ...(lexicon!.added ? ['-added', lexicon!.added] : [])], lexicon!.dict);
      for (const frame of frames(samples)) decoder.write(resample(frame, 8000, 16000));
      const heard = await decoder.end();
      decoder.close();
      return heard;
    }));
    expect(alone.every((heard) => heard && heard.length > 0)).toBe(true);
    // Six calls start (their decoders asked for ahead of their audio), then speak at once, two on each line.
    const stt = createPocketsphinx();
    const calls = Array.from({ length: 6 }, () => words.then((w) => w));
    for (const call of calls) stt.warm?.(call);
    const heard = await Promise.all(calls.map((call, i) => {
      const stream = stt.open(call);
      for (const frame of frames(lines[i % 3]!)) stream.write(frame);
      return stream.finish();
    }));
    expect(heard).toEqual([...alone, ...alone]);
  });
});
