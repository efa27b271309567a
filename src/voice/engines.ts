import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseWav, resample } from './audio.ts';
import { lexiconOf, type Lexicon } from './lexicon.ts';
import { SAMPLE_RATE } from './mulaw.ts';

/**
 * The speech engines behind adapters. Offline defaults, from Debian (installed by
 * scripts/ensure-voice-engines.mjs): `pocketsphinx_continuous` with the `pocketsphinx-en-us` model
 * for speech-to-text, `espeak-ng` for text-to-speech. A provider adapter (a streaming STT over
 * WebSocket, an HTTP speech API) implements the same interfaces.
 */

/** One utterance being recognized while it is spoken: audio goes in as it arrives, the text comes out at the end. */
export interface SttStream {
  /** 8 kHz samples of the caller, in order. */
  write(samples: Int16Array): void;
  /** No more audio: the final transcript. */
  finish(): Promise<string>;
  abort(): void;
}

export interface SpeechToText {
  readonly name: string;
  /**
   * `words`: the words the call is likely to hear (the agent's own), which a recognizer may search among first
   * (pocketsphinx: lexicon.ts); the same promise for every utterance of a call.
   */
  open(words?: Promise<readonly string[]>): SttStream;
  /** A call begins: what its first utterance needs (a model loaded) is made ready while its greeting plays. */
  warm?(words?: Promise<readonly string[]>): void;
}

/** How the agent's voice sounds: the engine's voice and its prosody (from the voice profile). */
export interface TtsVoice {
  voice: string; wordsPerMinute: number; pitch: number; amplitude: number;
  /** The voice profile's base voice (a provider adapter maps it onto its own voices) and energy (its expressiveness). */
  baseVoice?: string | undefined;
  energy?: 'low' | 'medium' | 'high' | undefined;
}

export interface TextToSpeech { readonly name: string; synthesize(text: string, voice: TtsVoice): Promise<Int16Array> }

export const POCKETSPHINX = process.env.POCKETSPHINX_PATH || 'pocketsphinx_continuous';
export const ESPEAK_NG = process.env.ESPEAK_NG_PATH || 'espeak-ng';

/** The en-us model of Debian's `pocketsphinx-en-us`, which `pocketsphinx_continuous` loads by default. */
export const POCKETSPHINX_MODEL = '/usr/share/pocketsphinx/model/en-us';
const MODEL = POCKETSPHINX_MODEL;

/** libpocketsphinx and libsphinxbase through Python's ctypes: the functions a decoder uses, typed. */
const LIBPOCKETSPHINX = `ps = ctypes.CDLL('libpocketsphinx.so.3'); sb = ctypes.CDLL('libsphinxbase.so.3')
ps.ps_args.restype = ctypes.c_void_p
sb.cmd_ln_parse_r.restype = ctypes.c_void_p
sb.cmd_ln_parse_r.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int]
ps.ps_init.restype = ctypes.c_void_p; ps.ps_init.argtypes = [ctypes.c_void_p]
ps.ps_start_utt.argtypes = [ctypes.c_void_p]; ps.ps_end_utt.argtypes = [ctypes.c_void_p]
ps.ps_process_raw.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
ps.ps_get_hyp.restype = ctypes.c_char_p; ps.ps_get_hyp.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32)]
ps.ps_add_word.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
ps.ps_free.argtypes = [ctypes.c_void_p]
def open_decoder(argv, share=None):
    """A decoder; with 'share', a language model not of its own: share.enter(decoder) gives it one (after the acoustic
    model and dictionary are loaded, before the words are added) and share.leave() follows, whatever happened."""
    argv = list(argv); added = []
    if '-added' in argv:
        at = argv.index('-added')
        with open(argv[at + 1], encoding='utf-8') as f: added = [line.split(' ', 1) for line in f if ' ' in line]
        del argv[at:at + 2]
    args = [a.encode() for a in ['pocketsphinx'] + argv]
    config = sb.cmd_ln_parse_r(None, ps.ps_args(), len(args), (ctypes.c_char_p * len(args))(*args), 1)
    decoder = ps.ps_init(config) if config else None
    if not decoder: return None
    try:
        if share and not share.enter(decoder):
            ps.ps_free(decoder); return None
        for i, (word, phones) in enumerate(added):
            ps.ps_add_word(decoder, word.encode(), phones.strip().encode(), 1 if i == len(added) - 1 else 0)
    finally:
        if share: share.leave()
    return decoder
`;

/**
 * A warm pocketsphinx decoder (issue 44): libpocketsphinx, through Python's ctypes, behind a framed protocol on
 * stdin: `a` + length + 16 kHz samples (an utterance's audio, decoded as it comes), `e` + 0 (the utterance is over:
 * its words come back as one line on stdout). The model is loaded once per process, not once per utterance.
 */
