import { randomBytes } from 'node:crypto';
import { v7 as uuidv7, validate as uuidValidate } from 'uuid';

/** A new time-ordered UUID (v7): ids sort roughly by creation, which keeps indexes compact. */
export function newId(): string {
  return uuidv7();
}

export function isUuid(value: string): boolean {
  return uuidValidate(value);
}

/** An agent's widget id and public key: `wgt_` and 24 URL-safe random characters. */
export function newPublicKey(): string {
  return 'wgt_' + randomBytes(18).toString('base64url');
}
