import { webhookRetryDelays } from '../config.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { Sql } from '../db/index.ts';
import { listenDurably } from '../db/listen.ts';
import {
  claimDeliveries, CLAIM_DELIVERIES, FANNED_OUT, fanOutEvents, markWorkflowStarted, openAttemptTarget, OUTBOX_CHANNEL, recordAttempt, recordSuccesses,
  settleDelivery, type AttemptRecord, type ClaimedDelivery,
} from '../db/webhooks.ts';
import { workflowIds } from '../temporal/ids.ts';
import { attemptTarget, createDeliveryAgent } from './attempt.ts';
import { startDeliveryWorkflow, type DispatchDeps } from './dispatch.ts';

/** Events fanned out per statement. */
const FAN_OUT_BATCH = 500;
/** After a failed pump (database unreachable), wait this long before the next. */
const PUMP_RETRY_MS = 1000;
/** On stop, attempts under way get this long to finish; the sweep recovers the rest. */
const STOP_GRACE_MS = 5000;
/** Opened endpoint secrets kept, so a burst to one endpoint decrypts its secret once. */
const SECRET_CACHE_SIZE = 1000;

export interface Dispatcher { stop(): Promise<void> }

/**
 * The webhook fast path (issue 16), one per worker process: woken by PostgreSQL LISTEN/NOTIFY
 * when an event commits, it fans the event out into deliveries and makes each delivery's first
 * attempt itself, with at most WEBHOOK_CONCURRENCY attempts in flight in total and
 * WEBHOOK_ENDPOINT_CONCURRENCY per endpoint (a slow endpoint cannot starve the others). Rows are
 * claimed with FOR UPDATE SKIP LOCKED, so replicas never claim the same one. A success is
 * recorded and that is all: no workflow. A failure is recorded and the delivery's workflow
 * (`webhook-delivery:<event>:<endpoint>`) takes over the retries. A delivery claimed by a
 * process that died is picked up by the recovery sweep (a Temporal Schedule).
 */
