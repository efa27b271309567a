/**
 * Not a benchmark: the offline recognizer's settings measured one against another (issue 44, bench/README.md,
 * bench:voice's third pass). `node scripts/run.mjs bench stt-decoder [name...]`.
 *
 * The bench:voice callers' lines (espeak-ng, μ-law at 8 kHz), cut into utterances by the call's own voice activity
 * detector as a streamed call does (its first sound, the words, half the endpoint's silence: what a call's recognizer
 * is fed), decoded by a warm pocketsphinx decoder under each variant of settings (the variants side by side, a decoder
 * each), one utterance after another, 20 ms frame by frame as the call writes them. Prints, per variant: CPU seconds of the decoder per second of audio fed (its
 * model load excluded), the word error rate against the scripted lines (the bench's, and a dozen more lines a caller
 * might say), and what it heard of the first line.
 * BENCH_ROUNDS (default 3) passes over the lines per variant; the CPU is their median. The arguments name variants
 * (VARIANTS below), give settings (`'-maxhmmpf 2000 -ds 2'`), or a call's lexicon (`'lexicon-5000 [settings]'`: the bench
 * agent's words and the language model's 5,000 most probable, src/voice/lexicon.ts; bench:voice's fifth pass); none:
 * every variant. BENCH_STT_LINES ('line|line') decodes only those lines.
 */
import { readFileSync } from 'node:fs';
import { createEspeak, DECODER_SETTINGS, POCKETSPHINX_MODEL as MODEL, ttsVoiceOf, WarmDecoder } from '../src/voice/engines.ts';
import { resample } from '../src/voice/audio.ts';
import { decodeMulaw, FRAME_SAMPLES, MulawFramer, SAMPLE_RATE } from '../src/voice/mulaw.ts';
import { createVad, ENDPOINT_MS, SILENCE_FED } from '../src/voice/vad.ts';
import { median, positiveInt, runBenchmark, say } from './harness.ts';
import { AGENT_GREETING, AGENT_NAME, LINES, INTERRUPTION, wordErrors } from './voice-script.ts';
import { lexiconOf, wordsOf } from '../src/voice/lexicon.ts';

const ROUNDS = positiveInt('BENCH_ROUNDS', 3);
/** Silent frames of a pause fed as they come (the call's SILENCE_FED; BENCH_SILENCE_FED to compare). */
const SILENCE = positiveInt('BENCH_SILENCE_FED', SILENCE_FED);

/** More lines a caller might say, beyond the bench's few (its 48 words tell the variants apart poorly): a second figure. */
const MORE_LINES = [
  'I would like to change my booking to next Friday',
  'My order has not arrived yet',
  'Can you send me the invoice by email please',
  'What time do you close on Sunday',
  'I need to cancel my subscription',
  'Is there a parking lot near the store',
  'How long does the delivery take',
  'Can I pay with a credit card',
  'I forgot my password and cannot log in',
  'Please call me back this afternoon',
  'Do you have any tables free tonight',
  'The product I received is broken',
];

/** The variants: a name and the decoder's arguments beyond the model. */
const VARIANTS: Record<string, readonly string[]> = {
  current: DECODER_SETTINGS,
  defaults: [],
  ds2: ['-ds', '2'],
  topn2: ['-topn', '2'],
  'no-fwdflat': ['-fwdflat', 'no'],
  'no-bestpath': ['-bestpath', 'no'],
  'no-fwdflat-bestpath': ['-fwdflat', 'no', '-bestpath', 'no'],
  'beam-1e-40': ['-beam', '1e-40', '-wbeam', '1e-30', '-pbeam', '1e-40'],
  'beam-1e-30': ['-beam', '1e-30', '-wbeam', '1e-20', '-pbeam', '1e-30'],
  'maxhmmpf-3000': ['-maxhmmpf', '3000', '-maxwpf', '10'],
  'maxhmmpf-1500': ['-maxhmmpf', '1500', '-maxwpf', '5'],
  'pl-window-10': ['-pl_window', '10'],
};

