import { readFile } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { loadConfig, type Config } from '../src/config.ts';
import type { DestinationStream, Logger } from 'pino';
import { createLogger } from '../src/logger.ts';
import { startService, type Service } from '../src/service.ts';
import { createOrganization } from '../src/auth/keys.ts';
import { createSql } from '../src/db/index.ts';

let bundleCode: Promise<string> | undefined;

/** The workflow bundle built once by the global setup. */
export function workflowBundle(): Promise<{ code: string }> {
  bundleCode ??= readFile(inject('workflowBundlePath'), 'utf8');
  return bundleCode.then((code) => ({ code }));
}

export interface TestService extends Service {
  url: string;
  config: Config;
  /** The logger the service writes with (to `logDestination`). */
  log: Logger;
  /** Makes a fresh organization and returns its admin (every permission) token. */
  newOrg(name?: string): Promise<{ orgId: string; token: string }>;
}

/**
 * The real service (API + workers) on a random port, against the run's database and Temporal
 * server, with task queues of its own so workers of other test files never take its work.
 */
export async function startTestService(overrides: Partial<Config> = {}, opts: {
  worker?: boolean; env?: NodeJS.ProcessEnv;
  /** Another database than the run's shared one, e.g. from `freshDatabase()` for tests that damage it. */
  databaseUrl?: string;
  /** Another Temporal server than the run's shared one. */
  temporalAddress?: string;
  /** Where the service's JSON log lines go (default: nowhere unless TEST_LOG_LEVEL is set). */
  logDestination?: DestinationStream;
} = {}): Promise<TestService> {
  const prefix = `t${randomBytes(4).toString('hex')}`;
  // A key given, so tests never write one into the repository's .data. One key per database, as one
  // deployment has: any service's worker (its webhook dispatcher) opens secrets another service sealed there.
  const databaseUrl = opts.databaseUrl ?? inject('databaseUrl');
  const runKey = createHash('sha256').update(`secrets-key:${databaseUrl}`).digest('base64');
  const env = { LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', SECRETS_KEY: runKey, ...opts.env };
  const config = loadConfig(env, { PORT: 0, TASK_QUEUE_PREFIX: prefix, SMTP_LISTEN_PORT: 0, ...overrides });
  const log = createLogger(config.LOG_LEVEL, {}, opts.logDestination);
  const service = await startService({
    config, databaseUrl, temporalAddress: opts.temporalAddress ?? inject('temporalAddress'),
    log, api: true, worker: opts.worker ?? true, workflowBundle: await workflowBundle(),
  });
  return {
    ...service,
    url: service.url!,
    config,
    log,
    async newOrg(name = `org-${randomBytes(3).toString('hex')}`) {
      const org = await service.sql.begin((tx) => createOrganization(tx, name));
      return { orgId: org.org_id, token: org.token };
    },
  };
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** One HTTP request to the service; JSON bodies are sent as such, strings are sent raw. */
export async function call<T = any>(base: string, method: string, path: string, opts: {
  token?: string; body?: unknown; headers?: Record<string, string>;
} = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try { parsed = text ? JSON.parse(text) : undefined; } catch { /* not JSON: keep the text */ }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** A client bound to one service and token. */
export function client(base: string, token?: string) {
  return {
    get: <T = any>(path: string, headers?: Record<string, string>) => call<T>(base, 'GET', path, { token, headers }),
    post: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => call<T>(base, 'POST', path, { token, body, headers }),
    patch: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => call<T>(base, 'PATCH', path, { token, body, headers }),
    put: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => call<T>(base, 'PUT', path, { token, body, headers }),
    delete: <T = any>(path: string, headers?: Record<string, string>) => call<T>(base, 'DELETE', path, { token, headers }),
  };
}

/** A database of its own on the run's server, for tests that need an empty one. */
export async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const server = inject('pgServerUrl');
  const name = `ams_t_${randomBytes(5).toString('hex')}`;
  const admin = createSql(server, { max: 1 });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end({ timeout: 5 });
    },
  };
}

/** Polls until `check` returns a truthy value, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, timeoutMs = 30_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Waits until the agent's site is `ready` and searched by meaning too (its passages' vectors, computed after it is
 * ready, all there: `passages_embedding` 0), as the answers of tests that read them need.
 */
export async function indexedByMeaning(api: ReturnType<typeof client>, agentId: string, timeoutMs = 180_000): Promise<void> {
  await eventually(async () => {
    const site = (await api.get(`/api/v1/rest/sites?widget_id=${agentId}`)).body.data?.[0];
    return site?.status === 'ready' && site.passages_embedding === 0;
  }, timeoutMs, 250);
}
