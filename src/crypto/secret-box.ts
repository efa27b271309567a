import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Encryption at rest for secrets the service must read back (SIP trunk passwords): AES-256-GCM
 * with a fresh 12-byte IV per value. A sealed value is one string,
 *
 *     v1:<key id>:<iv>:<tag>:<ciphertext>      (each part base64url)
 *
 * `v1` names the format and the key id names the key (the first 8 bytes of its SHA-256), so a
 * later rotation can open old values with the previous key while sealing new ones with the new.
 * An optional context (for example `sip_trunks.password:<id>`) is bound as additional
 * authenticated data: a value copied onto another row does not open there.
 */
export interface SecretBox {
  /** Encrypts `plaintext`; every call gives a different string. */
  seal(plaintext: string, context?: string): string;
  /** Decrypts a sealed value; throws SecretBoxError when it was altered, or sealed with another key or context. */
  open(sealed: string, context?: string): string;
  /**
   * A keyed digest (HMAC-SHA256 under a subkey of the current key): compares values, such as a
   * request body holding a password, without storing anything an offline guess could check.
   */
  mac(data: string): Buffer;
  /** Identifies the key that seals (never the key itself). */
  readonly keyId: string;
}

export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The file the default configuration keeps its generated key in, under DATA_DIR. */
export const SECRETS_KEY_FILE = 'secrets.key';

const b64 = (bytes: Buffer) => bytes.toString('base64url');

function keyIdOf(key: Buffer): string {
  return b64(createHash('sha256').update(key).digest().subarray(0, 8));
}

/**
 * A box sealing with `key` (32 bytes). `previousKeys` only open: after a rotation, values sealed
 * with an older key stay readable until they are sealed again.
 */
export function createSecretBox(key: Buffer, previousKeys: Buffer[] = []): SecretBox {
  const keys = new Map<string, Buffer>();
  for (const k of [key, ...previousKeys]) {
    if (k.length !== KEY_BYTES) throw new SecretBoxError(`a secrets key must be ${KEY_BYTES} bytes, not ${k.length}`);
    keys.set(keyIdOf(k), Buffer.from(k));
  }
  const keyId = keyIdOf(key);
  // A subkey: the MAC never uses the encryption key itself.
  const macKey = createHmac('sha256', key).update('ams-mac-v1').digest();
  return {
    keyId,
    mac: (data) => createHmac('sha256', macKey).update(data).digest(),
    seal(plaintext, context = '') {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', keys.get(keyId)!, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [VERSION, keyId, b64(iv), b64(cipher.getAuthTag()), b64(ciphertext)].join(':');
    },
    open(sealed, context = '') {
      const parts = sealed.split(':');
      if (parts.length !== 5 || parts[0] !== VERSION) throw new SecretBoxError('not a sealed value of a known version');
      const [, id, iv, tag, ciphertext] = parts as [string, string, string, string, string];
      const k = keys.get(id);
      if (!k) throw new SecretBoxError('sealed with a key this service does not hold');
      const ivBytes = Buffer.from(iv, 'base64url');
      const tagBytes = Buffer.from(tag, 'base64url');
      if (ivBytes.length !== IV_BYTES || tagBytes.length !== TAG_BYTES) throw new SecretBoxError('malformed sealed value');
      try {
        const decipher = createDecipheriv('aes-256-gcm', k, ivBytes, { authTagLength: TAG_BYTES });
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(tagBytes);
        return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretBoxError('sealed value does not authenticate (altered, or another key or context)');
      }
    },
  };
}

/** Decodes a base64 key of exactly 32 bytes (the form of SECRETS_KEY and of the key file). */
export function decodeSecretsKey(text: string, source: string): Buffer {
  const trimmed = text.trim();
  const key = Buffer.from(trimmed, 'base64');
  // Buffer.from ignores what is not base64: insist the text is exactly the key's encoding.
  if (key.length !== KEY_BYTES || key.toString('base64').replace(/=+$/, '') !== trimmed.replace(/=+$/, '')) {
    throw new SecretBoxError(`${source} must be the base64 encoding of ${KEY_BYTES} bytes (e.g. \`openssl rand -base64 32\`)`);
  }
  return key;
}

/**
 * The key secrets are sealed with: SECRETS_KEY when it is set; otherwise the one kept in
 * `${dataDir}/secrets.key`, generated on first use. The file is written under a temporary name
 * (mode 0600) and linked into place, so processes starting together (api and worker) settle
 * on one key and none ever reads a half-written file. Losing that file makes stored secrets
 * unreadable: production deployments set SECRETS_KEY from their secret store.
 */
export async function loadSecretsKey(config: { SECRETS_KEY?: string | undefined; DATA_DIR: string }): Promise<Buffer> {
  if (config.SECRETS_KEY) return decodeSecretsKey(config.SECRETS_KEY, 'SECRETS_KEY');
  const file = join(config.DATA_DIR, SECRETS_KEY_FILE);
  const existing = await readKeyFile(file);
  if (existing) return existing;
  await mkdir(config.DATA_DIR, { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(`${randomBytes(KEY_BYTES).toString('base64')}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temp, file);
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await unlink(temp).catch(() => {});
  }
  return (await readKeyFile(file))!;
}

async function readKeyFile(file: string): Promise<Buffer | null> {
  try {
    return decodeSecretsKey(await readFile(file, 'utf8'), file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