const WARM_DECODER = `
import ctypes, sys
${LIBPOCKETSPHINX}decoder = open_decoder(sys.argv[1:])
if not decoder: sys.exit(2)
inp, out, started = sys.stdin.buffer, sys.stdout, False
while True:
    head = inp.read(5)
    if len(head) < 5: break
    n = int.from_bytes(head[1:5], 'little')
    body = inp.read(n) if n else b''
    if head[0:1] == b'a':
        if not started: ps.ps_start_utt(decoder); started = True
        ps.ps_process_raw(decoder, body, len(body) // 2, 0, 0)
    else:
        text = ''
        if started:
            ps.ps_end_utt(decoder); started = False
            hyp = ps.ps_get_hyp(decoder, None)
            text = hyp.decode('utf-8', 'replace') if hyp else ''
        out.write(text.replace('\\n', ' ') + '\\n'); out.flush()
`;

/** Idle warm decoders a recognizer keeps for its next utterances (about 40 MiB each); more are closed when freed. */
const WARM_IDLE = 24;

let warmAvailable: boolean | null = null;
/** Python 3 with libpocketsphinx loadable and the model present (and no other binary asked for by POCKETSPHINX_PATH). */
function canRunWarm(): boolean {
  warmAvailable ??= !process.env.POCKETSPHINX_PATH && existsSync(`${MODEL}/en-us`)
    && spawnSync('python3', ['-c', "import ctypes; ctypes.CDLL('libpocketsphinx.so.3'); ctypes.CDLL('libsphinxbase.so.3')"], { stdio: 'ignore' }).status === 0;
  return warmAvailable;
}

/**
 * The decoder's search settings beyond the model (bench/stt-decoder.ts measures the alternatives, bench/README.md
 * bench:voice's third and fifth passes): at most 3,000 HMMs and 10 word exits a frame cut its CPU by 40 % on the bench's
 * speech (the lexicon tree's search is most of it), for 7 more word errors in 134; narrower beams, `-ds 2`, `-topn 2`
 * cost more words for less. Tighter caps (2,000) lose words a transfer rule listens for ("tomorrow"). No second
 * (flat-lexicon) pass: it was a quarter of the CPU left and, with these caps, heard no more words (90 errors in 134
 * with it and without, fifth pass).
 */
export const DECODER_SETTINGS: readonly string[] = ['-maxhmmpf', '3000', '-maxwpf', '10', '-fwdflat', 'no'];

/** The model's arguments, each replaced by one of `settings` of the same name (`-lm`, `-dict`), then the other settings. */
function decoderArguments(settings: readonly string[]): string[] {
  const model: Record<string, string> = { '-hmm': `${MODEL}/en-us`, '-lm': `${MODEL}/en-us.lm.bin`, '-dict': `${MODEL}/cmudict-en-us.dict`, '-logfn': '/dev/null' };
  const rest: string[] = [];
  for (let i = 0; i < settings.length; i += 2) {
    if (settings[i]! in model) model[settings[i]!] = settings[i + 1]!;
    else rest.push(settings[i]!, settings[i + 1]!);
  }
  return [...Object.entries(model).flat(), ...rest];
}

/** A warm decoder as the recognizer's pool uses it: a process of its own (WarmDecoder) or one of DecoderHost's. */
type Decoder = Pick<WarmDecoder, 'write' | 'end' | 'close' | 'alive' | 'lexicon'>;

/** Calls `each` with every line a child process writes to its stdout (without the newline), as the lines come. */
function onLines(child: ChildProcessWithoutNullStreams, each: (line: string) => void): void {
  let buffered = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffered += chunk;
    for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      each(line);
    }
  });
}

/** One warm decoder process: utterances one after another, each answered by a line. */
export class WarmDecoder {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly lines: ((line: string | null) => void)[] = [];
  alive = true;

  /**
   * `settings` beyond the model (a lexicon's `-dict` replaces the model's dictionary; `-added FILE`: `word phones`
   * lines added to the dictionary and the language model); `lexicon` names the pool it returns to.
   */
  constructor(settings: readonly string[] = DECODER_SETTINGS, readonly lexicon = '') {
    this.child = spawn('python3', ['-c', WARM_DECODER, ...decoderArguments(settings)],
      { stdio: ['pipe', 'pipe', 'ignore'] }) as unknown as ChildProcessWithoutNullStreams;
    onLines(this.child, (line) => this.lines.shift()?.(line.trim()));
    this.child.stdin.on('error', () => {});
    const gone = () => {
      this.alive = false;
      for (const answer of this.lines.splice(0)) answer(null);
    };
    this.child.on('close', gone);
    this.child.on('error', gone);
    this.hold(false);
  }

