import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { getFreePort } from '../src/infra/ports.ts';
import { createScratchDatabase, LOCAL_PG_URL, startScratchTemporal } from '../fixtures/scratch.ts';
import { startTemporalServer } from '../fixtures/temporal-server.ts';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

/** Shared plumbing of the benchmark scripts: settings, output, and cleanup that always runs. */

/** A positive whole number from the environment, or the fallback when unset. */
export function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return value;
}

export const say = (line = '') => process.stdout.write(`${line}\n`);

/**
 * One figure of issue 48's table, against its target. Printed as a line of its own, and, when
 * BENCH_FIGURES names a file (bench/all.ts sets it), appended to it as one JSON line, which is how
 * `npm run bench` collects every bench's figures into one table without parsing their prose.
 */
export interface Figure {
  /** The table's row, e.g. `GET /agents/:id CPU per request, service / bare`. */
  measure: string;
  value: number;
  /** How the value is printed: `x` (a ratio), `MiB`, `ms`, `events/s`, `s`. */
  unit: string;
  /** `<=` or `>=` the target. */
  op: '<=' | '>=';
  target: number;
  /** What else a reader needs beside the value (rounds, load, the other side of the ratio). */
  detail?: string;
}

const shown = (value: number, unit: string) => `${Number.isFinite(value) ? (unit === 'x' ? value.toFixed(2) : value.toFixed(unit === 'ms' || unit === 's' ? 1 : 0)) : '?'}${unit === 'x' ? 'x' : ` ${unit}`}`;

/** Whether a figure meets its target (a figure that could not be measured does not). */
export const figureMet = (f: Figure): boolean => Number.isFinite(f.value) && (f.op === '<=' ? f.value <= f.target : f.value >= f.target);

/** The figure as one line: measure, value, target, verdict. */
export const describeFigure = (f: Figure): string =>
  `${f.measure}: ${shown(f.value, f.unit)}  target ${f.op} ${shown(f.target, f.unit)}: ${figureMet(f) ? 'met' : 'MISSED'}${f.detail ? ` (${f.detail})` : ''}`;

/** Prints a figure of the issue's table (see Figure) and records it for `npm run bench`. */
export function figure(f: Figure): void {
  say(`FIGURE ${describeFigure(f)}`);
  const file = process.env.BENCH_FIGURES;
  if (file) appendFileSync(file, `${JSON.stringify(f)}\n`);
}

/** Cleanup steps, run last-in first-out whatever happened. */
const cleanups: { name: string; run: () => Promise<unknown> }[] = [];

export function onCleanup(name: string, run: () => Promise<unknown>): void {
  cleanups.push({ name, run });
}

let cleaning: Promise<boolean> | undefined;
/** Runs every cleanup step once (later calls share the first); false when one failed. */
export function cleanUp(): Promise<boolean> {
  return cleaning ??= (async () => {
    let ok = true;
    for (const step of cleanups.reverse()) {
      try {
        await step.run();
      } catch (err) {
        ok = false;
        process.stderr.write(`cleanup of ${step.name} failed: ${(err as Error).message}\n`);
      }
    }
    return ok;
  })();
}

// `timeout` and service managers stop a bench with SIGTERM (SIGHUP when its terminal goes): the
// servers it started and its scratch databases go with it, as after Ctrl-C.
for (const [signal, code] of [['SIGTERM', 143], ['SIGHUP', 129]] as const) {
  process.once(signal, () => {
    process.stderr.write(`\n${signal}: cleaning up\n`);
    void cleanUp().finally(() => process.exit(code));
  });
}

/** A fresh database (dropped at the end) on the machine's PostgreSQL, or an embedded one. */
export async function freshDatabase(): Promise<string> {
  const db = await createScratchDatabase({ prefix: 'ams_bench', log: say });
  onCleanup('database', () => db.drop());
  return db.url;
}

/** A scratch database that outlives the run (eval:answers' EVAL_REUSE): dropped by hand, never here. */
export async function keptDatabase(): Promise<string> {
  const db = await createScratchDatabase({ prefix: 'ams_eval_kept', log: say });
  say(`kept database ${db.url}`);
  return db.url;
}

/**
 * An in-memory Temporal dev server, stopped at the end; with BENCH_TEMPORAL=postgres, a real Temporal
 * server on fresh databases of the machine's PostgreSQL instead (as `npm run rehearsal` runs it).
 */
export async function startTemporal(): Promise<string> {
  if (process.env.BENCH_TEMPORAL === 'postgres') {
    const server = await startTemporalServer({ pgServerUrl: LOCAL_PG_URL, settings: await composeTemporalSettings(), log: say });
    onCleanup('Temporal server', () => server.destroy());
    return server.address;
  }
  const dev = await startScratchTemporal({ log: say });
  onCleanup('Temporal dev server', () => dev.stop());
  return dev.address;
}

/**
 * The settings docker-compose.yml gives its `temporal` service, which the configuration template
 * (deploy/temporal/config.yaml) reads: the same file, so the local server is configured as the
 * compose one is. Values taken from the compose environment (`${...}`, the password) are left out:
 * the local server sets host, port, user, password and database names itself.
 */
