import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import type { WorkerOptions } from '@temporalio/worker';
import type { Config } from './config.ts';
import { assertAgentTablesAccountedFor } from './agents/agent-tables.ts';
import { createSql, migrate, pingDatabase, type Sql, type StatementHooks } from './db/index.ts';
import { createAuthenticator, type Authenticator } from './auth/authenticator.ts';
import { ensureBootstrapKey } from './auth/keys.ts';
import { createSecretBox, loadSecretsKey } from './crypto/secret-box.ts';
import { connectTemporal, ensureSearchAttributes } from './temporal/index.ts';
import { createRuntime } from './runtime/index.ts';
import { createCarrier } from './telephony/index.ts';
import { webhookSigningToken } from './telephony/webhook-urls.ts';
import type { WorkerSet } from './temporal/worker.ts';
import { ensureSchedules } from './temporal/schedules.ts';
import { sealPlaintextWebhookSecrets } from './db/webhooks.ts';
import { createApp } from '../api/app.ts';
import { createConcurrencyLimiter, createRateLimiter } from '../api/middleware/rate-limit.ts';
import type { Client } from '@temporalio/client';
import { createLiveHub, type LiveHub } from './conversations/live-stream.ts';
import { acceptsAddress, receiveEmail } from './conversations/email.ts';
import { startSmtpListener, type SmtpListener } from './mail/inbound.ts';
import { useSentenceEncoder } from './answers/meaning.ts';
import { useAnswerReader } from './answers/retrieval.ts';
import { useDecoderThreads } from './voice/engines.ts';
import { blobStoreOf } from './storage/store.ts';
import { useRecordingStore } from './voice/recordings.ts';
import { attachMediaStreams } from './voice/media-stream.ts';
import { speechToTextOf, textToSpeechOf } from './voice/configured-engines.ts';

export interface Service {
  /** Base URL of the API, when this process serves it. */
  url: string | null;
  sql: Sql;
  temporal: Client;
  workers: WorkerSet | null;
  /** The port of the inbound SMTP listener, when this process runs it. */
  smtpPort: number | null;
  /** The key carrier webhooks must be signed with (TWILIO_AUTH_TOKEN, or the sandbox's): tests and the CLI sign with it. */
  carrierSigningToken: string | null;
  /** Drains HTTP, stops the workers, closes the pools. Safe to call twice. */
  stop(): Promise<void>;
}

export interface ServiceOptions {
  config: Config;
  databaseUrl: string;
  temporalAddress: string;
  log: Logger;
  api: boolean;
  worker: boolean;
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** The benches count the statements the pool sends. */
  statements?: StatementHooks;
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('timeout')), ms); })]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Starts the API and/or the workers against a PostgreSQL and a Temporal that already run:
 * migrations, bootstrap key and search attributes first, then traffic.
 */