  /** Only a decoder with an utterance to answer keeps the process running: an idle one ends with the process (its stdin closes). */
  private hold(busy: boolean): void {
    for (const handle of [this.child, this.child.stdin, this.child.stdout] as unknown as { ref?: () => void; unref?: () => void }[]) {
      if (busy) handle.ref?.();
      else handle.unref?.();
    }
  }

  write(samples: Int16Array): void {
    if (!this.alive || this.child.stdin.destroyed) return;
    const frame = Buffer.alloc(5 + samples.byteLength);
    frame.write('a', 0, 'latin1');
    frame.writeUInt32LE(samples.byteLength, 1);
    Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength).copy(frame, 5);
    this.child.stdin.write(frame);
  }

  /** The utterance is over: its words, or null when the decoder has gone. */
  end(): Promise<string | null> {
    if (!this.alive || this.child.stdin.destroyed) return Promise.resolve(null);
    this.hold(true);
    return new Promise((resolve) => {
      this.lines.push((line) => {
        this.hold(false);
        resolve(line);
      });
      this.child.stdin.write(Buffer.from([0x65, 0, 0, 0, 0]));
    });
  }

  close(): void { this.child.stdin.end(); }

  /** The decoder's process id (for the CPU it has used). */
  get pid(): number | undefined { return this.child.pid; }
}

/**
 * Warm decoders in one process, decoded by at most `threads` threads (issue 44, bench:voice's eighth and ninth passes;
 * the default; VOICE_DECODER_THREADS=0 turns it off). A decoder
 * process per call let 20 callers' decoders be 20 runnable processes on a 2-core machine whenever they fell behind, so
 * the kernel's fair share gave the service's event loop and PostgreSQL's backends a twenty-first of the machine each,
 * and every round trip of a turn waited. Here the decoders are as many threads as there are cores: they can still use
 * every core, but not crowd out the rest ten to one. Which decoder runs next is chosen: one whose utterance
 * is over (its words awaited) first, in the order they ended, then the one whose audio waited longest. A decoder is
 * loaded by a thread of its own as soon as it is asked for (while a call's greeting plays): its acoustic model and
 * dictionary its own, its language model shared (ps_set_lm) with other decoders of the same settings, read once per
 * copy (at most twice the threads' copies: the model's trie caches the last history it scored, so a copy serves one thread at a
 * time). That halves a decoder's load (0.27 → 0.13 CPU-s alone) and its memory (50 → 16 MiB); the words are the same
 * (an agent's added words go into its own copies of the model, added by the copy's first decoder exactly as a decoder
 * of its own adds them).
 * Messages on stdin: a letter, the decoder's id and a length (4 bytes each, little-endian), then the body: `o` its
 * arguments (JSON, as a WarmDecoder's command line), `a` 16 kHz samples, `e` the utterance is over (its words come
 * back on stdout as a line `id<TAB>text`, or `id<TAB>` + `\x01` when the decoder could not be loaded), `c` closed.
 */