export async function composeTemporalSettings(): Promise<Record<string, string>> {
  const compose = parseYaml(await readFile(join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: { temporal: { environment: Record<string, unknown> } } };
  return Object.fromEntries(Object.entries(compose.services.temporal.environment)
    .map(([k, v]) => [k, String(v)] as const).filter(([, v]) => !v.includes('${')));
}

/** The median of some values (the mean of the middle two for an even count). */
export const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** The p-th percentile (0-100) of ascending values. */
export const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/**
 * CPU seconds used so far by this process, the service process when there is one (`servicePid`),
 * the Temporal dev server this process started and the PostgreSQL backends serving `dbName`, read
 * from /proc (Linux), and by the whole machine. Differences of two snapshots say where a
 * benchmark's CPU went, and how much other programs took meanwhile.
 */
export interface CpuSnapshot {
  at: number; node: number; service: number | null; temporal: number | null; postgres: Map<string, number>; machineBusy: number | null;
}

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux the service targets

function readOr<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

export function cpuSecondsOf(pid: string): number | null {
  return readOr(() => {
    // Fields after the command name (which may contain spaces): utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  }, null);
}

/**
 * CPU seconds of a process by kind of thread (Linux): its main thread (`main`: the event loop), the Temporal core's
 * Rust threads (`tokio`, named `tokio-runtime-w`) and every other thread (`other`: V8's platform threads, which
 * collect garbage, libuv's pool, worker threads such as the workflow thread). Threads that ended meanwhile are not
 * counted. bench:api prints where a request's CPU went with it (bench/README.md).
 */
export function cpuSecondsByThread(pid: number): { main: number; tokio: number; other: number } {
  const out = { main: 0, tokio: 0, other: 0 };
  for (const tid of readOr(() => readdirSync(`/proc/${pid}/task`), [] as string[])) {
    readOr(() => {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
      out[Number(tid) === pid ? 'main' : name.startsWith('tokio') ? 'tokio' : 'other'] += seconds;
    }, undefined);
  }
  return out;
}

/** The `temporal` (dev server) or `temporal-server` process this one started (its parent pid is ours). */
function temporalChild(): string | undefined {
  return readOr(() => readdirSync('/proc'), [] as string[]).find((pid) => /^\d+$/.test(pid) && readOr(() => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return ['temporal', 'temporal-server'].includes(stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))) && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid;
  }, false));
}

/** A backend's title reads "postgres: <cluster>: <user> <database> <client> <state>". */
function postgresBackends(dbName: string): string[] {
  return readOr(() => readdirSync('/proc'), [] as string[]).filter((pid) => /^\d+$/.test(pid)
    && readOr(() => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/\s+/).includes(dbName), false));
}

/** Busy CPU seconds of every core together (all but idle and iowait). */
function machineBusySeconds(): number | null {
  return readOr(() => {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number);
    const busy = ticks.slice(0, 8).reduce((a, b) => a + b, 0) - ticks[3]! - ticks[4]!;
    return busy / TICKS_PER_SECOND;
  }, null);
}

export function cpuSnapshot(dbName: string, servicePid?: number): CpuSnapshot {
  const temporal = temporalChild();
  const postgres = new Map<string, number>();
  for (const pid of postgresBackends(dbName)) {
    const seconds = cpuSecondsOf(pid);
    if (seconds !== null) postgres.set(pid, seconds);
  }
  const service = servicePid === undefined ? null : cpuSecondsOf(String(servicePid));
  return { at: Date.now(), node: cpuSecondsOf('self') ?? 0, service, temporal: temporal ? cpuSecondsOf(temporal) : null, postgres, machineBusy: machineBusySeconds() };
}

/** CPU milliseconds per item, by process, between two snapshots (the service process's when there is one, else this one's). */
export function cpuPerItem(before: CpuSnapshot, after: CpuSnapshot, items: number): { node: number; temporal: number; postgres: number; total: number } {
  const service = after.service !== null && before.service !== null ? after.service - before.service : null;
  const node = service ?? after.node - before.node;
  const temporal = after.temporal !== null && before.temporal !== null ? after.temporal - before.temporal : 0;
  let postgres = 0;
  for (const [pid, seconds] of after.postgres) postgres += seconds - (before.postgres.get(pid) ?? 0);
  const per = (seconds: number) => (seconds * 1000) / items;
  return { node: per(node), temporal: per(temporal), postgres: per(postgres), total: per(node + temporal + postgres) };
}

/**
 * One line: CPU milliseconds per item by process, and how busy the machine was (ours and others').
 * With a service process, `node` is that process and this one (clients, receiver) is shown apart.
 */
