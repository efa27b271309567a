import { describe, expect, it } from 'vitest';
import { freshRequestId } from './request-context.ts';

describe('freshRequestId', () => {
  it('gives UUID-shaped ids (version 8, RFC 9562 variant), all different, that an incoming X-Request-Id could be', () => {
    const ids = Array.from({ length: 10_000 }, freshRequestId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // One process's random part, its counter in the last twelve digits.
    expect(new Set(ids.map((id) => id.slice(0, 24))).size).toBe(1);
    expect(parseInt(ids[1]!.slice(24), 16) - parseInt(ids[0]!.slice(24), 16)).toBe(1);
  });
});
