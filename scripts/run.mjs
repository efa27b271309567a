#!/usr/bin/env node
// Entry point behind every `npm run` script. Plain Node ESM with no
// dependencies, because its first job is to install them.
//
//   node scripts/run.mjs <start|api|worker|build|cli|mcp|test|check|bench NAME> [args...]
//
// Everything it prints itself goes to stderr, so `npm run cli -- ...` keeps a
// clean stdout (see .npmrc for npm's own banner).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureChromium } from './ensure-chromium.mjs';
import { ensureVoiceEngines } from './ensure-voice-engines.mjs';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const BIN = join(ROOT, 'node_modules', '.bin');
const TEST_RESULTS = join(ROOT, '.data', 'test-results.json');
const USAGE = 'usage: node scripts/run.mjs <start|api|worker|build|cli|mcp|test|check|bench NAME> [args...]';

/** Prints a progress line of this script (never on stdout). */
function note(message) {
  process.stderr.write(`[run] ${message}\n`);
}

/** Modification time in ms, or null when the file does not exist. */
function mtime(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return null;
  }
}

/**
 * Why node_modules must be (re)installed, or null when it is current. npm
 * rewrites node_modules/.package-lock.json on every install, so it being
 * older than the lock or the manifest means they changed since.
 */
function staleDependenciesReason() {
  const installed = mtime(join(ROOT, 'node_modules', '.package-lock.json'));
  if (installed === null) return 'node_modules is missing';
  for (const name of ['package-lock.json', 'package.json']) {
    const changed = mtime(join(ROOT, name));
    if (changed !== null && changed > installed) return `${name} changed since the last install`;
  }
  return null;
}

/**
 * Runs a command with inherited stdio (stdout redirected to our stderr when
 * `stdoutToStderr`), forwarding SIGINT/SIGTERM once, and resolves with its
 * exit code (128+n when it died of signal n).
 */
function run(command, args, { stdoutToStderr = false, env = process.env } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['inherit', stdoutToStderr ? process.stderr : 'inherit', 'inherit'] });
    const forwarded = new Map();
    // The child shares our process group, so a Ctrl-C typed in a terminal
    // already reaches it: forwarding that SIGINT too would look like a second
    // keypress ("force quit"). npm also forwards signals to us, so pass each
    // signal on at most once a second.
    const forward = (signal) => {
      if (signal === 'SIGINT' && process.stdin.isTTY) return;
      const last = forwarded.get(signal) ?? 0;
      if (Date.now() - last < 1000) return;
      forwarded.set(signal, Date.now());
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    };
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('error', (err) => {
      note(`cannot run ${command}: ${err.message}`);
    });
    child.on('close', (code, signal) => {
      process.removeListener('SIGINT', forward);
      process.removeListener('SIGTERM', forward);
      resolve(code ?? (signal ? 128 + signalNumber(signal) : 1));
    });
  });
}

function signalNumber(signal) {
  return { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }[signal] ?? 0;
}

/**
 * Installs dependencies when needed, with `npm install` rather than `npm ci`: the npm registry
 * reachable here does not serve other platforms' optional packages (e.g. @swc/core-darwin-*), so the
 * lock lacks their entries and `npm ci` refuses it as "out of sync", while `npm install` installs
 * exactly the locked versions for this platform and leaves the lock as it is.
 * The explicit --loglevel matters: the project .npmrc says `silent` (to hide npm's script banner),
 * which would also hide why an install failed.
 */
async function ensureDependencies() {
  const reason = staleDependenciesReason();
  if (!reason) return;
  const locked = lockedPackages();
  note(`${reason}: installing the dependencies with npm install (${locked.length} packages; about 4 minutes the first time on 2 cores, a count every 15 s)`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 1000);
  // npm at --loglevel=warn says nothing until it is done: count what has landed in node_modules meanwhile.
  const ticker = setInterval(() => {
    const present = locked.filter((path) => existsSync(join(ROOT, path, 'package.json'))).length;
    note(`npm install: ${present} of ${locked.length} packages in place (${seconds()} s)`);
  }, 15_000);
  const code = await run(npm, ['install', '--no-audit', '--no-fund', '--loglevel=warn'], { stdoutToStderr: true });
  clearInterval(ticker);
  if (code !== 0) {
    note(`npm install failed (exit ${code})`);
    process.exit(code);
  }
  note(`dependencies installed in ${seconds()} s`);
}