const DECODER_HOST = `
import ctypes, json, sys, threading
${LIBPOCKETSPHINX}ps.ps_set_lm.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
ps.ps_set_search.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
ps.ps_get_config.restype = ctypes.c_void_p; ps.ps_get_config.argtypes = [ctypes.c_void_p]
ps.ps_get_logmath.restype = ctypes.c_void_p; ps.ps_get_logmath.argtypes = [ctypes.c_void_p]
sb.ngram_model_read.restype = ctypes.c_void_p; sb.ngram_model_read.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p]
sb.ngram_model_free.argtypes = [ctypes.c_void_p]
sb.logmath_retain.restype = ctypes.c_void_p; sb.logmath_retain.argtypes = [ctypes.c_void_p]
sb.logmath_free.argtypes = [ctypes.c_void_p]
# The library's log is one file for the process: set by each decoder's -logfn, it would be reopened and closed under
# the others' threads. It is turned off once, here, instead.
sb.err_set_logfp.argtypes = [ctypes.c_void_p]; sb.err_set_logfp(None)
THREADS, COPIES = max(1, int(sys.argv[1])), max(1, int(sys.argv[2]))
out, out_lock, cond = sys.stdout.buffer, threading.Lock(), threading.Condition()
decoders, order, lms = {}, [0], {}
class Decoder:
    def __init__(self, args): self.args, self.ops, self.busy, self.ps, self.started, self.failed, self.loading, self.lm = args, [], False, None, False, False, True, None
class Lm:
    """A language model read once and shared by decoders of the same settings (ps_set_lm). Its trie keeps a cache of
    the last history scored, so one thread at a time uses it: 'busy' while a decoder of it runs, loads or is freed."""
    def __init__(self): self.model, self.lmath, self.users, self.busy, self.ready, self.failed = None, None, 0, False, False, False
def answer(i, text):
    with out_lock:
        out.write(f'{i}\\t{text}\\n'.encode('utf-8', 'replace')); out.flush()
def without(argv, name):
    argv = list(argv)
    if name in argv:
        at = argv.index(name); del argv[at:at + 2]
    return argv
def lm_of(d):
    # The language model's copies by every setting but the dictionary (words added by -added change the model, so
    # they are in the key): at most COPIES (twice the threads, so that a thread seldom finds every decoder with audio
    # on a copy another thread holds); a decoder takes the least used.
    key = json.dumps(without(d.args, '-dict'))
    copies = lms.setdefault(key, [])
    if len(copies) < COPIES and all(c.users for c in copies): copies.append(Lm())
    lm = min(copies, key=lambda c: c.users)
    lm.users += 1
    return lm
class Share:
    """The decoder's language model, a shared copy: while it is given to the decoder and words are added to it (the
    first decoder of a copy adds its words to the model itself, ps_add_word; the others find them there), the copy
    is busy."""
    def __init__(self, lm, path): self.lm, self.path = lm, path
    def enter(self, p):
        lm = self.lm
        with cond:
            while lm.busy: cond.wait()
            lm.busy = True
        if not lm.ready:
            # Read as ps_set_lm_file reads it: the decoder's configuration and log base (retained: the copy outlives it).
            lm.lmath = sb.logmath_retain(ps.ps_get_logmath(p))
            lm.model = sb.ngram_model_read(ps.ps_get_config(p), self.path.encode(), 0, lm.lmath)
            lm.ready, lm.failed = True, not lm.model
        return not lm.failed and ps.ps_set_lm(p, b'_default', lm.model) == 0 and ps.ps_set_search(p, b'_default') == 0
    def leave(self):
        with cond: self.lm.busy = False; cond.notify_all()
def load(d):
    argv = without(d.args, '-logfn')
    with cond: d.lm = lm_of(d)
    # The acoustic model and the dictionary stay the decoder's own: this library offers no official way to share them.
    d.ps = open_decoder(without(argv, '-lm'), Share(d.lm, argv[argv.index('-lm') + 1]))
    if not d.ps: d.failed = True
def drop(lm):
    # Under cond, the copy not busy: its last decoder freed, the model goes.
    lm.users -= 1
    if lm.users: return
    for key, copies in list(lms.items()):
        if lm in copies: copies.remove(lm)
        if not copies: del lms[key]
    if lm.model: sb.ngram_model_free(lm.model)
    if lm.lmath: sb.logmath_free(lm.lmath)
    lm.model = lm.lmath = None
def run(i, d, ops):
    for op in ops:
        if op[0] == 'a':
            # Each piece as it came, as a decoder process is given it (the library's streamed normalisation and
            # noise estimate depend on how the audio is cut).
            if d.failed: continue
            if not d.started: ps.ps_start_utt(d.ps); d.started = True
            ps.ps_process_raw(d.ps, op[2], len(op[2]) // 2, 0, 0)
        elif op[0] == 'e':
            if d.failed: answer(i, '\\x01'); continue
            text = ''
            if d.started:
                ps.ps_end_utt(d.ps); d.started = False
                hyp = ps.ps_get_hyp(d.ps, None)
                text = hyp.decode('utf-8', 'replace').replace('\\n', ' ').replace('\\t', ' ') if hyp else ''
            answer(i, text)
        elif op[0] == 'c':
            if d.ps: ps.ps_free(d.ps); d.ps = None
def loader(d):
    try: load(d)
    finally:
        with cond: d.loading = False; cond.notify_all()
def pick():
    best, key = None, None
    for i, d in decoders.items():
        if d.busy or d.loading or not d.ops or (d.lm and d.lm.busy): continue
        end = next((op[1] for op in d.ops if op[0] == 'e'), None)
        k = (0, end) if end is not None else (1, d.ops[0][1])
        if key is None or k < key: best, key = i, k
    return best
def work():
    while True:
        with cond:
            i = pick()
            while i is None: cond.wait(); i = pick()
            d = decoders[i]; d.busy = True
            if d.lm: d.lm.busy = True
            cut = next((n for n, op in enumerate(d.ops) if op[0] in 'ec'), len(d.ops) - 1) + 1
            ops, d.ops = d.ops[:cut], d.ops[cut:]
        try: run(i, d, ops)
        finally:
            with cond:
                d.busy = False
                closed = any(op[0] == 'c' for op in ops)
                if closed: decoders.pop(i, None)
                if d.lm:
                    d.lm.busy = False
                    if closed: drop(d.lm)
                cond.notify_all()
for _ in range(THREADS): threading.Thread(target=work, daemon=True).start()
inp = sys.stdin.buffer
while True:
    head = inp.read(9)
    if len(head) < 9: break
    kind, i, n = chr(head[0]), int.from_bytes(head[1:5], 'little'), int.from_bytes(head[5:9], 'little')
    body = inp.read(n) if n else b''
    with cond:
        order[0] += 1
        if kind == 'o':
            decoders[i] = Decoder(json.loads(body))
            threading.Thread(target=loader, args=(decoders[i],), daemon=True).start()
        elif i in decoders: decoders[i].ops.append((kind, order[0], body))
        cond.notify_all()
`;