export async function startService(opts: ServiceOptions): Promise<Service> {
  const { config, log } = opts;
  const sql = createSql(opts.databaseUrl, { max: config.DATABASE_POOL_SIZE, ...opts.statements });
  const applied = await migrate(sql);
  if (applied.length) log.info({ migrations: applied }, 'migrations applied');
  // A table naming an agent that no family's agent-hooks.ts accounts for stops the start (src/agents/README.md).
  await assertAgentTablesAccountedFor(sql).catch(async (err: unknown) => { await sql.end(); throw err; });
  if (config.AMS_BOOTSTRAP_TOKEN) await ensureBootstrapKey(sql, config.AMS_BOOTSTRAP_TOKEN);

  const secrets = createSecretBox(await loadSecretsKey(config));
  const sealed = await sql.begin((tx) => sealPlaintextWebhookSecrets(tx, secrets));
  if (sealed) log.info({ endpoints: sealed }, 'webhook secrets sealed');

  const { connection, client } = await connectTemporal(config, opts.temporalAddress);
  await ensureSearchAttributes(connection, config.TEMPORAL_NAMESPACE);

  // Loaded only here: an API-only process never holds the worker SDK, the activities and what they import.
  const runtime = createRuntime(config);
  useSentenceEncoder(config.SENTENCE_ENCODER === 'on');
  useAnswerReader(config.ANSWER_READER);
  useDecoderThreads(config.VOICE_DECODER_THREADS);
  useRecordingStore(blobStoreOf(config));
  // The webhook dispatcher's bookkeeping commits without waiting for the WAL flush (see startDispatcher): a few connections of its own.
  const bookkeepingSql = opts.worker ? createSql(opts.databaseUrl, { max: 3, asynchronousCommit: true, ...opts.statements }) : null;
  const workers = opts.worker
    ? await (await import('./temporal/worker.ts')).startWorkers({
      sql, bookkeepingSql: bookkeepingSql!, config, runtime, secrets, address: opts.temporalAddress, namespace: config.TEMPORAL_NAMESPACE, log, workflowBundle: opts.workflowBundle,
    })
    : null;
  // Schedules drive recurring work (the webhook recovery sweep); creating them is idempotent.
  if (opts.worker) await ensureSchedules(client, config);

  let server: Server | null = null;
  let authenticator: Authenticator | null = null;
  let liveHub: LiveHub | null = null;
  let smtp: SmtpListener | null = null;
  let mediaStreams: { close(): Promise<void> } | null = null;
  if (opts.api) {
    authenticator = await createAuthenticator(sql);
    liveHub = await createLiveHub(sql, log);
    const carrier = createCarrier(config, sql);
    const app = createApp({
      config, sql, temporal: client, authenticator, log, secrets, runtime, carrier, liveHub,
      rateLimiter: createRateLimiter(config.RATE_LIMIT_PER_MINUTE),
      liveStreamSlots: { perKey: createConcurrencyLimiter(config.LIVE_STREAMS_PER_KEY), perAddress: createConcurrencyLimiter(config.LIVE_STREAMS_PER_ADDRESS) },
      checkReadiness: async () => {
        const [postgres, temporal] = await Promise.all([
          withTimeout(pingDatabase(sql), 2000).then(() => true, () => false),
          connection.withDeadline(Date.now() + 2000, () => connection.workflowService.getSystemInfo({})).then(() => true, () => false),
        ]);
        return { postgres, temporal };
      },
    });
    server = createServer(serverTimeouts(config), app.callback());
    server.keepAliveTimeout = 65_000;
    // Streamed calls (issue 44): the carrier's media stream WebSocket, on the API's own port.
    const localPort = () => (server!.address() as AddressInfo).port;
    mediaStreams = attachMediaStreams(server, {
      sql, temporal: client, config, log, runtime, secrets, carrier, stt: speechToTextOf(config), tts: textToSpeechOf(config),
      baseUrl: () => (config.PUBLIC_BASE_URL ?? `http://localhost:${localPort()}`).replace(/\/+$/, ''),
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(config.PORT, config.HOST, () => resolve());
    });
    // Mail to the email inboxes' addresses (SMTP_LISTEN_PORT; 0 turns it off).
    if (config.SMTP_LISTEN_PORT > 0) {
      const mailDeps = { sql, temporal: client, config, log, runtime, secrets };
      const connections = createRateLimiter(config.SMTP_CONNECTIONS_PER_MINUTE);
      const messages = createRateLimiter(config.SMTP_MESSAGES_PER_MINUTE);
      smtp = await startSmtpListener({
        port: config.SMTP_LISTEN_PORT, host: config.HOST, log, maxClients: config.SMTP_MAX_CLIENTS,
        allowConnection: (remote) => connections.take(remote).allowed,
        allowMessage: (remote) => messages.take(remote).allowed,
        accepts: (address) => acceptsAddress(mailDeps, address),
        deliver: (mail) => receiveEmail(mailDeps, mail),
      });
    }
  }
  const port = server ? (server.address() as AddressInfo).port : null;

  let stopping: Promise<void> | undefined;
  return {
    url: port === null ? null : `http://localhost:${port}`,
    sql, temporal: client, workers, smtpPort: smtp?.port ?? null, carrierSigningToken: webhookSigningToken(config, secrets),
    stop: () => stopping ??= (async () => {
      await smtp?.close();
      // Open live streams end first, so draining HTTP does not wait for them.
      await liveHub?.close();
      await mediaStreams?.close();
      if (server) await closeServer(server);
      await workers?.shutdown();
      await authenticator?.close();
      await connection.close();
      await bookkeepingSql?.end({ timeout: 5 });
      await sql.end({ timeout: 5 });
    })(),
  };
}

/**
 * A client must send its headers within HTTP_HEADERS_TIMEOUT_SECONDS and its whole request within
 * HTTP_REQUEST_TIMEOUT_SECONDS (Node answers 408 and closes), so one dripping a body byte by byte
 * cannot hold a connection for long. Node checks at `connectionsCheckingInterval`: often enough
 * that a short timeout is kept to within half of itself.
 */
export function serverTimeouts(config: Config): { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number } {
  const headersTimeout = config.HTTP_HEADERS_TIMEOUT_SECONDS * 1000;
  return { headersTimeout, requestTimeout: config.HTTP_REQUEST_TIMEOUT_SECONDS * 1000, connectionsCheckingInterval: Math.min(30_000, headersTimeout / 2) };
}

/** Stops accepting, lets in-flight requests finish (10 s at most), then closes what is left. */
async function closeServer(server: Server): Promise<void> {
  // Busy keep-alive clients never go idle: tell each one to close after its current response.
  server.prependListener('request', (_req, res) => res.setHeader('Connection', 'close'));
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), 10_000);
  await closed;
  clearTimeout(timer);
}