export async function startDispatcher(deps: Required<DispatchDeps> & {
  sql: Sql; secrets: SecretBox;
  /**
   * The pool for the dispatcher's bookkeeping (fan-out, claims, successes), whose commits need not wait for the WAL
   * flush (createSql's `asynchronousCommit`); the main pool when absent. What it writes is redone when a crash of PostgreSQL
   * loses it: the events stay in the outbox (written with the change they report, in a commit that waited for its
   * flush), so a lost fan-out is fanned out again, a lost claim or success is attempted again (at least once, with
   * the same webhook-id). A failed first attempt, which a delivery workflow takes over next, is recorded through
   * the main pool: that commit waits for the flush of the WAL up to it, the delivery's fan-out and claim included, so no
   * workflow is ever started for a delivery a crash could still take back.
   */
  bookkeeping?: Sql;
}): Promise<Dispatcher> {
  const { sql, config, log } = deps;
  const books = deps.bookkeeping ?? sql;
  // Made on the first delivery: an idle service loads no HTTP client (undici is about 11 MiB).
  let agent: ReturnType<typeof createDeliveryAgent> | null = null;
  const limits = { total: config.WEBHOOK_CONCURRENCY, perEndpoint: config.WEBHOOK_ENDPOINT_CONCURRENCY };
  const inFlight = new Map<string, number>();
  const running = new Set<Promise<void>>();
  const openSecret = cachedOpener(deps.secrets);
  // While the pump runs, successes wait for its next claim, which stores them in its own statement (issue 48).
  const successes = batchedRecorder(books, log, () => pumping !== null);
  let total = 0;
  // Work may be waiting: events not yet fanned out, or deliveries left unclaimed for lack of room.
  let eventsWaiting = true;
  let deliveriesWaiting = true;
  // `again` is set by every wake and cleared by the pump before it looks: a wake during a pass
  // always gets one more pass. `pumping` is cleared in the same synchronous step that sees
  // `again` false, so no wake falls between the pump's last look and its end.
  let pumping: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  let retryTimer: NodeJS.Timeout | undefined;

  const wake = () => {
    if (stopped) return;
    again = true;
    if (!pumping) pumping = pump();
  };

  async function pump(): Promise<void> {
    try {
      while (again && !stopped) {
        // Each pass waits for the end of this turn of the event loop, so that the wakes that came in one read of the
        // sockets (notifications, endpoints' answers) make one claim, not one each (issue 48, round six). It also keeps
        // the pump from finishing synchronously: `pumping` is assigned before it can be cleared.
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (stopped) break;
        again = false;
        if (!(await pass())) return;
      }
    } finally {
      pumping = null;
      // Successes that waited for a claim that did not come are stored on their own.
      successes.kick();
    }
  }

  /** One look at the outbox; false when the database failed (a retry is scheduled). */
  async function pass(): Promise<boolean> {
    try {
      if (eventsWaiting) {
        eventsWaiting = false;
        const fanned = await fanOutEvents(books, FAN_OUT_BATCH);
        if (fanned.events === FAN_OUT_BATCH) eventsWaiting = again = true;
        // Events no endpoint listens to make no delivery: nothing new to claim.
        if (fanned.deliveries > 0) deliveriesWaiting = true;
      }
      const room = limits.total - total;
      if (!deliveriesWaiting || room <= 0) {
        successes.kick();
        return true;
      }
      const recorded = successes.take();
      let claim;
      try {
        claim = await claimDeliveries(books, { limit: room, perEndpoint: limits.perEndpoint, inFlight, successes: recorded.map((w) => w.record) });
      } catch (err) {
        if (recorded.length === 0) throw err;
        // Stored one by one, as a failed batch of successes is; the claim is made again at once, without them.
        log.warn({ err, attempts: recorded.length }, 'webhook claim with successes failed; recording them one by one');
        await successes.storeEach(recorded);
        again = true;
        return true;
      }
      for (const w of recorded) w.resolve();
      const { claimed, moreWaiting } = claim;
      for (const d of claimed) begin(d);
      // Fewer than there was room for: the rest waits on a full endpoint, or another dispatcher
      // holds it, or there is none. The claim answered whether any waits, so that the next
      // completion here claims again if so.
      deliveriesWaiting = claimed.length === room || moreWaiting;
      return true;
    } catch (err) {
      log.warn({ err }, 'webhook dispatcher could not read the outbox; retrying');
      eventsWaiting = deliveriesWaiting = true;
      clearTimeout(retryTimer);
      retryTimer = setTimeout(wake, PUMP_RETRY_MS);
      return false;
    }
  }

  /**
   * Two slots per attempt: the endpoint's, given back once the endpoint has answered (it bounds the
   * requests the endpoint sees at once, and an endpoint's throughput is its slots over its answer
   * time, not over answer and record), and the process's, given back once the attempt is recorded
   * (it bounds the work not yet stored).
   */
  function begin(d: ClaimedDelivery): void {
    total += 1;
    inFlight.set(d.endpointId, (inFlight.get(d.endpointId) ?? 0) + 1);
    let holdsEndpoint = true;
    const releaseEndpoint = () => {
      if (!holdsEndpoint) return;
      holdsEndpoint = false;
      const left = (inFlight.get(d.endpointId) ?? 1) - 1;
      if (left <= 0) inFlight.delete(d.endpointId); else inFlight.set(d.endpointId, left);
      if (deliveriesWaiting) wake();
    };
    // attemptFirst never rejects; both slots are given back whatever happened.
    const done = attemptFirst(d, releaseEndpoint).finally(() => {
      total -= 1;
      running.delete(done);
      releaseEndpoint();
      if (deliveriesWaiting) wake();
    });
    running.add(done);
  }

  /** The first attempt, recorded (successes in batches); a failure hands the delivery to its workflow. */
  async function attemptFirst(d: ClaimedDelivery, answered: () => void): Promise<void> {
    try {
      const target = openAttemptTarget(deps.secrets, d.target, openSecret);
      const outcome = await attemptTarget(agent ??= createDeliveryAgent(config, config.WEBHOOK_CONCURRENCY), target);
      answered();
      if (outcome.kind !== 'attempted') return await settleDelivery(books, d.deliveryId, 'failed');
      const { kind: _kind, ...attempt } = outcome;
      // The key the workflow would have given its first attempt: its retries number on from it.
      const record: AttemptRecord = { ...attempt, deliveryId: d.deliveryId, attemptKey: `${workflowIds.webhookDelivery(d.eventId, d.endpointId)}#0` };
      if (outcome.ok) return await successes.record(record);
      const retries = webhookRetryDelays(config).length;
      // Through the durable pool (see `bookkeeping`): once this returns, the delivery its workflow will load is on disk.
      await recordAttempt(retries === 0 ? books : sql, record, retries === 0 ? 'failed' : null);
      if (retries === 0) return;
      await startDeliveryWorkflow(deps, d, { firstAttemptDone: true });
      await markWorkflowStarted(books, [d.deliveryId]);
    } catch (err) {
      // Left claimed: the recovery sweep hands it to a workflow once the claim is stale.
      log.warn({ err, delivery_id: d.deliveryId }, 'webhook first attempt could not be completed; the recovery sweep will take it');
    }
  }

  const listener = await listenDurably(sql, OUTBOX_CHANNEL, (payload) => {
    // An event fanned out by the statement that wrote it (FANNED_OUT) left deliveries to claim and nothing to fan out.
    if (payload !== FANNED_OUT) eventsWaiting = true;
    if (payload === CLAIM_DELIVERIES || payload === FANNED_OUT) deliveriesWaiting = true;
    wake();
  }, () => {
    // (Re)connected: notifications sent meanwhile are lost, so look at the outbox itself.
    eventsWaiting = deliveriesWaiting = true;
    wake();
  }, { checkMs: 5000 });

  return {
    async stop() {
      stopped = true;
      clearTimeout(retryTimer);
      await listener.unlisten().catch(() => undefined);
      await pumping;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(running), new Promise((resolve) => { timer = setTimeout(resolve, STOP_GRACE_MS); })]);
      clearTimeout(timer);
      await agent?.close().catch(() => undefined);
    },
  };
}