/** The node_modules paths package-lock.json installs on this platform (others' optional binaries left out). */
function lockedPackages() {
  try {
    const { packages = {} } = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
    const fits = (list, value) => !Array.isArray(list) || list.some((entry) => entry === value || (entry.startsWith('!') && entry.slice(1) !== value));
    return Object.entries(packages)
      .filter(([path, entry]) => path.startsWith('node_modules/') && !entry.link && fits(entry.os, process.platform) && fits(entry.cpu, process.arch))
      .map(([path]) => path);
  } catch {
    return [];
  }
}

/**
 * The ports `command` will bind, read from the environment the way src/config.ts reads it (unset or
 * empty: the default), each with the setting that moves it. A value config.ts would refuse is left
 * to it (it names the variable). Mirrors portNeeds() in src/main.ts, which checks again in process.
 */
function portNeeds(command, env = process.env) {
  const setting = (name, fallback) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    return /^\d+$/.test(raw) && Number(raw) <= 65535 ? Number(raw) : null;
  };
  const host = env.HOST || undefined;
  const needs = [];
  const add = (port, what, name, alternatives, bindHost) => {
    if (port !== null && port !== 0) needs.push({ port, what, setting: name, alternatives, host: bindHost });
  };
  if (command !== 'worker') add(setting('PORT', 8080), 'API', 'PORT', 'or 0 for any free one', host);
  if (command === 'start' && !env.TEMPORAL_ADDRESS) {
    add(setting('TEMPORAL_DEV_PORT', 7233), 'Temporal dev server', 'TEMPORAL_DEV_PORT',
      'or 0 for any free one, or set TEMPORAL_ADDRESS to use a Temporal server already running', '127.0.0.1');
    add(setting('TEMPORAL_UI_PORT', 8233), 'Temporal Web UI', 'TEMPORAL_UI_PORT', 'or 0 for any free one', '127.0.0.1');
  }
  if (command !== 'worker') add(setting('SMTP_LISTEN_PORT', 2525), 'inbound SMTP', 'SMTP_LISTEN_PORT', 'or 0 to turn the listener off', host);
  return needs;
}

/** Whether `port` can be bound on `host` (undefined: every interface, as the service binds it). */
function isPortFree(port, host) {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * Stops before anything long (npm install, tsc, the Temporal CLI build, PostgreSQL) when a port the
 * service needs is taken, naming every busy port at once with the setting that moves it (issue 42:
 * a busy Temporal port used to be found after 24 minutes of install and build, one port per attempt).
 */
async function checkPorts(command) {
  const needs = portNeeds(command);
  const free = await Promise.all(needs.map((need) => isPortFree(need.port, need.host)));
  const busy = needs.filter((_, i) => !free[i]);
  if (busy.length === 0) return true;
  note(`cannot start: ${busy.length === 1 ? 'a port it needs is' : `${busy.length} ports it needs are`} in use (another instance of this service?)`);
  for (const need of busy) note(`  port ${need.port} (${need.what}) is in use: set ${need.setting} to another port, ${need.alternatives}`);
  return false;
}

/** `node --import tsx <file> ...args`: TypeScript run directly, no build step. */
function tsx(file, args) {
  return run(process.execPath, ['--import', 'tsx', join(ROOT, file), ...args]);
}

/** Where `npm run build` puts the compiled service (tsconfig.build.json), and the sources it is made of. */
const DIST = join(ROOT, 'dist');
const BUILD_STAMP = join(DIST, '.built');
const BUILD_INPUTS = ['src', 'api', 'workflows', 'activities'];

/** The newest modification time among the build's inputs (TypeScript files and the tsconfigs). */
function newestSource() {
  let newest = Math.max(mtime(join(ROOT, 'tsconfig.json')) ?? 0, mtime(join(ROOT, 'tsconfig.build.json')) ?? 0);
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      // A folder's own time changes when a file in it is deleted or renamed: that needs a build too.
      if (entry.isDirectory()) { newest = Math.max(newest, mtime(path) ?? 0); walk(path); }
      else if (entry.name.endsWith('.ts')) newest = Math.max(newest, mtime(path) ?? 0);
    }
  };
  for (const dir of BUILD_INPUTS) walk(join(ROOT, dir));
  return newest;
}

