/**
 * Fixed one-minute windows per token, kept in this process. With several API replicas behind
 * a balancer each one counts separately; set RATE_LIMIT_PER_MINUTE to the per-replica share.
 */
export interface RateLimit { allowed: boolean; remaining: number; resetSeconds: number; limit: number }

export interface RateLimiter {
  /** Counts one request; returns what the RateLimit fields and a 429 need. */
  take(key: string): RateLimit;
  /** Whether one more would be allowed, counting nothing (`allowed` is false once `limit` were taken). */
  peek(key: string): RateLimit;
}

/**
 * At most `maxKeys` windows are kept: past that the oldest is forgotten (a client with many
 * addresses gets fresh windows, but memory stays bounded).
 */
export function createRateLimiter(limit: number, windowSeconds = 60, now: () => number = Date.now, maxKeys = 100_000): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>();
  const windowMs = windowSeconds * 1000;
  let lastSweep = now();
  const current = (key: string, t: number) => {
    if (t - lastSweep > windowMs) {
      // Forget windows that ended, so idle tokens do not accumulate.
      for (const [k, w] of windows) if (t - w.start >= windowMs) windows.delete(k);
      lastSweep = t;
    }
    const w = windows.get(key);
    return w && t - w.start < windowMs ? w : null;
  };
  const report = (w: { start: number; count: number } | null, t: number, allowed: boolean): RateLimit => ({
    allowed, remaining: Math.max(0, limit - (w?.count ?? 0)), limit,
    resetSeconds: Math.max(1, Math.ceil(((w?.start ?? t) + windowMs - t) / 1000)),
  });
  return {
    take(key) {
      const t = now();
      let w = current(key, t);
      if (!w) {
        w = { start: t, count: 0 };
        windows.delete(key);
        if (windows.size >= maxKeys) windows.delete(windows.keys().next().value!);
        windows.set(key, w);
      }
      w.count += 1;
      return report(w, t, w.count <= limit);
    },
    peek(key) {
      const t = now();
      const w = current(key, t);
      return report(w, t, (w?.count ?? 0) < limit);
    },
  };
}

/**
 * Counts what is open at once per key (live streams): each `acquire` that succeeds holds a slot
 * until its `release`. In this process only, which fits what it counts: an open connection lives in
 * one process and ends with it. With N replicas a key may hold N times the limit.
 */
export interface ConcurrencyLimiter {
  readonly limit: number;
  /** Takes a slot for `key`; null when `limit` are already held. The release is safe to call twice. */
  acquire(key: string): (() => void) | null;
}

export function createConcurrencyLimiter(limit: number): ConcurrencyLimiter {
  const open = new Map<string, number>();
  return {
    limit,
    acquire(key) {
      const held = open.get(key) ?? 0;
      if (held >= limit) return null;
      open.set(key, held + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (open.get(key) ?? 1) - 1;
        if (left > 0) open.set(key, left);
        else open.delete(key);
      };
    },
  };
}
