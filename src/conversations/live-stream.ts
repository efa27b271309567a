import { PassThrough } from 'node:stream';
import type { Logger } from 'pino';
import type { Sql } from '../db/index.ts';
import { findLiveEvent, liveEventsAfter, type LiveEvent } from '../db/live-inbox.ts';

/**
 * The live inbox's real-time feed. Every replica LISTENs on `ams_live` (the triggers of migration
 * 016 NOTIFY "<org_id>:<event id>" for each live event row), reads each announced event once and
 * hands it to the streams of that organization open on this replica: any replica serves any client.
 */

/** The NOTIFY channel of live inbox events. */
export const LIVE_CHANNEL = 'ams_live';
/** How far back Last-Event-ID can reach (the log keeps an hour; a reconnect comes much sooner). */
export const REPLAY_WINDOW_SECONDS = 600;

type Listener = (event: LiveEvent) => void;

export interface LiveHub {
  subscribe(orgId: string, listener: Listener): () => void;
  /** Called when the hub closes (the process stops): open streams end. */
  onClose(cb: () => void): () => void;
  close(): Promise<void>;
}

export async function createLiveHub(sql: Sql, log: Logger): Promise<LiveHub> {
  const listeners = new Map<string, Set<Listener>>();
  const closers = new Set<() => void>();
  // One event at a time, in the order announced, so streams see them in order.
  let tail = Promise.resolve();
  const subscription = await sql.listen(LIVE_CHANNEL, (payload) => {
    const [orgId, id] = payload.split(':');
    if (!orgId || !id || !listeners.get(orgId)?.size) return;
    tail = tail.then(async () => {
      const event = await findLiveEvent(sql, id);
      if (event) for (const listener of listeners.get(orgId) ?? []) listener(event);
    }).catch((err: unknown) => log.warn({ err }, 'live event could not be read'));
  });
  return {
    subscribe(orgId, listener) {
      const set = listeners.get(orgId) ?? new Set();
      set.add(listener);
      listeners.set(orgId, set);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(orgId);
      };
    },
    onClose(cb) {
      closers.add(cb);
      return () => closers.delete(cb);
    },
    async close() {
      for (const cb of closers) cb();
      await subscription.unlisten();
    },
  };
}

/**
 * Whether a reader's stream carries the event: an `alert` of an agent whose `live_chat_alert_scope` is
 * `assigned` goes to the member the conversation is assigned to (and to organization keys), not to
 * the rest of the team; a `notification` (issue 45) goes to the member it names; an operator serving
 * some agents (`agentScope`) sees only their conversations' events; every other event goes to every
 * reader of the organization.
 */
export function forReader(event: LiveEvent, memberEmail: string | null, agentScope: readonly string[] | null = null): boolean {
  if (agentScope && event.agentId && !agentScope.includes(event.agentId)) return false;
  const mine = (email: unknown) => typeof email === 'string' && memberEmail !== null && email.toLowerCase() === memberEmail.toLowerCase();
  if (event.type === 'notification') return memberEmail === null || mine(event.data.member_email);
  if (event.type !== 'alert' || event.data.scope !== 'assigned' || memberEmail === null) return true;
  return mine(event.data.assigned_to);
}

/** One event as SSE text. */
export function sseFrame(event: LiveEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

/**
 * An organization's live stream: the events after `lastEventId` (within the replay window), then
 * each new one as it commits, with a heartbeat comment on a quiet line; it ends after
 * `maxSeconds` (the client reconnects with Last-Event-ID) or when `closed` fires.
 */
export async function openLiveStream(deps: { sql: Sql; hub: LiveHub }, opts: {
  orgId: string; lastEventId: string | null; heartbeatSeconds: number; maxSeconds: number; onClose(cb: () => void): void;
  /** The e-mail of the member reading (a user token), null for an organization key: see `forReader`. */
  memberEmail?: string | null;
  /** An operator's served agents: only their conversations' events (see `forReader`). */
  agentScope?: readonly string[] | null;
}): Promise<PassThrough> {
  const out = new PassThrough();
  // Ids already sent, newest last. Not a high-water mark: ids come from a sequence, and a transaction
  // that took a lower id can commit after one that took a higher id; its event must still go out.
  const sent = new Set<string>();
  const pending: LiveEvent[] = [];
  let replaying = true;
  const write = (event: LiveEvent) => {
    if (sent.has(event.id) || !forReader(event, opts.memberEmail ?? null, opts.agentScope ?? null)) return;
    sent.add(event.id);
    if (sent.size > 5000) sent.delete(sent.values().next().value!);
    out.write(sseFrame(event));
  };
  // Subscribed before the replay is read, so nothing committed in between is missed.
  const unsubscribe = deps.hub.subscribe(opts.orgId, (event) => (replaying ? pending.push(event) : write(event)));
  // A comment line every heartbeatSeconds keeps proxies from closing a quiet stream (one chained timer per stream).
  let done = false;
  let heartbeat: NodeJS.Timeout;
  const beat = () => { heartbeat = setTimeout(() => { if (done) return; out.write(': heartbeat\n\n'); beat(); }, opts.heartbeatSeconds * 1000); };
  beat();
  const stop = setTimeout(() => out.end(), opts.maxSeconds * 1000);
  const forgetCloser = deps.hub.onClose(() => out.end());
  const finish = () => {
    if (done) return;
    done = true;
    unsubscribe();
    forgetCloser();
    clearTimeout(heartbeat);
    clearTimeout(stop);
  };
  out.on('close', finish);
  out.on('finish', finish);
  opts.onClose(() => { finish(); out.end(); });
  out.write('retry: 2000\n: connected\n\n');
  try {
    // Without Last-Event-ID there is nothing to replay: what NOTIFY announces from now on is new.
    const from = opts.lastEventId && /^\d{1,18}$/.test(opts.lastEventId) ? opts.lastEventId : null;
    if (from) for (const event of await liveEventsAfter(deps.sql, opts.orgId, from, REPLAY_WINDOW_SECONDS)) write(event);
  } finally {
    replaying = false;
    for (const event of pending.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1))) write(event);
  }
  return out;
}
