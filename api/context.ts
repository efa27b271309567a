import type Koa from 'koa';
import type { Logger } from 'pino';
import type { Client } from '@temporalio/client';
import type { Config } from '../src/config.ts';
import type { Sql } from '../src/db/index.ts';
import type { Authenticator, Principal } from '../src/auth/authenticator.ts';
import type { SecretBox } from '../src/crypto/secret-box.ts';
import type { AgentRuntime } from '../src/runtime/types.ts';
import type { Carrier } from '../src/telephony/carrier.ts';
import type { ConcurrencyLimiter, RateLimiter } from './middleware/rate-limit.ts';
import type { LiveHub } from '../src/conversations/live-stream.ts';

/** What every handler can reach: built once at start-up and shared by all requests. */
export interface AppDeps {
  config: Config;
  sql: Sql;
  temporal: Client;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  log: Logger;
  /** Seals and opens secrets stored at rest (SIP trunk passwords) with the SECRETS_KEY. */
  secrets: SecretBox;
  /** Answers visitors: the offline runtime, or an OpenAI-compatible model when LLM_BASE_URL is set. */
  runtime: AgentRuntime;
  /** The telephony carrier: the sandbox, or Twilio with CARRIER=twilio. */
  carrier: Carrier;
  /** The live inbox's events (LISTEN/NOTIFY), fanned out to this replica's open streams. */
  liveHub: LiveHub;
  /** Live streams open on this replica, per API key (LIVE_STREAMS_PER_KEY) and per client address (LIVE_STREAMS_PER_ADDRESS). */
  liveStreamSlots: { perKey: ConcurrencyLimiter; perAddress: ConcurrencyLimiter };
  /** Resolves when PostgreSQL and Temporal both answer; used by /readyz. */
  checkReadiness(): Promise<{ postgres: boolean; temporal: boolean }>;
}

export interface AppState {
  requestId: string;
  log: Logger;
  principal?: Principal;
  /** The operation id of the route that took the request (set before its checks): what the audit log records. */
  operation?: string;
}

/** What the application adds to Koa's context. */
export interface AppContextFields {
  deps: AppDeps;
  /**
   * The path parameters (percent-decoded) of the route of an area's route table that took the request
   * (api/route-table.ts), also handed to its handler; the audit log's resource is the last. Unset when no route
   * of a table took it (the few routers of api/routes that are not families set their own).
   */
  params?: Record<string, string>;
}

export type AppContext = Koa.ParameterizedContext<AppState, Koa.DefaultContext & AppContextFields>;
export type AppMiddleware = Koa.Middleware<AppState, Koa.DefaultContext & AppContextFields>;