/**
 * Deletes what dist/ holds for a source that is gone (tsc never removes an output). A stale module
 * would still be loaded: the worker runs every module of activities/ and workflows/ it finds.
 */
function pruneStaleOutputs() {
  const walk = (rel) => {
    const dir = join(DIST, rel);
    if (mtime(dir) === null) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const child = join(rel, entry.name);
      if (entry.isDirectory()) { walk(child); continue; }
      const source = /^(.*)\.(js|js\.map|d\.ts|d\.ts\.map)$/.exec(child)?.[1];
      if (source && mtime(join(ROOT, `${source}.ts`)) === null) rmSync(join(DIST, child), { force: true });
    }
  };
  for (const dir of BUILD_INPUTS) walk(dir);
}

/**
 * Compiles the service to plain JavaScript in dist/ when a source changed since the last build
 * (tsc, incremental: seconds after the first time). The service runs compiled because the TypeScript
 * loader costs a long-running process about 60 MiB of memory; tests, benches and the CLI run the
 * sources through tsx. Type errors do not stop a start (`npm run check` is where they are reported),
 * but a build that emitted nothing does.
 */
async function ensureBuilt() {
  const built = mtime(BUILD_STAMP);
  if (built !== null && built >= newestSource()) return true;
  note('compiling the service to dist/ (tsc; about half a minute the first time)');
  const code = await run(join(BIN, 'tsc'), ['-p', 'tsconfig.build.json'], { stdoutToStderr: true });
  if (mtime(join(DIST, 'src', 'main.js')) === null) {
    note(`the build produced nothing (tsc exit ${code})`);
    return false;
  }
  if (code !== 0) note(`tsc reported errors (exit ${code}); starting what it emitted anyway: run npm run check`);
  pruneStaleOutputs();
  writeFileSync(BUILD_STAMP, `${new Date().toISOString()}\n`);
  return true;
}

/** `node dist/<file>.js ...args`: the compiled service (see ensureBuilt). */
async function compiled(file, args) {
  if (!(await ensureBuilt())) return 1;
  return run(process.execPath, [join(DIST, file.replace(/\.ts$/, '.js')), ...args], { env: serviceEnvironment() });
}

/**
 * The environment of the service's process: glibc's malloc keeps up to eight arenas per core, one
 * for each thread that allocates at once (the Temporal core's Rust threads, libuv's pool, the
 * workflow thread), each holding freed memory of its own. Two arenas kept the idle `npm start`
 * process 25-32 MiB smaller, measured side by side (issue 48, bench/README.md). A fixed trim
 * threshold (glibc's default, 128 KiB) keeps malloc giving freed memory at the top of its heap back:
 * by default the first large block freed raises it (up to 32 MiB), and start-up's freed buffers
 * stayed resident for the life of the process (10-17 MiB of idle RSS, issue 48). A value already
 * set is kept. bench/harness.ts starts the service with the same.
 */
function serviceEnvironment(env = process.env) {
  return { ...env, MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX || '2', MALLOC_TRIM_THRESHOLD_: env.MALLOC_TRIM_THRESHOLD_ || '131072' };
}

/**
 * Makes sure the Temporal CLI exists (building it once, minutes) before tests need it. The script
 * prints the binary's path on stdout (for CI); here it is said in words, not as a bare path.
 */
async function ensureTemporalCli() {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'ensure-temporal-cli.ts')], { cwd: ROOT, stdio: ['inherit', 'pipe', 'inherit'] });
    let path = '';
    child.stdout.on('data', (chunk) => { path += chunk.toString(); });
    child.on('error', (err) => note(`cannot find or build the Temporal CLI: ${err.message}`));
    child.on('close', (code) => {
      if (code === 0 && path.trim()) note(`tests use the Temporal CLI at ${path.trim()}`);
      resolve(code ?? 1);
    });
  });
}

/**
 * Runs vitest with a JSON report next to the usual output, then prints
 * `tests: N passed, M failed` as the very last line. A file that fails
 * outside any test (import error, failing hook) counts as one failure, and
 * so does a vitest run that fails without reporting any failed test. The exit
 * code is non-zero when vitest's is, or anything failed, or nothing passed.
 */