/**
 * `VOICE_DECODER_THREADS`: the warm decoders in one process (DecoderHost), decoded by that many threads; unset or
 * `cores`, as many as the machine has (the default); `0`, a process per decoder, as before. The default since the quiet
 * run of 2026-12-07 (bench/README.md): with the host, 20 calls' caller p95 805 ms against 2,093 ms with processes, p50
 * 269 against 1,053, barge-in p95 22 against 188 ms, the decoders' CPU 0.140 against 0.236 s a second of speech, RSS per
 * call 36 against 76 MiB; the same words for the same audio. On a machine shared with other people's busy processes
 * (bench:voice's eighth and ninth passes) the host's threads can fall behind where 20 processes would take a larger
 * share: `VOICE_DECODER_THREADS=0` there.
 */
let decoderThreads = availableParallelism();

/** The setting, as the configuration checked it (`^(cores|\d+)$`): the service sets it at start (`startService`). */
export function useDecoderThreads(setting: string): void {
  decoderThreads = setting === 'cores' ? availableParallelism() : Number(setting);
}

/** The decoders' process of this service, started with the first decoder (again should it have gone). */
class DecoderHost {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting = new Map<number, ((line: string | null) => void)[]>();
  private pending = 0;
  private next = 0;
  alive = true;

  constructor() {
    // A session of its own (setsid): where the kernel shares the CPU by session first (Linux's autogroups), the decoders
    // together weigh as much as the service's process, however many of them are busy. It ends when its stdin closes.
    // The language model's copies: each serves one thread at a time.
    this.child = spawn('python3', ['-c', DECODER_HOST, String(decoderThreads), String(2 * decoderThreads)], { stdio: ['pipe', 'pipe', 'ignore'], detached: true }) as unknown as ChildProcessWithoutNullStreams;
    onLines(this.child, (line) => {
      const tab = line.indexOf('\t');
      const text = line.slice(tab + 1);
      this.answer(Number(line.slice(0, tab)), text === '\x01' ? null : text.trim());
    });
    this.child.stdin.on('error', () => {});
    const gone = () => {
      this.alive = false;
      for (const id of [...this.waiting.keys()]) while (this.waiting.get(id)?.length) this.answer(id, null);
    };
    this.child.on('close', gone);
    this.child.on('error', gone);
    this.hold();
  }

  /** Only a process with an utterance to answer keeps the service's process running. */
  private hold(): void {
    for (const handle of [this.child, this.child.stdin, this.child.stdout] as unknown as { ref?: () => void; unref?: () => void }[]) {
      if (this.pending) handle.ref?.();
      else handle.unref?.();
    }
  }

  private answer(id: number, line: string | null): void {
    const queue = this.waiting.get(id);
    const resolve = queue?.shift();
    if (!resolve) return;
    if (!queue!.length) this.waiting.delete(id);
    this.pending--;
    this.hold();
    resolve(line);
  }

  send(kind: 'o' | 'a' | 'e' | 'c', id: number, body: Uint8Array | null): boolean {
    if (!this.alive || this.child.stdin.destroyed) return false;
    const frame = Buffer.alloc(9 + (body?.byteLength ?? 0));
    frame.write(kind, 0, 'latin1');
    frame.writeUInt32LE(id, 1);
    frame.writeUInt32LE(body?.byteLength ?? 0, 5);
    if (body) frame.set(body, 9);
    this.child.stdin.write(frame);
    return true;
  }

