import { resolve } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { compileValidator, formatErrors } from './validation.ts';
import { parseTrustedProxies } from './domain/client-address.ts';
import { parseHostExceptions } from './domain/network.ts';

/** Environment the service reads, checked once at start-up and then frozen. */
export const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.Optional(Type.String({ minLength: 1 })),
  DATA_DIR: Type.String({ default: '.data' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  TEMPORAL_ADDRESS: Type.Optional(Type.String({ minLength: 1 })),
  TEMPORAL_NAMESPACE: Type.String({ minLength: 1, default: 'default' }),
  /** Ports of the local Temporal dev server and its Web UI (npm start without TEMPORAL_ADDRESS); 0 picks a free one. */
  TEMPORAL_DEV_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 7233 }),
  TEMPORAL_UI_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8233 }),
  TEMPORAL_UI_URL: Type.Optional(Type.String({ minLength: 1 })),
  TASK_QUEUE_PREFIX: Type.String({ pattern: '^[a-z0-9-]+$', default: 'ams' }),
  /**
   * Where this process's workflow code runs: `thread`, a worker thread of its own (the SDK's default), or `main`, a
   * V8 context on the main thread (the SDK's in-process mode, with the same deadlock timeout). `main` spares the
   * thread's own isolate and its copy of the SDK (about 35 MiB of idle RSS, bench/README.md) at the price of workflow
   * activations sharing the event loop with the API and the activities.
   */
  WORKFLOW_THREAD: Type.Union([Type.Literal('thread'), Type.Literal('main')], { default: 'thread' }),
  AMS_BOOTSTRAP_TOKEN: Type.Optional(Type.String({ minLength: 16, maxLength: 200 })),
  SECRETS_KEY: Type.Optional(Type.String({
    pattern: '^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=?$',
    description: 'Key that encrypts stored secrets (SIP trunk passwords) with AES-256-GCM: the base64 of 32 random bytes '
      + '(`openssl rand -base64 32`). Unset: a key is generated once and kept in DATA_DIR/secrets.key (mode 0600).',
  })),
  PUBLIC_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  ALLOW_PRIVATE_NETWORK_TARGETS: Type.Boolean({ default: false }),
  /**
   * Hosts and address ranges outbound requests (crawls, webhooks, tools, the simulation browser) may reach
   * although they are not public, comma-separated: `intranet.example, *.corp.example, 10.1.0.0/16, 127.0.0.1`.
   */
  OUTBOUND_ALLOWED_HOSTS: Type.Optional(Type.String({ maxLength: 10_000 })),
  RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 1, default: 1200 }),
  /** Requests a minute one client address may make to the public (widget) endpoints, per API process. */
  PUBLIC_RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 1, default: 600 }),
  /** Failed authentications (401) a minute from one client address, per API process; past it, an unknown token is 429 (a valid one still passes). */
  AUTH_FAILURE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 1, default: 60 }),
  /**
   * The proxies and load balancers in front of the API (addresses, CIDR ranges, `loopback`, `linklocal`,
   * `uniquelocal`; comma separated). From a trusted peer the client address is read from X-Forwarded-For,
   * right to left past trusted hops; empty: the socket's peer is the client and X-Forwarded-For is ignored.
   */
  TRUSTED_PROXIES: Type.String({ default: '' }),
  /** Live inbox streams (SSE) open at once on one API process, per API key and per client address; past it, 429. */
  LIVE_STREAMS_PER_KEY: Type.Integer({ minimum: 1, maximum: 10_000, default: 10 }),
  LIVE_STREAMS_PER_ADDRESS: Type.Integer({ minimum: 1, maximum: 10_000, default: 20 }),
  /** Seconds a client has to send a request's headers, and its whole request (headers and body); then 408 and the connection closes. */
  HTTP_HEADERS_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 600, default: 20 }),
  HTTP_REQUEST_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 60 }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  /** `pretty`: one readable line per entry (a terminal); `json`: pino's JSON lines. Unset: pretty when stdout is a terminal. */
  LOG_FORMAT: Type.Optional(Type.Union([Type.Literal('pretty'), Type.Literal('json')])),
  PURGE_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 10000, default: 500 }),
  /** Rows a retention run deletes per transaction (issue 47). */
  RETENTION_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 10000, default: 500 }),
  /** How often an organization's retention Schedule runs, in hours (default daily). */
  RETENTION_INTERVAL_HOURS: Type.Integer({ minimum: 1, maximum: 720, default: 24 }),
  WEBHOOK_RETRY_DELAYS: Type.String({ pattern: '^\\d+(,\\d+)*$', default: '5,300,1800,7200,18000,36000,36000' }),
  /** First attempts a worker process's webhook dispatcher makes at once, in total and per endpoint. */
  WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1024, default: 64 }),
  WEBHOOK_ENDPOINT_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 256, default: 4 }),
  /** A delivery claimed for its first attempt and not finished after this many seconds lost its dispatcher: the recovery sweep takes it. */
  WEBHOOK_CLAIM_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 60 }),
  /** Seconds between runs of the webhook recovery sweep (the Temporal Schedule that takes stranded deliveries). */
  WEBHOOK_SWEEP_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 30 }),
  CRAWL_DELAY_MS: Type.Integer({ minimum: 0, default: 250 }),
  /** Caps of one crawl: pages, link depth from the start page, bytes of one page, and duration. */
  CRAWL_MAX_PAGES: Type.Integer({ minimum: 1, maximum: 100_000, default: 500 }),
  CRAWL_MAX_DEPTH: Type.Integer({ minimum: 0, maximum: 100, default: 10 }),
  CRAWL_MAX_PAGE_BYTES: Type.Integer({ minimum: 1024, maximum: 50 * 1024 * 1024, default: 2 * 1024 * 1024 }),
  CRAWL_MAX_SECONDS: Type.Integer({ minimum: 1, maximum: 86_400, default: 900 }),
  /** Pages fetched at once by one crawl (CRAWL_DELAY_MS still spaces requests to one host). */
  CRAWL_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 8 }),
  /** A web conversation with no message for this long ends (reason `inactivity`) and is evaluated. */
  CONVERSATION_INACTIVITY_SECONDS: Type.Integer({ minimum: 1, maximum: 86_400, default: 1800 }),
  /** While a member holds a conversation (live inbox take-over), it ends after this long without a message. */
  HUMAN_INACTIVITY_SECONDS: Type.Integer({ minimum: 1, maximum: 7 * 86_400, default: 4 * 3600 }),
  /** Seconds a member assigned a waiting conversation has to take it over before it goes to the next member (issue 45). */
  ASSIGNMENT_ACCEPT_SECONDS: Type.Integer({ minimum: 1, maximum: 86_400, default: 120 }),
  /** Seconds between looks at a waiting conversation's queue when nothing changed (a member coming online wakes it at once). */
  ASSIGNMENT_RECHECK_SECONDS: Type.Integer({ minimum: 1, maximum: 86_400, default: 60 }),
  /** How long a live inbox stream (SSE) stays open before the client reconnects with Last-Event-ID. */
  LIVE_STREAM_MAX_SECONDS: Type.Integer({ minimum: 1, maximum: 86_400, default: 300 }),
  /** Seconds between SSE heartbeats (comment lines) on a quiet live stream. */
  LIVE_STREAM_HEARTBEAT_SECONDS: Type.Integer({ minimum: 1, maximum: 300, default: 15 }),
  /** Inbound SMTP listener for email inboxes; 0 turns it off. */
  SMTP_LISTEN_PORT: Type.Integer({ minimum: 0, maximum: 65_535, default: 2525 }),
  /** Outbound mail (smtp://user:pass@host:port, smtps://...); unset: messages are written as .eml files under DATA_DIR/mail/. */
  SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://' })),
  /** Connections the SMTP listener holds at once (all clients); past it a new one is answered 421 and closed. */
  SMTP_MAX_CLIENTS: Type.Integer({ minimum: 1, maximum: 10_000, default: 100 }),
  /** Connections a minute one client address may open to the SMTP listener, per API process; past it, 421 at the greeting. */
  SMTP_CONNECTIONS_PER_MINUTE: Type.Integer({ minimum: 1, default: 60 }),
  /** Messages (MAIL FROM) a minute one client address may send to the SMTP listener, per API process; past it, 450. */
  SMTP_MESSAGES_PER_MINUTE: Type.Integer({ minimum: 1, default: 60 }),
  /**
   * Mail loops: the agent answers one email thread at most this many times an hour, and one correspondent of an
   * inbox (all threads) at most EMAIL_AUTO_REPLIES_PER_SENDER_PER_HOUR times; past either, mail is recorded, not
   * answered, and the conversation is flagged for a person. Counted in PostgreSQL (every replica shares them).
   */
  EMAIL_AUTO_REPLIES_PER_THREAD_PER_HOUR: Type.Integer({ minimum: 1, default: 5 }),
  EMAIL_AUTO_REPLIES_PER_SENDER_PER_HOUR: Type.Integer({ minimum: 1, default: 10 }),
  SANDBOX_RING_SECONDS: Type.Integer({ minimum: 0, default: 2 }),
  SANDBOX_CALL_SECONDS: Type.Integer({ minimum: 0, default: 30 }),
  /** Test setting: seconds added to the clock campaigns read calling windows with (0 in production). */
  CAMPAIGN_CLOCK_OFFSET_SECONDS: Type.Integer({ default: 0 }),
  /**
   * A campaign call still queued this long after it was due (its campaign paused, its calling window
   * closed, its concurrency full) is not dialed any more: it ends `expired`/`expired`. Default 7 days.
   */
  CAMPAIGN_QUEUED_EXPIRY_SECONDS: Type.Integer({ minimum: 1, default: 604_800 }),
  /** The telephony carrier: `sandbox` (no account; test numbers) or `twilio` (needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN). */
  CARRIER: Type.Union([Type.Literal('sandbox'), Type.Literal('twilio')], { default: 'sandbox' }),
  TWILIO_ACCOUNT_SID: Type.Optional(Type.String({ pattern: '^AC[0-9a-fA-F]{32}$' })),
  /** Authenticates REST calls to Twilio and verifies X-Twilio-Signature on inbound webhooks; never logged. */
  TWILIO_AUTH_TOKEN: Type.Optional(Type.String({ minLength: 8 })),
  /**
   * With the sandbox carrier and no TWILIO_AUTH_TOKEN: the key inbound carrier webhooks must be signed
   * with (X-Twilio-Signature), so a call or text can be simulated without an account. Unset: the
   * installation's own, derived from the secrets key (`npm run cli -- sandbox signing-token` prints it);
   * never used with CARRIER=twilio, where only TWILIO_AUTH_TOKEN signs.
   */
  SANDBOX_SIGNING_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  /** Requests a minute one client address may make to the carrier webhooks, per API process (signed or not). */
  CARRIER_WEBHOOK_RATE_LIMIT_PER_MINUTE: Type.Integer({ minimum: 1, default: 600 }),
  /** Another origin for Twilio's REST API (a wire-compatible test server); unset: Twilio's own hosts. */
  TWILIO_API_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  /**
   * Blobs (uploaded knowledge files, recordings, report artifacts) in S3-compatible storage (AWS S3, MinIO, R2, ...):
   * the bucket; unset: files under DATA_DIR/blobs. The endpoint is the operator's, like DATABASE_URL.
   */
  S3_BUCKET: Type.Optional(Type.String({ minLength: 3, maxLength: 63 })),
  S3_REGION: Type.String({ minLength: 1, default: 'us-east-1' }),
  /** Another S3-compatible endpoint (e.g. http://minio:9000); unset: AWS's for S3_REGION. */
  S3_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  /** Static credentials; unset: the SDK's default chain (environment, shared files, instance role). Never logged. */
  S3_ACCESS_KEY_ID: Type.Optional(Type.String({ minLength: 1 })),
  S3_SECRET_ACCESS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  /** Path-style URLs (`endpoint/bucket/key`), which most self-hosted servers need. */
  S3_FORCE_PATH_STYLE: Type.Boolean({ default: false }),
  /** A key prefix inside the bucket, so several deployments can share one. */
  S3_PREFIX: Type.String({ pattern: '^([A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*)?$', default: '' }),
  AMS_STARTING_CREDITS: Type.Integer({ default: 10000 }),
  REPORT_RUN_COST_CENTS: Type.Integer({ minimum: 0, default: 25 }),
  /** An OpenAI-compatible chat-completions endpoint (e.g. https://api.openai.com/v1); unset: the offline runtime answers. */
  LLM_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  /** Sent as a bearer token to LLM_BASE_URL; never logged. */
  LLM_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  LLM_MODEL: Type.String({ minLength: 1, default: 'gpt-4o-mini' }),
  /**
   * Streamed calls' text-to-speech (issue 44): `espeak-ng` (offline, Debian), `openai` (an OpenAI-compatible
   * `/audio/speech`) or `elevenlabs` (ElevenLabs' streaming API, μ-law at 8 kHz).
   */
  VOICE_TTS: Type.Union([Type.Literal('espeak-ng'), Type.Literal('openai'), Type.Literal('elevenlabs')], { default: 'espeak-ng' }),
  /** With VOICE_TTS=openai: the API's base URL (its `/audio/speech` is called), its key (never logged), model and voice. */
  VOICE_TTS_BASE_URL: Type.String({ pattern: '^https?://[^\\s]+$', default: 'https://api.openai.com/v1' }),
  VOICE_TTS_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  VOICE_TTS_MODEL: Type.String({ minLength: 1, default: 'gpt-4o-mini-tts' }),
  VOICE_TTS_VOICE: Type.String({ minLength: 1, default: 'alloy' }),
  /** With VOICE_TTS=elevenlabs (its key is VOICE_TTS_API_KEY): the API's base URL, model, default voice id, and base voices mapped to voice ids (`alloy=<id>,nova=<id>`). */
  VOICE_TTS_ELEVENLABS_URL: Type.String({ pattern: '^https?://[^\\s]+$', default: 'https://api.elevenlabs.io/v1' }),
  VOICE_TTS_ELEVENLABS_MODEL: Type.String({ minLength: 1, default: 'eleven_flash_v2_5' }),
  VOICE_TTS_ELEVENLABS_VOICE: Type.String({ minLength: 1, pattern: '^[A-Za-z0-9_-]+$', default: '21m00Tcm4TlvDq8ikWAM' }),
  VOICE_TTS_ELEVENLABS_VOICES: Type.Optional(Type.String({ pattern: '^\\s*([a-z]+\\s*=\\s*[A-Za-z0-9_-]+\\s*)(,\\s*[a-z]+\\s*=\\s*[A-Za-z0-9_-]+\\s*)*$' })),
  /** The offline recognizer's warm decoders in one process decoded by this many threads (`cores`: the machine's), or `0`: a process per decoder. */
  VOICE_DECODER_THREADS: Type.String({ pattern: '^(cores|\\d{1,3})$', default: 'cores' }),
  /** Streamed calls' speech-to-text: `pocketsphinx` (offline, Debian) or `deepgram` (its live WebSocket protocol). */
  VOICE_STT: Type.Union([Type.Literal('pocketsphinx'), Type.Literal('deepgram')], { default: 'pocketsphinx' }),
  /** With VOICE_STT=deepgram: the live endpoint, the key (never logged) and the model. */
  VOICE_STT_URL: Type.String({ pattern: '^wss?://[^\\s]+$', default: 'wss://api.deepgram.com/v1/listen' }),
  VOICE_STT_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  VOICE_STT_MODEL: Type.String({ minLength: 1, default: 'nova-2-phonecall' }),
  /**
   * `off`: a question the site's words do not answer is not read again by meaning (the sentence encoder of
   * src/answers/meaning.ts, 100-190 MiB once loaded, on first use, in a worker thread).
   */
  SENTENCE_ENCODER: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'on' }),
  /**
   * Which reader picks the offline runtime's answer among the retrieved sentences: `ranked`, the sentence ranking's
   * threshold (and the encoder's second reading); `learned`, the model fitted on the development sites of the answers
   * corpus (src/answers/reader.ts), which needs the sentence encoder (without it, `ranked` reads).
   */
  ANSWER_READER: Type.Union([Type.Literal('ranked'), Type.Literal('learned')], { default: 'ranked' }),
});
export type Config = Readonly<Static<typeof ConfigSchema>>;

