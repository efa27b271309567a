/**
 * bench:voice's callers (bench/voice.ts): its streamed sandbox calls, each its scripted lines then one line said over
 * the agent's answer. bench/voice.ts runs them in its own process, on the service's event loop (the first passes'
 * figures), or with `BENCH_CALLERS=thread` on a worker thread of their own, as a carrier's callers are not on the
 * service's loop (bench:voice's fourth pass: the callers' pacing and reading waited for that loop). Times are absolute
 * (`performance.timeOrigin + performance.now()`), so a worker's compare with the service's.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { createEspeak, ttsVoiceOf } from '../src/voice/engines.ts';
import { placeStreamedCall, type StreamedCall } from '../src/voice/sandbox-caller.ts';

export interface CallerPlan { url: string; signingToken: string; number: string; calls: number; script: Uint8Array[][]; interruption: Uint8Array[] }

/** One call: its turns' latencies (ms), its barge-in (absolute ms), or why it dropped, and its length in minutes. */
export interface CallResult {
  latencies: number[];
  /** The stream, and when each turn's last speech frame went out (absolute ms), beside `latencies`. */
  streamSid: string;
  speechEnds: number[];
  bargeIn: { streamSid: string; startedAt: number; clearedAt: number; startedFrame: number; lineSentAt: number[] } | null;
  dropped: string | null;
  minutes: number;
}

const absolute = (at: number) => performance.timeOrigin + at;

/** Every call of `plan` at once, on this thread. */
export function runCallers(plan: CallerPlan): Promise<CallResult[]> {
  const tts = createEspeak();
  const voice = ttsVoiceOf('en', null);
  const script = plan.script.map((frames) => frames.map((f) => Buffer.from(f)));
  const interruption = plan.interruption.map((f) => Buffer.from(f));
  const oneCall = async (): Promise<CallResult> => {
    const t0 = performance.now();
    const result: CallResult = { latencies: [], streamSid: '', speechEnds: [], bargeIn: null, dropped: null, minutes: 0 };
    let call: StreamedCall | null = null;
    try {
      call = await placeStreamedCall({ baseUrl: plan.url, signingToken: plan.signingToken, to: plan.number, tts, voice });
      result.streamSid = call.streamSid;
      let closedEarly = false;
      void call.closed.then(() => { closedEarly = true; });
      await call.nextReply();
      for (const frames of script) {
        const reply = call.nextReply();
        await call.sendFrames(frames);
        const heard = await reply;
        if (closedEarly) throw new Error('the call closed');
        result.latencies.push(heard.firstFrameAt - call.lastSpeechSentAt);
        result.speechEnds.push(absolute(call.lastSpeechSentAt));
      }
      // A line said over the agent's next answer.
      const answer = call.nextAudio();
      const reply = call.nextReply();
      await call.sendFrames(script[0]!);
      await answer;
      const cleared = new Promise<number>((resolve) => call!.once('clear', () => resolve(performance.now())));
      await call.sendFrames(interruption);
      const clearedAt = await cleared;
      result.bargeIn = {
        streamSid: call.streamSid, startedAt: absolute(call.speechStartedAt), clearedAt: absolute(clearedAt),
        startedFrame: call.speechStartedFrame, lineSentAt: call.lineSentAt.map(absolute),
      };
      await reply;
      await call.hangUp();
    } catch (err) {
      result.dropped = (err as Error).message;
      call?.drop();
    }
    result.minutes = (performance.now() - t0) / 60_000;
    return result;
  };
  return Promise.all(Array.from({ length: plan.calls }, oneCall));
}

/** Every call of `plan` at once, on a worker thread of their own. */
export function runCallersOnThread(plan: CallerPlan): Promise<CallResult[]> {
  return new Promise((resolve, reject) => {
    // A worker thread does not inherit the TypeScript loader (tsx) of the bench's process: it registers it, then loads this file.
    const boot = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}); })`;
    const worker = new Worker(boot, { eval: true, workerData: { benchVoiceCallers: plan } });
    worker.once('message', (results: CallResult[]) => { resolve(results); void worker.terminate(); });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the callers' thread exited with ${code}`)));
  });
}

if (!isMainThread && (workerData as { benchVoiceCallers?: CallerPlan } | null)?.benchVoiceCallers) {
  void runCallers((workerData as { benchVoiceCallers: CallerPlan }).benchVoiceCallers).then((results) => parentPort!.postMessage(results));
}
