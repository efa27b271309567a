/**
 * Fixed one-minute windows per token, kept in this process. With several API replicas behind
 * a balancer each one counts separately; set RATE_LIMIT_PER_MINUTE to the per-replica share.
 */
export interface RateLimiter {
  /** Counts one request; returns what the RateLimit fields and a 429 need. */
  take(key: string): { allowed: boolean; remaining: number; resetSeconds: number; limit: number };
}

export function createRateLimiter(limit: number, windowSeconds = 60, now: () => number = Date.now): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>();
  const windowMs = windowSeconds * 1000;
  let lastSweep = now();
  return {
    take(key) {
      const t = now();
      if (t - lastSweep > windowMs) {
        // Forget windows that ended, so idle tokens do not accumulate.
        for (const [k, w] of windows) if (t - w.start >= windowMs) windows.delete(k);
        lastSweep = t;
      }
      let w = windows.get(key);
      if (!w || t - w.start >= windowMs) {
        w = { start: t, count: 0 };
        windows.set(key, w);
      }
      w.count += 1;
      const resetSeconds = Math.max(1, Math.ceil((w.start + windowMs - t) / 1000));
      return { allowed: w.count <= limit, remaining: Math.max(0, limit - w.count), resetSeconds, limit };
    },
  };
}