const validateConfig = compileValidator(ConfigSchema, { coerce: true, defaults: true });

/**
 * Reads the configuration from an environment (process.env by default).
 * Throws one error listing every bad variable, so a misconfigured deployment fails at start.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  if (!validateConfig(raw)) {
    throw new Error(`invalid configuration: ${formatErrors(validateConfig.errors).map((e) => `${e.field} ${e.message}`).join('; ')}`);
  }
  const config = { ...(raw as Static<typeof ConfigSchema>), ...overrides };
  if (config.HTTP_HEADERS_TIMEOUT_SECONDS > config.HTTP_REQUEST_TIMEOUT_SECONDS) {
    throw new Error('invalid configuration: HTTP_HEADERS_TIMEOUT_SECONDS must not exceed HTTP_REQUEST_TIMEOUT_SECONDS');
  }
  try {
    parseTrustedProxies(config.TRUSTED_PROXIES);
  } catch (err) {
    throw new Error(`invalid configuration: ${(err as Error).message}`);
  }
  if (config.CARRIER === 'twilio' && (!config.TWILIO_ACCOUNT_SID || !config.TWILIO_AUTH_TOKEN)) {
    throw new Error('invalid configuration: CARRIER=twilio needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN');
  }
  // The value earlier versions published as the default: anyone could sign with it (issue 40, D22).
  if (config.SANDBOX_SIGNING_TOKEN === 'sandbox-signing-token') {
    throw new Error('invalid configuration: SANDBOX_SIGNING_TOKEN must not be the published "sandbox-signing-token": unset it to use this installation\'s own');
  }
  try {
    parseHostExceptions(config.OUTBOUND_ALLOWED_HOSTS);
  } catch (err) {
    throw new Error(`invalid configuration: OUTBOUND_ALLOWED_HOSTS: ${(err as Error).message}`);
  }
  config.DATA_DIR = resolve(config.DATA_DIR);
  return Object.freeze(config);
}

/** Seconds to wait between webhook delivery attempts. */
export function webhookRetryDelays(config: Config): number[] {
  return config.WEBHOOK_RETRY_DELAYS.split(',').map(Number);
}
