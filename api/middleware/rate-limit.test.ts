import { describe, expect, it } from 'vitest';
import { createRateLimiter } from './rate-limit.ts';

describe('createRateLimiter', () => {
  it('peek tells whether one more is allowed without counting it', () => {
    let t = 0;
    const limiter = createRateLimiter(2, 60, () => t);
    expect(limiter.peek('a')).toMatchObject({ allowed: true, remaining: 2 });
    expect(limiter.take('a')).toMatchObject({ allowed: true, remaining: 1 });
    expect(limiter.peek('a')).toMatchObject({ allowed: true, remaining: 1 });
    expect(limiter.take('a')).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.peek('a')).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 60 });
    expect(limiter.take('a')).toMatchObject({ allowed: false });
    t = 30_000;
    expect(limiter.peek('a')).toMatchObject({ allowed: false, resetSeconds: 30 });
    t = 60_000;
    expect(limiter.peek('a')).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('keeps at most maxKeys windows, forgetting the oldest', () => {
    const limiter = createRateLimiter(1, 60, () => 0, 2);
    limiter.take('a');
    limiter.take('b');
    expect(limiter.peek('a').allowed).toBe(false);
    limiter.take('c');
    // `a` was the oldest: forgotten, so it starts a fresh window; `b` and `c` are still counted.
    expect(limiter.peek('a').allowed).toBe(true);
    expect(limiter.peek('b').allowed).toBe(false);
    expect(limiter.peek('c').allowed).toBe(false);
  });
});