/** Seconds of CPU a process has used, from /proc. */
function cpuOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** What a streamed call's recognizer is fed of `text` said on the line: the call's own detector cuts the utterance. */
async function utterancesOf(text: string): Promise<Int16Array[][]> {
  const tts = createEspeak();
  const framer = new MulawFramer();
  const speech = [...framer.pushSamples(await tts.synthesize(text, ttsVoiceOf('en', null))), ...framer.flush()].map((f) => decodeMulaw(f));
  const silence = Array.from({ length: 50 }, () => new Int16Array(FRAME_SAMPLES));
  const endpoint = ENDPOINT_MS.normal;
  const earlyFrames = Math.max(1, Math.round(endpoint / 2 / 20));
  const vad = createVad({ endpointMs: endpoint });
  const out: Int16Array[][] = [];
  let fed: Int16Array[] = [];
  let early = false;
  let held: Int16Array[] = [];
  // As CallStream.onMedia: the first sound at the start, every frame while speaking (a pause's beyond SILENCE held until
  // words follow), the recognizer finished early halfway through the endpoint's silence (words again: the whole
  // utterance to the next one).
  for (const frame of [...silence, ...speech, ...silence]) {
    const event = vad.push(frame);
    if (event?.type === 'speech_start') fed.push(...event.preroll);
    else if (vad.speaking && early) {
      if (vad.quietFrames === 0) {
        early = false;
        out.pop();
        fed = [...vad.utterance];
      }
    } else if (vad.speaking && vad.quietFrames > SILENCE) held.push(frame);
    else if (vad.speaking) fed.push(...held.splice(0), frame);
    if (vad.speaking && !early && vad.quietFrames === earlyFrames) {
      held = [];
      out.push(fed);
      fed = [];
      early = true;
    }
    if (event?.type === 'speech_end') early = false;
  }
  return out;
}

async function main(): Promise<void> {
  const names = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(VARIANTS);
  // BENCH_STT_LINES ('line|line'): only these lines (one figure), e.g. a test's line that must be heard.
  const only = process.env.BENCH_STT_LINES?.split('|').filter(Boolean);
  const lines = only ?? [...LINES, INTERRUPTION, ...MORE_LINES];
  const benchLines = only ? lines.length : LINES.length + 1;
  const utterances = await Promise.all(lines.map(utterancesOf));
  const seconds = utterances.flat().reduce((sum, u) => sum + u.length * FRAME_SAMPLES, 0) / SAMPLE_RATE;
  say(`silence fed ${SILENCE} frames; ${lines.length} lines (${benchLines} of bench:voice), ${utterances.flat().length} utterances, ${seconds.toFixed(1)} s of audio fed per round, ${ROUNDS} rounds a variant; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  // The variants side by side (each decoder its own process): their CPU is their own, whatever runs beside them.
  const results = await Promise.all(names.map(async (name) => {
    // A name of VARIANTS, or the settings themselves (`'-beam 1e-40 -ds 2'`).
    // `lexicon-N [settings]`: the lexicon of a call to the bench agent with N of the model's words (lexicon.ts).
    const [head, ...rest] = name.split(/\s+/);
    const common = /^lexicon-(\d+)$/.exec(head!)?.[1];
    const lexicon = common ? await lexiconOf(MODEL, wordsOf([AGENT_NAME, AGENT_GREETING]), Number(common)) : null;
    if (common && !lexicon) throw new Error(`the lexicon of ${name} could not be built`);
    const given = common ? (rest.length ? rest : DECODER_SETTINGS) : name.startsWith('-') ? name.split(/\s+/) : VARIANTS[name];
    if (!given) throw new Error(`no variant ${name}`);
    const settings = lexicon ? [...given, '-dict', lexicon.dict, ...(lexicon.added ? ['-added', lexicon.added] : [])] : given;
    const decoder = new WarmDecoder(settings);
    if (await decoder.end() === null) throw new Error(`the decoder did not start with ${settings.join(' ')}`);
    const cpu: number[] = [];
    let errors = [0, 0];
    let words = [0, 0];
    let first = '';
    for (let round = 0; round < ROUNDS; round++) {
      const before = cpuOf(decoder.pid!);
      errors = [0, 0];
      words = [0, 0];
      for (const [i, line] of utterances.entries()) {
        const heard: string[] = [];
        for (const utterance of line) {
          for (const frame of utterance) decoder.write(resample(frame, SAMPLE_RATE, 16000));
          heard.push(await decoder.end() ?? '');
        }
        const wer = wordErrors(lines[i]!, heard.join(' '));
        const set = i < benchLines ? 0 : 1;
        errors[set]! += wer.errors;
        words[set]! += wer.words;
        if (i === 0) first = heard.join(' ');
      }
      cpu.push(cpuOf(decoder.pid!) - before);
    }
    decoder.close();
    return `${(name.startsWith('-') ? 'given' : common ? `lexicon-${common}` : name).padEnd(22)} CPU ${(median(cpu) / seconds).toFixed(3)} s per audio second, WER ${((errors[0]! / words[0]!) * 100).toFixed(1)} % (${errors[0]} / ${words[0]}), more lines ${((errors[1]! / words[1]!) * 100).toFixed(1)} % (${errors[1]} / ${words[1]}), heard "${first}"  [${settings.join(' ')}]`;
  }));
  for (const line of results) say(line);
}

await runBenchmark(main);