export function describeCpu(before: CpuSnapshot, after: CpuSnapshot, items: number, what: string): string {
  const perItem = (seconds: number) => `${((seconds * 1000) / items).toFixed(1)} ms`;
  const own = after.node - before.node;
  const service = after.service !== null && before.service !== null ? after.service - before.service : null;
  const node = service ?? own;
  const temporal = after.temporal !== null && before.temporal !== null ? after.temporal - before.temporal : 0;
  let postgres = 0;
  for (const [pid, seconds] of after.postgres) postgres += seconds - (before.postgres.get(pid) ?? 0);
  const ours = node + temporal + postgres;
  const bench = service === null ? 0 : own;
  const wall = (after.at - before.at) / 1000;
  const machine = after.machineBusy !== null && before.machineBusy !== null ? after.machineBusy - before.machineBusy : null;
  const cores = availableParallelism();
  return `CPU per ${what}: node ${perItem(node)}, temporal ${perItem(temporal)}, postgres ${perItem(postgres)}; total ${perItem(ours)} ` +
    `(${cores} cores: at most ${Math.floor((cores * items) / ours)} ${what}s/s at this cost)` +
    (service === null ? '' : `; the bench's clients and receiver ${perItem(bench)}`) +
    (machine === null ? '' : `; machine busy ${((machine / wall / cores) * 100).toFixed(0)}%, others ${(((machine - ours - bench) / wall / cores) * 100).toFixed(0)}% of ${cores} cores`);
}

/** Runs a benchmark's `main`, then every cleanup step, and exits non-zero when either failed. */
export async function runBenchmark(main: () => Promise<void>): Promise<never> {
  let exitCode = 0;
  try {
    await main();
  } catch (err) {
    process.stderr.write(`benchmark failed: ${(err as Error).stack ?? String(err)}\n`);
    exitCode = 1;
  }
  if (!(await cleanUp())) exitCode = exitCode || 1;
  process.exit(exitCode);
}

/** Resident and peak resident memory of a process, in MiB, from /proc/<pid>/status (Linux). */
export function memoryOf(pid: number): { rssMb: number; peakRssMb: number } | null {
  return readOr(() => {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
  }, null);
}

export interface ChildServer {
  url: string;
  pid: number;
  /** Resolves when the process has exited (SIGINT first, SIGKILL after 20 s). */
  stop(): Promise<void>;
}

/**
 * A Node server in a process of its own, ready once `readyPath` answers 200. Its stdout and
 * stderr go to ours. Stopped at the end.
 */
export async function spawnServer(name: string, args: string[], opts: { env: NodeJS.ProcessEnv; port: number; readyPath: string; nodeArgs?: string[]; compiled?: boolean }): Promise<ChildServer> {
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...(opts.compiled ? [] : ['--import', 'tsx']), ...args], {
    cwd: ROOT, env: { ...process.env, PORT: String(opts.port), ...opts.env }, stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stopping: Promise<void> | undefined;
  const stop = () => stopping ??= (async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  })();
  onCleanup(name, stop);
  const url = `http://127.0.0.1:${opts.port}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (code ${child.exitCode}) before it was ready`);
    const ok = await fetch(url + opts.readyPath).then((r) => r.status === 200, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`${name} not ready within 180 s`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return { url, pid: child.pid!, stop };
}

/** Compiles the service to dist/ (`npm run build`: only when a source changed). */
export function buildService(): void {
  const built = spawnSync(process.execPath, [join(ROOT, 'scripts', 'run.mjs'), 'build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  if (built.status !== 0) throw new Error(`npm run build failed (exit ${built.status})`);
}

/**
 * The service as `npm start` runs it (API and workers in one process, compiled: dist/src/main.js,
 * built first when a source changed), against the given database and Temporal server, in a process
 * of its own so its memory is its own.
 */
export async function startServiceProcess(opts: { databaseUrl: string; temporalAddress: string; env?: NodeJS.ProcessEnv; nodeArgs?: string[]; main?: string | undefined }): Promise<ChildServer> {
  // `main`: another build's compiled entry (a baseline, bench/api.ts), run as it is.
  if (!opts.main) buildService();
  const port = await getFreePort();
  return spawnServer('service process', [opts.main ?? join(ROOT, 'dist', 'src', 'main.js'), 'start'], {
    port, readyPath: '/readyz', nodeArgs: opts.nodeArgs, compiled: true,
    env: {
      // As scripts/run.mjs starts the service (serviceEnvironment): two malloc arenas, a fixed trim threshold.
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX || '2', MALLOC_TRIM_THRESHOLD_: process.env.MALLOC_TRIM_THRESHOLD_ || '131072',
      DATABASE_URL: opts.databaseUrl, TEMPORAL_ADDRESS: opts.temporalAddress, PORT: String(port), HOST: '127.0.0.1',
      LOG_LEVEL: 'warn', SECRETS_KEY: randomBytes(32).toString('base64'),
      // No inbound SMTP listener unless a bench asks for one (bench:api's, on a free port): on the default port 2525
      // it kept a developer's own `npm start` from starting while bench:crawl ran.
      SMTP_LISTEN_PORT: '0',
      TASK_QUEUE_PREFIX: `bench${randomBytes(3).toString('hex')}`, ...opts.env,
    },
  });
}
