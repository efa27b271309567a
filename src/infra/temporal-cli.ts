import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { availableParallelism, homedir, hostname } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import {
  forEachLine,
  killOnParentExit,
  LastLines,
  type LineLogger,
  silentLogger,
  sleep,
  spawnTiedToParent,
} from './child-process.ts';

/**
 * The CLI release we build. v1.5.1 is the last one installable with a plain
 * `go install` (later releases carry a `replace` directive in go.mod).
 */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
const BINARY_NAME = 'temporal';

/**
 * One `go install` whose binaries are cached per user: what to build, at which version, under
 * which cached names (go names a binary after its package's last path element).
 */
export interface GoBuild {
  /** Human name in progress lines ("Temporal CLI"). */
  what: string;
  version: string;
  /** Go packages, built by one `go install` (`<package>@<version>` each). */
  packages: string[];
  /** Cached file name of each package's binary, in the order of `packages`. */
  binaries: string[];
  /** Folder of the cached binaries. */
  cacheDir: string;
  /** CPU-minutes of a build from an empty Go cache, for the first progress line. */
  coreMinutes: number;
  /** Variable naming an existing binary instead, mentioned in the first progress line. */
  skipHint: string;
}

const CLI_BUILD: GoBuild = {
  what: 'Temporal CLI', version: TEMPORAL_CLI_VERSION, packages: ['github.com/temporalio/cli/cmd/temporal'], binaries: [BINARY_NAME],
  cacheDir: '', coreMinutes: 14, // about 7 minutes on 2 cores
  skipHint: 'Set TEMPORAL_CLI_PATH or put `temporal` on PATH to skip it.',
};
/** How often a running build prints a progress line, and refreshes its lock. */
const PROGRESS_INTERVAL_MS = 15_000;
/** A lock whose holder has not refreshed it for this long is considered abandoned. */
const LOCK_STALE_MS = 2 * 60_000;
const LOCK_POLL_MS = 1_000;

/** Options for {@link ensureTemporalCli}. */
export interface EnsureTemporalCliOptions {
  /** Receives progress lines (a build takes minutes, so tell the user why nothing else happens). */
  log?: LineLogger;
}

/**
 * Returns the absolute path of a `temporal` CLI binary, building it once if needed.
 *
 * Lookup order: `TEMPORAL_CLI_PATH`; `temporal` on PATH; the per-user cache
 * (`$XDG_CACHE_HOME` or `~/.cache`, then `agent-management-service/temporal-cli-v1.5.1/temporal`);
 * otherwise `go install github.com/temporalio/cli/cmd/temporal@v1.5.1` into that cache.
 * Builds are serialised between processes with a lock directory and land atomically,
 * so concurrent callers (e.g. `npm start` and `npm test`) share one build.
 */
export async function ensureTemporalCli(opts: EnsureTemporalCliOptions = {}): Promise<string> {
  const log = opts.log ?? silentLogger;
  const fromEnv = process.env['TEMPORAL_CLI_PATH'];
  if (fromEnv) return checkExplicitPath(fromEnv);
  const onPath = await findOnPath(BINARY_NAME);
  if (onPath) return onPath;
  const [cli] = await ensureGoBinaries({ ...CLI_BUILD, cacheDir: temporalCliCacheDir() }, log);
  return cli!;
}

/** A folder of this project's per-user cache (`$XDG_CACHE_HOME` or `~/.cache`, then `agent-management-service/<name>`). */
export function projectCacheDir(name: string): string {
  const xdg = process.env['XDG_CACHE_HOME'];
  // The XDG spec says relative values are invalid and must be ignored.
  const cacheRoot = xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache');
  return join(cacheRoot, 'agent-management-service', name);
}

/** The folder holding the cached CLI build for {@link TEMPORAL_CLI_VERSION}. */
export function temporalCliCacheDir(): string {
  return projectCacheDir(`temporal-cli-${TEMPORAL_CLI_VERSION}`);
}

/**
 * The absolute paths of a build's cached binaries, building them once if one is missing.
 * Builds are serialised between processes with a lock directory and land atomically.
 */
export async function ensureGoBinaries(build: GoBuild, log: LineLogger = silentLogger): Promise<string[]> {
  const paths = build.binaries.map((name) => join(build.cacheDir, name));
  if ((await Promise.all(paths.map(isExecutableFile))).every(Boolean)) return paths;
  await buildUnderLock(build, log);
  return paths;
}

async function allBuilt(build: GoBuild): Promise<boolean> {
  return (await Promise.all(build.binaries.map((name) => isExecutableFile(join(build.cacheDir, name))))).every(Boolean);
}