  /** A decoder under `settings` (a WarmDecoder's), loaded by the process's threads before its first audio. */
  open(settings: readonly string[], lexicon: string): HostedDecoder {
    const id = this.next++ % 0x1_0000_0000;
    this.send('o', id, Buffer.from(JSON.stringify(decoderArguments(settings))));
    return new HostedDecoder(this, id, lexicon);
  }

  /** The words of decoder `id`'s utterance, once its audio before has been decoded; null when it or the process has gone. */
  end(id: number): Promise<string | null> {
    return new Promise((resolve) => {
      if (!this.send('e', id, null)) return resolve(null);
      this.waiting.set(id, [...(this.waiting.get(id) ?? []), resolve]);
      this.pending++;
      this.hold();
    });
  }
}

/** One decoder of the decoders' process, used as a WarmDecoder is: utterances one after another, each answered by its words. */
class HostedDecoder {
  private loaded = true;
  constructor(private readonly host: DecoderHost, private readonly id: number, readonly lexicon: string) {}

  get alive(): boolean { return this.loaded && this.host.alive; }

  write(samples: Int16Array): void {
    if (this.alive) this.host.send('a', this.id, new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
  }

  async end(): Promise<string | null> {
    if (!this.alive) return null;
    const words = await this.host.end(this.id);
    // Its model could not be loaded (or the process went): not taken again.
    if (words === null) this.loaded = false;
    return words;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.loaded = false;
    this.host.send('c', this.id, null);
  }
  private closed = false;
}

/**
 * Pocketsphinx, fed as the caller speaks: the search runs while the utterance goes on, so only its tail is left to
 * decode at the endpoint. 16 kHz is the model's rate: the 8 kHz line is upsampled. Warm decoders (the model loaded
 * once, kept between utterances, a pool shared by the recognizer's calls) when Python 3 can load libpocketsphinx;
 * otherwise a `pocketsphinx_continuous` process per utterance. A call that gives its words searches the lexicon of
 * those words and the model's most probable ones (lexicon.ts), with a pool of decoders per lexicon.
 */
export function createPocketsphinx(): SpeechToText {
  if (!canRunWarm()) return continuousPocketsphinx();
  /** Idle decoders by their lexicon's dictionary ('' for the whole model's). */
  const idle = new Map<string, Decoder[]>();
  let host: DecoderHost | null = null;
  let idleCount = 0;
  const lexicons = new WeakMap<Promise<readonly string[]>, Promise<Lexicon | null>>();
  const lexiconFor = (words: Promise<readonly string[]> | undefined): Promise<Lexicon | null> => {
    if (!words) return Promise.resolve(null);
    let lexicon = lexicons.get(words);
    if (!lexicon) {
      // Words that could not be read, or a lexicon that could not be built: the whole model, as before.
      lexicon = words.then((w) => lexiconOf(MODEL, w), () => null).catch(() => null);
      lexicons.set(words, lexicon);
    }
    return lexicon;
  };
  const load = (lexicon: Lexicon | null): Decoder => {
    const settings = [...DECODER_SETTINGS, ...lexiconSettings(lexicon)];
    if (!decoderThreads) return new WarmDecoder(settings, lexicon?.dict ?? '');
    if (!host?.alive) host = new DecoderHost();
    return host.open(settings, lexicon?.dict ?? '');
  };
  const take = (lexicon: Lexicon | null): Decoder => {
    const decoder = idle.get(lexicon?.dict ?? '')?.pop();
    if (decoder) idleCount--;
    return decoder ?? load(lexicon);
  };
  const release = (decoder: Decoder) => {
    if (!decoder.alive || idleCount >= WARM_IDLE) return decoder.close();
    const pool = idle.get(decoder.lexicon) ?? [];
    pool.push(decoder);
    idle.set(decoder.lexicon, pool);
    idleCount++;
  };
  return {
    name: 'pocketsphinx',
    // A decoder for the call's first words, its model loaded now rather than while the caller speaks.
    warm(words) {
      void lexiconFor(words).then((lexicon) => { if (idleCount < WARM_IDLE) release(load(lexicon)); });
    },
    open(words) {
      // Taken at the utterance's first sound, so the decoder of the one before is free again by then; until the
      // call's lexicon is ready (built while the greeting plays, or read from its cache), the audio waits for it.
      const lexicon = lexiconFor(words);
      let decoder: Decoder | null = null;
      let waiting: Int16Array[] | null = null;
      let over = false;
      const started = (): Promise<Decoder | null> => lexicon.then((l) => {
        if (!decoder && waiting) {
          decoder = take(l);
          for (const samples of waiting) decoder.write(samples);
          waiting = null;
        }
        return decoder;
      });
      return {
        write(samples) {
          if (over) return;
          const up = resample(samples, SAMPLE_RATE, 16000);
          if (decoder) return decoder.write(up);
          if (waiting) return void waiting.push(up);
          waiting = [up];
          void started();
        },
        async finish() {
          over = true;
          if (!decoder && !waiting) return '';
          const taken = await started();
          if (!taken) return '';
          const words = await taken.end();
          release(taken);
          return words ?? '';
        },
        abort() {
          if (over) return;
          over = true;
          if (decoder || waiting) void started().then((taken) => taken?.end().then(() => release(taken)));
        },
      };
    },
  };
}

/** A lexicon's arguments to the decoder: its dictionary and the words added to the language model. */
function lexiconSettings(lexicon: Lexicon | null): string[] {
  if (!lexicon) return [];
  return ['-dict', lexicon.dict, ...(lexicon.added ? ['-added', lexicon.added] : [])];
}

/** `pocketsphinx_continuous` through stdin, a process (and a model load) per utterance. */
function continuousPocketsphinx(): SpeechToText {
  return {
    name: 'pocketsphinx',
    open() {
      // Node's stdin pipe is a socket, which /dev/stdin cannot open: `cat` turns it into a pipe.
      const child = spawn('sh', ['-c', 'cat | exec "$0" -infile /dev/stdin -logfn /dev/null', POCKETSPHINX], { stdio: ['pipe', 'pipe', 'ignore'] });
      let out = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => { out += chunk; });
      child.stdin.on('error', () => {});
      const done = new Promise<string>((resolve) => {
        child.on('close', () => resolve(out.split('\n').map((l) => l.trim()).filter(Boolean).join(' ')));
        child.on('error', () => resolve(''));
      });
      return {
        write(samples) {
          const up = resample(samples, SAMPLE_RATE, 16000);
          if (!child.stdin.destroyed) child.stdin.write(Buffer.from(up.buffer, up.byteOffset, up.byteLength));
        },
        finish() {
          child.stdin.end();
          return done;
        },
        // Its input closed, the recognizer ends on its own; its words are not read.
        abort() { child.stdin.destroy(); },
      };
    },
  };
}

