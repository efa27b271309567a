import { Context } from '@temporalio/activity';

/**
 * Runs `work`, heartbeating every `everyMs` meanwhile, so that with a heartbeat timeout on the
 * activity a worker that died mid-way is noticed in seconds rather than after the whole
 * start-to-close timeout (the rehearsal's kill -9 left evaluations waiting their 3 minutes).
 */
export async function heartbeating<T>(work: () => Promise<T>, everyMs = 5_000): Promise<T> {
  const ctx = Context.current();
  const timer = setInterval(() => ctx.heartbeat(), everyMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
