import { webhookRetryDelays } from '../config.ts';
import type { SecretBox } from '../crypto/secret-box.ts';
import type { Sql } from '../db/index.ts';
import { listenDurably } from '../db/listen.ts';
import { claimDeliveries, fanOutEvents, hasWaitingDeliveries, markWorkflowStarted, recordAttempt, settleDelivery, type PendingDelivery } from '../db/webhooks.ts';
import { workflowIds } from '../temporal/ids.ts';
import { attemptDelivery, createDeliveryAgent } from './attempt.ts';
import { startDeliveryWorkflow, type DispatchDeps } from './dispatch.ts';

/** The channel a committed event notifies (the trigger of migration 012). */
const CHANNEL = 'webhook_outbox';
/** Events fanned out per statement. */
const FAN_OUT_BATCH = 500;
/** After a failed pump (database unreachable), wait this long before the next. */
const PUMP_RETRY_MS = 1000;
/** On stop, attempts under way get this long to finish; the sweep recovers the rest. */
const STOP_GRACE_MS = 5000;

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
export async function startDispatcher(deps: Required<DispatchDeps> & { sql: Sql; secrets: SecretBox }): Promise<Dispatcher> {
  const { sql, config, log } = deps;
  // Made on the first delivery: an idle service loads no HTTP client (undici is about 11 MiB).
  let agent: ReturnType<typeof createDeliveryAgent> | null = null;
  const limits = { total: config.WEBHOOK_CONCURRENCY, perEndpoint: config.WEBHOOK_ENDPOINT_CONCURRENCY };
  const inFlight = new Map<string, number>();
  const running = new Set<Promise<void>>();
  let total = 0;
  // Work may be waiting: events not yet fanned out, or deliveries left unclaimed for lack of room.
  let eventsWaiting = true;
  let deliveriesWaiting = true;
  let pumping: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  let retryTimer: NodeJS.Timeout | undefined;

  const wake = () => {
    if (stopped) return;
    if (pumping) { again = true; return; }
    pumping = pump().finally(() => { pumping = null; });
  };

  async function pump(): Promise<void> {
    do {
      again = false;
      try {
        if (eventsWaiting) {
          eventsWaiting = false;
          if ((await fanOutEvents(sql, FAN_OUT_BATCH)) === FAN_OUT_BATCH) eventsWaiting = again = true;
          deliveriesWaiting = true;
        }
        const room = limits.total - total;
        if (!deliveriesWaiting || room <= 0) continue;
        const claimed = await claimDeliveries(sql, { limit: room, perEndpoint: limits.perEndpoint, inFlight });
        for (const d of claimed) begin(d);
        // Fewer than there was room for: the rest waits on a full endpoint, or another dispatcher
        // holds it, or there is none. Ask, so that the next completion here claims again if any waits.
        deliveriesWaiting = claimed.length === room || await hasWaitingDeliveries(sql);
      } catch (err) {
        log.warn({ err }, 'webhook dispatcher could not read the outbox; retrying');
        eventsWaiting = deliveriesWaiting = true;
        clearTimeout(retryTimer);
        retryTimer = setTimeout(wake, PUMP_RETRY_MS);
        return;
      }
    } while (again && !stopped);
  }

  function begin(d: PendingDelivery): void {
    total += 1;
    inFlight.set(d.endpointId, (inFlight.get(d.endpointId) ?? 0) + 1);
    const done = attemptFirst(d).finally(() => {
      total -= 1;
      const left = inFlight.get(d.endpointId)! - 1;
      if (left === 0) inFlight.delete(d.endpointId); else inFlight.set(d.endpointId, left);
      running.delete(done);
      if (deliveriesWaiting) wake();
    });
    running.add(done);
  }

  async function attemptFirst(d: PendingDelivery): Promise<void> {
    try {
      const outcome = await attemptDelivery({ sql, secrets: deps.secrets, agent: agent ??= createDeliveryAgent(config, config.WEBHOOK_CONCURRENCY) }, d.deliveryId);
      if (outcome.kind === 'gone') return;
      if (outcome.kind === 'endpoint_disabled') return await settleDelivery(sql, d.deliveryId, 'failed');
      const retries = webhookRetryDelays(config).length;
      const finalStatus = outcome.ok ? 'succeeded' : retries === 0 ? 'failed' : null;
      const { kind: _kind, ...record } = outcome;
      // The key the workflow would have given its first attempt: its retries number on from it.
      const attemptKey = `${workflowIds.webhookDelivery(d.eventId, d.endpointId)}#0`;
      await recordAttempt(sql, { ...record, deliveryId: d.deliveryId, attemptKey }, finalStatus);
      if (finalStatus) return;
      await startDeliveryWorkflow(deps, d, { firstAttemptDone: true });
      await markWorkflowStarted(sql, [d.deliveryId]);
    } catch (err) {
      // Left claimed: the recovery sweep hands it to a workflow once the claim is stale.
      log.warn({ err, delivery_id: d.deliveryId }, 'webhook first attempt could not be completed; the recovery sweep will take it');
    }
  }

  const listener = await listenDurably(sql, CHANNEL, () => { eventsWaiting = true; wake(); }, () => {
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
