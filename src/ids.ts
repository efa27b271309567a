import { randomBytes } from 'node:crypto';
import { v7 as uuidv7, validate as uuidValidate } from 'uuid';

/** A new time-ordered UUID (v7): ids sort roughly by creation, which keeps indexes compact. */
export function newId(): string {
  return uuidv7();
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