/** `secretBox.open`, remembering the last SECRET_CACHE_SIZE values opened (a rotated secret is a new sealed value). */
function cachedOpener(secretBox: SecretBox): (sealed: string, context: string) => string {
  const opened = new Map<string, string>();
  return (sealed, context) => {
    const key = `${context}\n${sealed}`;
    let secret = opened.get(key);
    if (secret === undefined) {
      secret = secretBox.open(sealed, context);
      if (opened.size >= SECRET_CACHE_SIZE) opened.delete(opened.keys().next().value!);
      opened.set(key, secret);
    }
    return secret;
  };
}

/** A success waiting to be stored, and its caller's promise. */
interface WaitingSuccess { record: AttemptRecord; resolve: () => void; reject: (err: unknown) => void }

/**
 * Records successful attempts in batches: one statement for all that finish while the previous
 * one runs (or in the same turn of the event loop). Each caller's promise settles when its own
 * record is stored, so an attempt holds its slot until then and unrecorded work stays bounded.
 * A batch that fails is recorded one by one, so one bad row does not fail the others.
 *
 * While `deferred()` (the dispatcher's pump is running), the batch waits instead: the pump's next
 * claim takes it (`take`) and stores it in the claim's own statement, one statement less, or the
 * pump, ending or not claiming, hands it back (`kick`), and it is stored on its own as before.
 */
function batchedRecorder(sql: Sql, log: Required<DispatchDeps>['log'], deferred: () => boolean): {
  record(record: AttemptRecord): Promise<void>; take(): WaitingSuccess[]; kick(): void; storeEach(batch: WaitingSuccess[]): Promise<void>;
} {
  let queue: WaitingSuccess[] = [];
  let flushing = false;
  let scheduled = false;

  const storeEach = async (batch: WaitingSuccess[]) => {
    await Promise.all(batch.map((w) => recordAttempt(sql, w.record, 'succeeded').then(w.resolve, w.reject)));
  };

  async function flush(handedBack: boolean): Promise<void> {
    scheduled = false;
    if (flushing) return;
    flushing = true;
    try {
      while (queue.length > 0 && (handedBack || !deferred())) {
        const batch = queue;
        queue = [];
        try {
          await recordSuccesses(sql, batch.map((w) => w.record));
          for (const w of batch) w.resolve();
        } catch (err) {
          log.warn({ err, attempts: batch.length }, 'webhook successes could not be recorded together; recording them one by one');
          await storeEach(batch);
        }
      }
    } finally {
      flushing = false;
    }
  }
  /** Stores what waits, unless a flush is under way (its loop takes it) or scheduled; `handedBack`: whatever the pump does. */
  function schedule(handedBack: boolean): void {
    if (scheduled || flushing || queue.length === 0) return;
    scheduled = true;
    setImmediate(() => void flush(handedBack));
  }
  return {
    record: (record) => new Promise<void>((resolve, reject) => {
      queue.push({ record, resolve, reject });
      schedule(false);
    }),
    take() {
      const batch = queue;
      queue = [];
      return batch;
    },
    kick: () => schedule(true),
    storeEach,
  };
}
