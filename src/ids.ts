import { randomBytes } from 'node:crypto';
import { v7 as uuidv7, validate as uuidValidate } from 'uuid';

/** uuid's v7 state (its `updateV7State`, which the package does not export): the last id's milliseconds and counter. */
const v7State = { msecs: -Infinity, seq: 0 };

/**
 * A new time-ordered UUID (v7): ids sort roughly by creation, which keeps indexes compact. The same ids as uuid's `v7()`
 * (its layout, and its counter, which keeps the ids of one millisecond in order), its 16 random bytes drawn from
 * pooledRandomBytes: uuid asks WebCrypto's getRandomValues for 16 bytes per id, about 0.2 ms of the main thread a
 * campaign call on the loaded 2-core machine (6 ids a call; issue 48, bench/README.md).
 */
export function newId(): string {
  const now = Date.now();
  const random = pooledRandomBytes(16);
  if (now > v7State.msecs) {
    v7State.seq = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
    v7State.msecs = now;
  } else {
    v7State.seq = (v7State.seq + 1) | 0;
    if (v7State.seq === 0) v7State.msecs++;
  }
  return uuidv7({ random, msecs: v7State.msecs, seq: v7State.seq });
}

export function isUuid(value: string): boolean {
  return uuidValidate(value);
}

const RANDOM_POOL_BYTES = 4096;
let randomPool = Buffer.alloc(0);
let randomAt = 0;

/**
 * `size` bytes from the system's CSPRNG, as randomBytes gives them, drawn from a pool filled 4 KiB at a time (as
 * crypto.randomUUID batches its own): one call into OpenSSL per hundreds of ids instead of one each, which cost an
 * agent's PATCH about 1 % of the service's CPU (two ids each, issue 48). No byte is handed out twice. The view is into
 * the pool: read it at once (encode it), never keep it.
 */
export function pooledRandomBytes(size: number): Buffer {
  if (randomAt + size > randomPool.length) {
    randomPool = randomBytes(Math.max(RANDOM_POOL_BYTES, size));
    randomAt = 0;
  }
  const bytes = randomPool.subarray(randomAt, randomAt + size);
  randomAt += size;
  return bytes;
}

/** An agent's widget id and public key: `wgt_` and 24 URL-safe random characters. */
export function newPublicKey(): string {
  return 'wgt_' + randomBytes(18).toString('base64url');
}
