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
