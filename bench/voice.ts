/**
 * Streamed voice benchmark (issue 44): `npm run bench:voice` (or `node scripts/run.mjs bench voice`).
 *
 * The real service (API and workers in this process, a fresh PostgreSQL database, an in-memory
 * Temporal dev server, the sandbox carrier) with the offline engines (pocketsphinx, espeak-ng).
 * BENCH_CALLS (default 20) streamed sandbox calls at once, each BENCH_TURNS (default 5) scripted
 * lines said in real time by the sandbox's streamed caller, each line waiting for the agent's whole
 * answer; then one barge-in per call (a line said over the agent's answer).
 *
 * Prints: end of caller speech → first agent audio byte (p50, p95, p99) as the caller hears it (its
 * last speech frame sent → the first agent frame received, endpointing included) and as the service
 * recorded it; barge-in (the interrupting line's first frame sent → `clear` received), split into the detector's
 * confirmation (the line's first frame → the frame on which the service confirmed speech, both as sent, and that frame's
 * number in the line), that frame sent → the service's detection, and the detection → `clear` received, and the
 * service's own part (the detector's frames at 20 ms each, then the confirming frame sent → `clear` written); calls dropped;
 * CPU per call-minute (this process and its engine processes: the service, the engines and the
 * callers' pacing; the callers' lines are synthesized before the clock starts); RSS per call (this
 * process and its children at the peak, less before the calls); the offline recognizer's word error
 * rate on the callers' lines (the transcripts the service stored against the scripted lines). The callers run on the
 * service's event loop, or with BENCH_CALLERS=thread on a worker thread of their own (bench/voice-callers.ts).
 */
import { subscribe } from 'node:diagnostics_channel';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startService } from '../src/service.ts';
import { createOrganization } from '../src/auth/keys.ts';
import { createEspeak, ttsVoiceOf } from '../src/voice/engines.ts';
import { MulawFramer } from '../src/voice/mulaw.ts';
import { ENDPOINT_MS } from '../src/voice/vad.ts';
import { bargeInChannel, turnChannel, type BargeInEvent, type TurnEvent } from '../src/voice/call-stream.ts';
import { AGENT_GREETING, AGENT_NAME, INTERRUPTION, LINES, wordErrors } from './voice-script.ts';
import { runCallers, runCallersOnThread, type CallerPlan } from './voice-callers.ts';
import { freshDatabase, onCleanup, percentile, positiveInt, runBenchmark, say, startTemporal } from './harness.ts';

const CALLS = positiveInt('BENCH_CALLS', 20);
const TURNS = positiveInt('BENCH_TURNS', 5);
/** `thread`: the callers on a worker thread of their own, off the service's event loop (bench/voice-callers.ts). */
const CALLERS = process.env.BENCH_CALLERS === 'thread' ? 'thread' : 'inline';
const TARGET_P95_MS = 800;
const TARGET_BARGE_IN_MS = 200;
/** The silence that ends a caller's turn at the bench agent's `responsiveness: normal`. */
const ENDPOINT = ENDPOINT_MS.normal;

/** CPU seconds of `pid` and of its children that have exited, from /proc (0 once it has gone). */
function processCpu(pid: string): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime, stime, cutime, cstime: fields 14-17 of stat, 12-15 after the command.
    return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) / 100;
  } catch {
    return 0;
  }
}

/** The speech engines' processes (not the Temporal dev server, not esbuild), by their command. */
const ENGINES = new Set(['python3', 'python3.11', 'pocketsphinx_co', 'espeak-ng', 'sh', 'cat']);

/** CPU seconds of this process and of its engines' processes, those still running (warm decoders) and those that have exited. */
function cpuSeconds(): number {
  const engine = (pid: string) => {
    try {
      return ENGINES.has(readFileSync(`/proc/${pid}/comm`, 'utf8').trim());
    } catch {
      return false;
    }
  };
  return processCpu(String(process.pid)) + descendants(String(process.pid)).filter(engine).reduce((sum, pid) => sum + processCpu(pid), 0);
}