/**
 * A small helper process that starts the engine's commands for us (issue 44): Node forks its whole process to start a
 * command on the event loop's thread, and a service of several hundred MiB spent 30-100 ms of its loop on every
 * sentence's espeak-ng; forked from a small Python process, the same command costs the loop a line of JSON. Requests
 * are answered as their commands end, each by its id: exit code and stdout.
 */
const LAUNCHER = `
import json, subprocess, sys, threading
out, lock = sys.stdout.buffer, threading.Lock()
def run(rid, args):
    try:
        done = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        code, data = done.returncode, done.stdout
    except OSError:
        code, data = -1, b''
    with lock:
        out.write(rid.to_bytes(4, 'little') + code.to_bytes(4, 'little', signed=True) + len(data).to_bytes(4, 'little') + data); out.flush()
for line in sys.stdin.buffer:
    request = json.loads(line)
    threading.Thread(target=run, args=(request['id'], request['args']), daemon=True).start()
`;

/** The launcher of this process, started on first use; null once it could not run (commands are then spawned directly). */
let launcher: Launcher | null | undefined;

class Launcher {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting = new Map<number, (answer: { code: number; stdout: Buffer } | null) => void>();
  private next = 0;
  private buffered = Buffer.alloc(0);

  constructor() {
    this.child = spawn('python3', ['-c', LAUNCHER], { stdio: ['pipe', 'pipe', 'ignore'] }) as unknown as ChildProcessWithoutNullStreams;
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      while (this.buffered.length >= 12) {
        const length = this.buffered.readUInt32LE(8);
        if (this.buffered.length < 12 + length) break;
        const id = this.buffered.readUInt32LE(0);
        const code = this.buffered.readInt32LE(4);
        const stdout = this.buffered.subarray(12, 12 + length);
        this.buffered = this.buffered.subarray(12 + length);
        this.answer(id, { code, stdout });
      }
    });
    this.child.stdin.on('error', () => {});
    const gone = () => {
      if (launcher === this) launcher = null;
      for (const id of [...this.waiting.keys()]) this.answer(id, null);
    };
    this.child.on('close', gone);
    this.child.on('error', gone);
    this.hold();
  }

  /** Only a launcher with a command running keeps the process running. */
  private hold(): void {
    for (const handle of [this.child, this.child.stdin, this.child.stdout] as unknown as { ref?: () => void; unref?: () => void }[]) {
      if (this.waiting.size) handle.ref?.();
      else handle.unref?.();
    }
  }

  private answer(id: number, answer: { code: number; stdout: Buffer } | null): void {
    const waiting = this.waiting.get(id);
    this.waiting.delete(id);
    this.hold();
    waiting?.(answer);
  }

  /** `args` run to their end: exit code (-1: it could not start) and stdout; null when the launcher has gone. */
  run(args: string[]): Promise<{ code: number; stdout: Buffer } | null> {
    const id = this.next++ % 0x1_0000_0000;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.hold();
      this.child.stdin.write(`${JSON.stringify({ id, args })}\n`);
    });
  }
}