async function checkExplicitPath(path: string): Promise<string> {
  const absolute = resolve(path);
  if (!(await isExecutableFile(absolute))) {
    throw new Error(`TEMPORAL_CLI_PATH=${path} is not an executable file`);
  }
  return absolute;
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function findOnPath(name: string): Promise<string | null> {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = resolve(dir, name);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/**
 * Waits for the build lock, then builds unless another process produced the
 * binary meanwhile. Polling (rather than blocking) lets a waiter notice both
 * outcomes of the holder's work: a finished binary, or an abandoned lock.
 */
async function buildUnderLock(build: GoBuild, log: LineLogger): Promise<void> {
  const lockDir = join(build.cacheDir, '.build.lock');
  await mkdir(build.cacheDir, { recursive: true });
  const waitStarted = Date.now();
  let lastNotice = 0;
  for (;;) {
    if (await allBuilt(build)) return;
    const release = await tryAcquireLock(lockDir);
    if (release) {
      try {
        // Re-check: the previous holder may have finished between our two looks.
        if (!(await allBuilt(build))) await buildInto(build, log);
        return;
      } finally {
        await release();
      }
    }
    if (Date.now() - lastNotice >= PROGRESS_INTERVAL_MS) {
      lastNotice = Date.now();
      const waited = Math.round((lastNotice - waitStarted) / 1000);
      log(`${build.what}: another process is building it (${await describeLockOwner(lockDir)}); waiting (${waited}s)`);
    }
    await sleep(LOCK_POLL_MS);
  }
}

interface LockOwner {
  pid: number;
  host: string;
  startedAt: string;
}

/**
 * Takes the lock by creating `lockDir` (mkdir is atomic), or returns null if
 * someone else holds it. A lock is broken when its holder is a dead process on
 * this host or has not refreshed the folder's mtime for {@link LOCK_STALE_MS}.
 * Two processes breaking the same stale lock at once could both end up
 * building; that costs time but not correctness, since each build uses its
 * own temporary GOBIN and the result is installed by an atomic rename.
 */
/** Runs `fn` every `ms` (a chained, unref'd timer: it never keeps the process alive); returns the stop function. */
function repeatEvery(ms: number, fn: () => void): () => void {
  let timer: NodeJS.Timeout;
  const tick = () => { fn(); timer = setTimeout(tick, ms).unref(); };
  timer = setTimeout(tick, ms).unref();
  return () => clearTimeout(timer);
}

async function tryAcquireLock(lockDir: string): Promise<(() => Promise<void>) | null> {
  try {
    await mkdir(lockDir);
  } catch (err) {
    if (!isErrnoCode(err, 'EEXIST')) throw err;
    if (await isLockStale(lockDir)) await rm(lockDir, { recursive: true, force: true });
    return null;
  }
  const owner: LockOwner = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  await writeFile(join(lockDir, 'owner.json'), JSON.stringify(owner));
  const stopHeartbeat = repeatEvery(PROGRESS_INTERVAL_MS, () => {
    const now = new Date();
    utimes(lockDir, now, now).catch(() => undefined);
  });
  return async () => {
    stopHeartbeat();
    await rm(lockDir, { recursive: true, force: true });
  };
}

async function isLockStale(lockDir: string): Promise<boolean> {
  const owner = await readLockOwner(lockDir);
  if (owner && owner.host === hostname() && !isProcessAlive(owner.pid)) return true;
  try {
    return Date.now() - (await stat(lockDir)).mtimeMs > LOCK_STALE_MS;
  } catch {
    return false; // Released while we looked: not stale, just gone.
  }
}

async function readLockOwner(lockDir: string): Promise<LockOwner | null> {
  try {
    const parsed: unknown = JSON.parse(await readFile(join(lockDir, 'owner.json'), 'utf8'));
    return isLockOwner(parsed) ? parsed : null;
  } catch {
    return null; // Not written yet (holder just created the folder) or unreadable.
  }
}

function isLockOwner(value: unknown): value is LockOwner {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record['pid'] === 'number' && typeof record['host'] === 'string' && typeof record['startedAt'] === 'string';
}

async function describeLockOwner(lockDir: string): Promise<string> {
  const owner = await readLockOwner(lockDir);
  return owner ? `pid ${owner.pid} on ${owner.host}, since ${owner.startedAt}` : 'owner unknown';
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return isErrnoCode(err, 'EPERM');
  }
}

function isErrnoCode(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && err.code === code;
}

/**
 * Builds into a fresh temporary GOBIN inside the cache folder (same
 * filesystem, so the final rename is atomic) and moves the checked binary
 * into place. A build killed half-way leaves only a temp folder, which the
 * next lock holder removes.
 */
async function buildInto(build: GoBuild, log: LineLogger): Promise<void> {
  await removeLeftoverBuildDirs(build.cacheDir);
  const go = await findGo(build.what);
  const tempBin = await mkdtemp(join(build.cacheDir, '.gobin-'));
  log(buildEstimateLine(availableParallelism(), build));
  log(
    `${build.what} not found: building ${build.packages.map((p) => `${p}@${build.version}`).join(' ')} with ${go}. ` +
      `The result is cached in ${build.cacheDir}. (${build.skipHint})`,
  );
  try {
    await runGoInstall(go, tempBin, build, log);
    for (const [i, pkg] of build.packages.entries()) {
      const built = join(tempBin, pkg.slice(pkg.lastIndexOf('/') + 1));
      log(`${build.what} built: ${await readVersion(built)}`);
      await rename(built, join(build.cacheDir, build.binaries[i]!));
    }
  } finally {
    await rm(tempBin, { recursive: true, force: true });
  }
}

/**
 * The first line of a build: how long to wait. Measured on a fresh 2-core machine: 435 s for the
 * first `npm start`, nearly all of it this build, which is CPU-bound and uses every core.
 */
export function buildEstimateLine(cores: number, build: Pick<GoBuild, 'what' | 'coreMinutes'> = CLI_BUILD): string {
  const minutes = Math.max(2, Math.round(build.coreMinutes / Math.max(1, cores)));
  return `Building the ${build.what} once, about ${minutes} minutes on ${cores} core${cores === 1 ? '' : 's'} (progress every ${PROGRESS_INTERVAL_MS / 1000} s)`;
}

async function removeLeftoverBuildDirs(cacheDir: string): Promise<void> {
  for (const entry of await readdir(cacheDir)) {
    if (entry.startsWith('.gobin-')) await rm(join(cacheDir, entry), { recursive: true, force: true });
  }
}

async function findGo(what: string): Promise<string> {
  const onPath = await findOnPath('go');
  if (onPath) return onPath;
  const standard = '/usr/local/go/bin/go';
  if (await isExecutableFile(standard)) return standard;
  throw new Error(
    `Cannot build the ${what}: Go is not installed (no \`go\` on PATH nor /usr/local/go/bin/go). Install Go 1.25+.`,
  );
}

/**
 * Runs `go install -v` and reports progress. With -v, go prints one import
 * path per compiled package: those are counted and summarised every
 * {@link PROGRESS_INTERVAL_MS} instead of flooding the log with ~800 lines;
 * every other line (downloads, errors) is passed through as is.
 */
async function runGoInstall(go: string, gobin: string, build: GoBuild, log: LineLogger): Promise<void> {
  const targets = build.packages.map((p) => `${p}@${build.version}`);
  const total = await countPackagesToCompile(go, gobin, targets);
  if (total !== null) log(`${build.what}: ${total} packages to compile (a count every ${PROGRESS_INTERVAL_MS / 1000} s)`);
  // Tied to us: an orphaned go build would race the next lock holder's build.
  const child = spawnTiedToParent(go, ['install', '-v', ...targets], {
    env: { ...process.env, GOBIN: gobin },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const removeExitHook = killOnParentExit(child);
  const started = Date.now();
  const recent = new LastLines(30);
  let packages = 0;
  let lastPackage = '';
  const onLine = (line: string): void => {
    recent.push(line);
    if (/^\S+$/.test(line)) {
      packages += 1;
      lastPackage = line;
    } else {
      log(`go: ${line}`);
    }
  };
  forEachLine(child.stdout, onLine);
  forEachLine(child.stderr, onLine);
  const stopTicker = repeatEvery(PROGRESS_INTERVAL_MS, () => {
    const seconds = Math.round((Date.now() - started) / 1000);
    log(progressLine(build.what, packages, total, seconds, lastPackage));
  });
  try {
    const code = await new Promise<number | null>((resolveExit, reject) => {
      child.once('error', reject);
      child.once('close', (exitCode) => resolveExit(exitCode));
    });
    if (code !== 0) {
      throw new Error(`go install ${targets.join(' ')} failed (exit ${String(code)}). Last output:\n${recent.format()}`);
    }
  } finally {
    stopTicker();
    removeExitHook();
  }
}

/**
 * How many packages `go install` will compile, from its dry run (`-n` prints one work folder per
 * action it would run, taking Go's build cache into account), or null when the dry run fails: then
 * the progress lines have no total. Costs seconds against a build of minutes (issue 42: a count
 * without its total said nothing about how far along an 18-minute build was).
 */
async function countPackagesToCompile(go: string, gobin: string, targets: string[]): Promise<number | null> {
  try {
    const { stdout, stderr } = await promisify(execFile)(go, ['install', '-n', ...targets], {
      env: { ...process.env, GOBIN: gobin }, maxBuffer: 64 * 1024 * 1024, timeout: 10 * 60_000,
    });
    const actions = new Set(`${stdout}\n${stderr}`.match(/^mkdir -p \$WORK\/b\d+\/$/gm) ?? []).size;
    return actions > 0 ? actions : null;
  } catch {
    return null;
  }
}

/** A build's progress line: "compiled 277 of 1298 packages" when the total is known. */
export function progressLine(what: string, compiled: number, total: number | null, seconds: number, last: string): string {
  const count = total === null ? `${compiled} packages compiled` : `compiled ${Math.min(compiled, total)} of ${total} packages (${Math.floor((100 * Math.min(compiled, total)) / total)} %)`;
  return `${what}: ${count}, ${seconds} s${last ? `, last ${last}` : ''}`;
}

/** Runs `<binary> --version` so a broken binary is rejected before it is installed. */
async function readVersion(binary: string): Promise<string> {
  const { stdout } = await promisify(execFile)(binary, ['--version'], { timeout: 30_000 });
  return stdout.trim();
}