/** The processes under `pid`, children first. */
function descendants(pid: string): string[] {
  const out: string[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) out.push(child, ...descendants(child));
      } catch { /* the process went */ }
    }
  } catch { /* the process went */ }
  return out;
}

/** The warm decoders' processes (a decoder each, or the decoders' host), by their script: pid → CPU seconds, last read. */
const decoderCpu = new Map<string, number>();
/** Reads the CPU of the decoders' processes alive now (one that has exited keeps its last reading, a second old at most). */
function sampleDecoders(): void {
  for (const pid of descendants(String(process.pid))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('ps_process_raw')) decoderCpu.set(pid, processCpu(pid));
    } catch { /* the process went */ }
  }
}

/** Resident memory of this process and its live children (the engines), in MiB. */
function rssMb(): number {
  const rss = (pid: string) => {
    try {
      return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    } catch {
      return 0;
    }
  };
  return [String(process.pid), ...descendants(String(process.pid))].reduce((sum, pid) => sum + rss(pid), 0);
}

const figures = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length ? { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99) } : null;
};
const ms = (f: ReturnType<typeof figures>) => (f ? `p50 ${Math.round(f.p50)} ms, p95 ${Math.round(f.p95)} ms, p99 ${Math.round(f.p99)} ms` : 'none');

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  say('Starting PostgreSQL database and Temporal dev server...');
  const [databaseUrl, temporalAddress] = await Promise.all([freshDatabase(), startTemporal()]);
  const config = loadConfig({ ...process.env, TWILIO_AUTH_TOKEN: 'bench-voice-token' }, {
    PORT: 0, HOST: '127.0.0.1', LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: 1_000_000_000, SMTP_LISTEN_PORT: 0,
    CARRIER_WEBHOOK_RATE_LIMIT_PER_MINUTE: 1_000_000, DATA_DIR: `/tmp/ams-bench-voice-${process.pid}`,
  });
  onCleanup('recordings', async () => rmSync(config.DATA_DIR, { recursive: true, force: true }));
  const service = await startService({ config, databaseUrl, temporalAddress, log: createLogger(config.LOG_LEVEL), api: true, worker: true });
  onCleanup('service', () => service.stop());
  const org = await service.sql.begin((tx) => createOrganization(tx, 'bench'));
  const headers = { authorization: `Bearer ${org.token}`, 'content-type': 'application/json' };
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${service.url!}/api/v1/rest${path}`, { method, headers, ...(body ? { body: JSON.stringify(body) } : {}) });
    const json = await res.json() as Record<string, any>;
    if (!res.ok) throw new Error(`${res.status}: ${JSON.stringify(json)}`);
    return json;
  };
  const agent = await api('POST', '/agents', { name: AGENT_NAME });
  await api('PATCH', `/agents/${agent.id}`, {
    greeting: AGENT_GREETING, interruptions: 'allow', responsiveness: 'normal', phone_settings: { voice_mode: 'stream' },
  });
  const number = (await api('POST', '/phone-numbers', { widget_id: agent.id })).phone_number as string;

  // The callers' lines, synthesized once: the clock measures the service, not the script.
  const tts = createEspeak();
  const voice = ttsVoiceOf('en', null);
  const framesOf = async (text: string) => {
    const framer = new MulawFramer();
    return [...framer.pushSamples(await tts.synthesize(text, voice)), ...framer.flush()];
  };
  const script = await Promise.all(Array.from({ length: TURNS }, (_, i) => framesOf(LINES[i % LINES.length]!)));
  const interruption = await framesOf(INTERRUPTION);

  say(`${CALLS} streamed calls at once, ${TURNS} turns each, then one barge-in each (offline engines: pocketsphinx, espeak-ng; `
    + `the callers ${CALLERS === 'thread' ? 'on a worker thread of their own' : 'on the service\'s event loop'})...`);
  const rssBefore = rssMb();
  let rssPeak = rssBefore;
  sampleDecoders();
  const decodersBefore = [...decoderCpu.values()].reduce((a, b) => a + b, 0);
  const sampler = setInterval(() => { rssPeak = Math.max(rssPeak, rssMb()); sampleDecoders(); }, 1000);
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const cpuBefore = cpuSeconds();
  const started = performance.now();
  const latencies: number[] = [];
  const bargeIns: number[] = [];
  // The service's detection of each barge-in (the service runs in this process: one clock), by stream.
  const detections = new Map<string, BargeInEvent>();
  subscribe(bargeInChannel.name, (event) => { const e = event as BargeInEvent; detections.set(e.streamSid, e); });
  // Each turn's clock in the service, by stream and turn.
  const turnClocks = new Map<string, TurnEvent>();
  subscribe(turnChannel.name, (event) => { const e = event as TurnEvent; turnClocks.set(`${e.streamSid} ${e.turn}`, e); });
  const split = { frames: [] as number[], confirm: [] as number[], inbound: [] as number[], outbound: [] as number[], write: [] as number[], service: [] as number[] };
  let dropped = 0;
  const callMinutes: number[] = [];
  const plan: CallerPlan = { url: service.url!, signingToken: 'bench-voice-token', number, calls: CALLS, script, interruption };
  const results = CALLERS === 'thread' ? await runCallersOnThread(plan) : await runCallers(plan);
  const absolute = (at: number) => performance.timeOrigin + at;
  // The turn's steps in the service, each turn against its caller's last speech frame sent (one clock: this process).
  const steps = { endpoint: [] as number[], tail: [] as number[], heard: [] as number[], queued: [] as number[], reply: [] as number[], audio: [] as number[], total: [] as number[] };
  // The same, by the call's turn (the first one's decoder is loaded while the greeting plays).
  const totalByTurn: number[][] = Array.from({ length: TURNS }, () => []);
  // The steps of the call's first turn alone (its decoder loaded, its agent's answer engine and phrases first used).
  const firstSteps = { endpoint: [] as number[], tail: [] as number[], heard: [] as number[], queued: [] as number[], reply: [] as number[], audio: [] as number[] };
  for (const result of results) {
    result.speechEnds.forEach((speechEnd, i) => {
      const clock = turnClocks.get(`${result.streamSid} ${i + 1}`);
      if (!clock || clock.replyAt === null || clock.firstAudioAt === null) return;
      // The turn's steps, into every turn's figures and, for a call's first turn, into the first turns' too.
      const turn = {
        endpoint: absolute(clock.endpointAt) - speechEnd, tail: clock.heardAt - clock.finishedAt, heard: clock.heardAt - clock.endpointAt,
        queued: clock.transcriptAt - Math.max(clock.heardAt, clock.endpointAt), reply: clock.replyAt - clock.transcriptAt,
        audio: clock.firstAudioAt - clock.replyAt,
      };
      for (const [step, ms] of Object.entries(turn) as [keyof typeof turn, number][]) {
        steps[step].push(ms);
        if (i === 0) firstSteps[step].push(ms);
      }
      steps.total.push(absolute(clock.firstAudioAt) - speechEnd);
      totalByTurn[i]?.push(absolute(clock.firstAudioAt) - speechEnd);
    });
  }
  for (const result of results) {
    callMinutes.push(result.minutes);
    latencies.push(...result.latencies);
    if (result.dropped !== null) {
      dropped++;
      process.stderr.write(`a call dropped: ${result.dropped}\n`);
    }
    const barge = result.bargeIn;
    if (!barge) continue;
    bargeIns.push(barge.clearedAt - barge.startedAt);
    const detection = detections.get(barge.streamSid);
    const at = detection ? detection.frame - barge.startedFrame : -1;
    if (!detection || at < 0 || at >= barge.lineSentAt.length) continue;
    const detectedAt = absolute(detection.detectedAt);
    split.frames.push(at + 1);
    split.confirm.push(barge.lineSentAt[at]! - barge.lineSentAt[0]!);
    split.inbound.push(detectedAt - barge.lineSentAt[at]!);
    split.write.push(detection.clearSentAt - detection.detectedAt);
    split.outbound.push(barge.clearedAt - detectedAt);
    // The service's own part: the detector's audio (a carrier sends a frame every 20 ms), then its confirming frame
    // sent → `clear` written; not the callers' pacing and reading, which wait for their event loop.
    split.service.push(at * 20 + absolute(detection.clearSentAt) - barge.lineSentAt[at]!);
  }
  clearInterval(sampler);
  sampleDecoders();
  const decodersCpu = [...decoderCpu.values()].reduce((a, b) => a + b, 0) - decodersBefore;
  loopDelay.disable();
  const wall = (performance.now() - started) / 1000;
  const cpu = cpuSeconds() - cpuBefore;

  // What the service recorded: its own timings, and what its recognizer heard of each line.
  const timings = await service.sql<{ latency: number; transcript: number; reply: number; audio: number }[]>`select
    extract(epoch from first_audio_at - speech_ended_at) * 1000 as latency, extract(epoch from transcript_at - speech_ended_at) * 1000 as transcript,
    extract(epoch from reply_at - transcript_at) * 1000 as reply, extract(epoch from first_audio_at - reply_at) * 1000 as audio
    from voice_turn_timings where agent_id = ${agent.id} and first_audio_at is not null and not interrupted`;
  const heard = await service.sql<{ conversation_id: string; text: string }[]>`select m.conversation_id, m.text from conversation_messages m
    join conversations c on c.id = m.conversation_id where c.agent_id = ${agent.id} and m.role = 'caller' order by m.conversation_id, m.ts, m.id`;
  const byCall = new Map<string, string[]>();
  for (const row of heard) byCall.set(row.conversation_id, [...(byCall.get(row.conversation_id) ?? []), row.text]);
  let errors = 0;
  let words = 0;
  for (const lines of byCall.values()) {
    lines.slice(0, TURNS).forEach((text, i) => {
      const wer = wordErrors(LINES[i % LINES.length]!, text);
      errors += wer.errors;
      words += wer.words;
    });
  }

  // BENCH_HEARD=1: what the recognizer heard of each line, each distinct transcript with how many calls heard it.
  if (process.env.BENCH_HEARD) {
    LINES.slice(0, TURNS).forEach((line, i) => {
      const counts = new Map<string, number>();
      for (const lines of byCall.values()) if (lines[i] !== undefined) counts.set(lines[i]!, (counts.get(lines[i]!) ?? 0) + 1);
      say(`heard "${line}": ${[...counts].sort((a, b) => b[1] - a[1]).map(([t, n]) => `${n}× "${t}"`).join(', ')}`);
    });
  }

  const client = figures(latencies);
  const server = figures(timings.map((t) => Number(t.latency)));
  const barge = figures(bargeIns);
  const minutes = callMinutes.reduce((a, b) => a + b, 0);
  say(`wall ${wall.toFixed(1)} s, ${latencies.length} turns measured, load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  say(`end of caller speech → first agent audio byte, as the caller hears it: ${ms(client)}`);
  say(`  as the service recorded it (voice_turn_timings): ${ms(server)}`);
  say(`  of which speech end → final transcript (the ${ENDPOINT} ms endpoint included): ${ms(figures(timings.map((t) => Number(t.transcript))))}`);
  say(`    final transcript → the runtime's reply: ${ms(figures(timings.map((t) => Number(t.reply))))}`);
  say(`    the reply → its first audio frame sent (synthesis): ${ms(figures(timings.map((t) => Number(t.audio))))}`);
  say(`the turn's steps in the service, from the caller's last speech frame sent (${steps.total.length} turns): to the endpoint's frame handled (${ENDPOINT} ms of silence): ${ms(figures(steps.endpoint))}`);
  say(`  the recognizer finished (early, or at the endpoint) → its words: ${ms(figures(steps.tail))}; its words against the endpoint (negative: before it): ${ms(figures(steps.heard))}`);
  say(`  the endpoint or the words, the later → the turn begun: ${ms(figures(steps.queued))}; → the reply: ${ms(figures(steps.reply))}; → its first audio frame sent: ${ms(figures(steps.audio))}`);
  say(`  the caller's last speech frame sent → the first audio frame sent: ${ms(figures(steps.total))}`);
  say(`    by turn, p50 / p95: ${totalByTurn.map((xs, i) => { const f = figures(xs); return f ? `${i + 1}: ${Math.round(f.p50)} / ${Math.round(f.p95)} ms` : `${i + 1}: none`; }).join('; ')}`);
  say(`    the first turn's steps: to the endpoint's frame handled ${ms(figures(firstSteps.endpoint))}; the recognizer finished → its words ${ms(figures(firstSteps.tail))}; `
    + `its words against the endpoint ${ms(figures(firstSteps.heard))}; → the turn begun ${ms(figures(firstSteps.queued))}; → the reply ${ms(figures(firstSteps.reply))}; `
    + `→ its first audio frame sent ${ms(figures(firstSteps.audio))}`);
  say(`event loop delay of the process (every call's frames, the runtime${CALLERS === 'thread' ? '' : ', the callers'}): p50 ${(loopDelay.percentile(50) / 1e6).toFixed(0)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(0)} ms, max ${(loopDelay.max / 1e6).toFixed(0)} ms`);
  say(`barge-in, the interrupting line's first frame → clear received: ${ms(barge)}`);
  const count = (xs: number[]) => [...new Set(xs)].sort((a, b) => a - b).map((n) => `${n}: ${xs.filter((x) => x === n).length}`).join(', ');
  say(`  of which the detector: speech confirmed on the line's frame (1 = its first; calls) ${count(split.frames)}; its first frame sent → that frame sent: ${ms(figures(split.confirm))}`);
  say(`    that frame sent → the service's detection (the socket, the service's event loop): ${ms(figures(split.inbound))}`);
  say(`    detection → clear received (written in ${ms(figures(split.write))}): ${ms(figures(split.outbound))}`);
  say(`  the service's own part: the detector's frames at 20 ms each, then its confirming frame sent → clear written: ${ms(figures(split.service))}`);
  say(`calls dropped: ${dropped} of ${CALLS}`);
  say(`CPU per call-minute: ${(cpu / minutes).toFixed(2)} s (${cpu.toFixed(1)} s over ${minutes.toFixed(1)} call-minutes, this process and its engines)`);
  // The callers' lines as synthesized (their own silence included), every call: what the decoders were given, at most.
  const spoken = CALLS * (script.reduce((sum, line) => sum + line.length, 0) + interruption.length) * 0.02;
  say(`the decoders' CPU: ${decodersCpu.toFixed(1)} s, ${(decodersCpu / spoken).toFixed(3)} s per second of the callers' lines (${spoken.toFixed(0)} s; model loads included)`);
  say(`RSS per call: ${((rssPeak - rssBefore) / CALLS).toFixed(1)} MiB (peak ${rssPeak.toFixed(0)} MiB, before ${rssBefore.toFixed(0)} MiB, with the engines' processes)`);
  say(`offline STT word error rate on the callers' lines: ${words ? ((errors / words) * 100).toFixed(1) : 'n/a'} % (${errors} errors in ${words} words)`);
  say(`target p95 <= ${TARGET_P95_MS} ms: ${client && client.p95 <= TARGET_P95_MS ? 'met' : 'NOT met'}; no call dropped: ${dropped === 0 ? 'met' : 'NOT met'}; `
    + `barge-in within ${TARGET_BARGE_IN_MS} ms: ${barge && barge.p95 <= TARGET_BARGE_IN_MS ? 'met' : 'NOT met'} (p95)`);
}

await runBenchmark(main);