async function runTests(args) {
  const cliCode = await ensureTemporalCli();
  if (cliCode !== 0) {
    console.log('tests: 0 passed, 1 failed');
    return cliCode;
  }
  // Without it the browser tests fail by name ("finds Chromium"); the others still run.
  if (!ensureChromium()) note('Chromium is missing: the browser tests will fail');
  // Streamed calls' tests speak and listen with espeak-ng and pocketsphinx.
  if (!ensureVoiceEngines()) note('espeak-ng or pocketsphinx is missing: the streamed call tests will fail');
  mkdirSync(dirname(TEST_RESULTS), { recursive: true });
  rmSync(TEST_RESULTS, { force: true }); // Never report a previous run's numbers.
  const code = await run(join(BIN, 'vitest'), ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${TEST_RESULTS}`, ...args]);
  const { passed, failed } = summarise(readResults(), code);
  console.log(`tests: ${passed} passed, ${failed} failed`);
  return code !== 0 || failed > 0 || passed === 0 ? code || 1 : 0;
}

function readResults() {
  try {
    return JSON.parse(readFileSync(TEST_RESULTS, 'utf8'));
  } catch {
    return null;
  }
}

function summarise(results, exitCode) {
  const passed = results?.numPassedTests ?? 0;
  let failed = results?.numFailedTests ?? 0;
  for (const file of results?.testResults ?? []) {
    const testFailed = (file.assertionResults ?? []).some((t) => t.status === 'failed');
    if (file.status === 'failed' && !testFailed) failed += 1;
  }
  // vitest failed without a failing test (unhandled error, crash before the
  // report): count it, except for "no test files found", which is 0 and 0.
  const ranNothing = results !== null && (results.numTotalTests ?? 0) === 0 && failed === 0;
  if (exitCode !== 0 && failed === 0 && !ranNothing) failed = 1;
  return { passed, failed };
}

/**
 * Type-checks, lints, then holds the layers to their import rules (.dependency-cruiser.cjs) and
 * finds unused files, exports and dependencies (knip.jsonc), and that each folder's README names each of
 * its files (scripts/check-readmes.mjs). Every step runs, whatever failed before.
 */
async function check(args) {
  const codes = [
    await run(join(BIN, 'tsc'), ['--noEmit', '-p', '.']),
    await run(join(BIN, 'eslint'), ['.', ...args]),
    await run(join(BIN, 'depcruise'), ['src', 'api', 'workflows', 'activities', 'scripts', 'fixtures', 'bench', 'test', '--config', '.dependency-cruiser.cjs']),
    await run(join(BIN, 'knip'), []),
    await run(process.execPath, [join(ROOT, 'scripts', 'check-readmes.mjs')]),
  ];
  return codes.find((code) => code !== 0) ?? 0;
}

async function dispatch(command, args) {
  switch (command) {
    case 'start':
    case 'api':
      // Streamed calls speak and listen with Debian's espeak-ng and pocketsphinx (once; turn-by-turn calls work without them).
      if (!ensureVoiceEngines()) note('espeak-ng or pocketsphinx is missing: streamed calls (voice_mode: stream) cannot speak');
      return compiled('src/main.ts', [command, ...args]);
    case 'worker':
      return compiled('src/main.ts', [command, ...args]);
    case 'build':
      return (await ensureBuilt()) ? 0 : 1;
    case 'cli':
      return tsx('src/cli.ts', args);
    case 'mcp':
      return tsx('src/mcp-bridge.ts', args);
    case 'test':
      return runTests(args);
    case 'check':
      return check(args);
    case 'bench': {
      const [name, ...rest] = args;
      if (!name || !/^[\w-]+$/.test(name)) {
        note('usage: node scripts/run.mjs bench NAME (a file bench/NAME.ts)');
        return 2;
      }
      if (name === 'voice' && !ensureVoiceEngines()) return 1;
      return tsx(`bench/${name}.ts`, rest);
    }
    default:
      note(USAGE);
      return 2;
  }
}

const [command, ...args] = process.argv.slice(2);
if (!command) {
  note(USAGE);
  process.exit(2);
}
if (['start', 'api', 'worker'].includes(command) && !(await checkPorts(command))) process.exit(1);
await ensureDependencies();
// exitCode rather than exit(): lets buffered stdout (the summary line) drain.
process.exitCode = await dispatch(command, args);