/** A command's exit code and stdout, started by the launcher when Python 3 is there (directly otherwise). */
async function runCommand(command: string, args: string[]): Promise<{ code: number | null; stdout: Buffer }> {
  if (launcher === undefined) launcher = spawnSync('python3', ['-c', ''], { stdio: 'ignore' }).status === 0 ? new Launcher() : null;
  const launched = await launcher?.run([command, ...args]);
  if (launched && launched.code !== -1) return launched;
  if (launched) throw new Error(`${command} could not be started`);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(chunks) }));
  });
}

/**
 * Samples of synthesized sentences an espeak-ng engine keeps (2 MiB at 16 bits: about 2 minutes of speech), the sentences
 * used longest ago dropped first.
 */
export const SYNTHESIZED_KEPT = 1024 * 1024;

/**
 * espeak-ng's WAV on stdout, resampled to the line's 8 kHz. espeak-ng says a text the same way every time for the same
 * voice and prosody, so a sentence is synthesized once (issue 44): the calls that ask for it while it is being
 * synthesized wait for that one synthesis, and it is kept for the next ones (a greeting, "Is there anything else?",
 * the fallback lines; 20 calls answering the same line at once ran 20 espeak-ng processes on 2 cores). Each caller gets
 * its own copy of the samples; a synthesis that failed is not kept.
 */
export function createEspeak(): TextToSpeech {
  const kept = new Map<string, { samples: Promise<Int16Array>; length: number }>();
  let keptLength = 0;
  const synthesize = async (text: string, voice: TtsVoice) => {
    const { code, stdout } = await runCommand(ESPEAK_NG, ['--stdout', '-v', voice.voice, '-s', String(voice.wordsPerMinute), '-p', String(voice.pitch), '-a', String(voice.amplitude), '--', text]);
    if (code !== 0) throw new Error(`espeak-ng exited with ${code}`);
    const wav = parseWav(stdout);
    return resample(wav.samples, wav.rate, SAMPLE_RATE);
  };
  return {
    name: 'espeak-ng',
    async synthesize(text, voice) {
      const key = JSON.stringify([voice.voice, voice.wordsPerMinute, voice.pitch, voice.amplitude, text]);
      let entry = kept.get(key);
      if (entry) {
        // Used again: the last to go.
        kept.delete(key);
        kept.set(key, entry);
      } else {
        const made = { samples: synthesize(text, voice), length: 0 };
        entry = made;
        kept.set(key, made);
        made.samples.then((samples) => {
          if (kept.get(key) !== made) return;
          made.length = samples.length;
          keptLength += samples.length;
          for (const [oldest, old] of kept) {
            if (keptLength <= SYNTHESIZED_KEPT || oldest === key) break;
            kept.delete(oldest);
            keptLength -= old.length;
          }
        }, () => {
          if (kept.get(key) === made) kept.delete(key);
        });
      }
      return (await entry.samples).slice();
    },
  };
}

/**
 * The espeak-ng voice of a call: the conversation's language, with the voice profile's pace
 * (words a minute), energy (pitch and loudness) and formality (a little slower when formal).
 */
export function ttsVoiceOf(language: string | null, profile: { pace?: string | null; energy?: string | null; formality?: string | null; base_voice?: string | null } | null): TtsVoice {
  const lang = (language ?? 'en').toLowerCase();
  const voice = lang.startsWith('fr') ? 'fr' : lang.startsWith('es') ? 'es' : lang.startsWith('de') ? 'de' : 'en-us';
  let wordsPerMinute = profile?.pace === 'slow' ? 140 : profile?.pace === 'fast' ? 200 : 170;
  if (profile?.formality === 'formal') wordsPerMinute -= 10;
  const pitch = profile?.energy === 'low' ? 35 : profile?.energy === 'high' ? 65 : 50;
  const amplitude = profile?.energy === 'low' ? 80 : profile?.energy === 'high' ? 120 : 100;
  const energy = profile?.energy === 'low' || profile?.energy === 'high' ? profile.energy : 'medium';
  return { voice, wordsPerMinute, pitch, amplitude, energy, ...(profile?.base_voice ? { baseVoice: profile.base_voice } : {}) };
}
