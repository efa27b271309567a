import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { SECRETS_KEY_FILE, SecretBoxError, createSecretBox, decodeSecretsKey, loadSecretsKey } from './secret-box.ts';

const key = () => randomBytes(32);

describe('createSecretBox', () => {
  it('round-trips, with a fresh IV each time, and never shows the plaintext', () => {
    const box = createSecretBox(key());
    const plaintext = 'p@ss wörd: with colons and 🎉';
    const a = box.seal(plaintext);
    const b = box.seal(plaintext);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1:[A-Za-z0-9_-]{11}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]+$/);
    expect(a).not.toContain('wörd');
    expect(a.split(':')[1]).toBe(box.keyId);
    expect(box.open(a)).toBe(plaintext);
    expect(box.open(b)).toBe(plaintext);
    expect(box.open(box.seal(''))).toBe('');
  });

  it('refuses a tampered value', () => {
    const box = createSecretBox(key());
    const sealed = box.seal('hunter2');
    const [v, id, iv, tag, ct] = sealed.split(':') as [string, string, string, string, string];
    const flip = (part: string) => {
      const bytes = Buffer.from(part, 'base64url');
      bytes[0]! ^= 1;
      return bytes.toString('base64url');
    };
    for (const bad of [
      [v, id, iv, tag, flip(ct)], [v, id, flip(iv), tag, ct], [v, id, iv, flip(tag), ct],
      [v, id, iv, tag, ct + 'AA'], ['v2', id, iv, tag, ct], [v, id, iv, tag], [v, id, iv.slice(2), tag, ct],
    ]) expect(() => box.open(bad.join(':'))).toThrow(SecretBoxError);
    expect(() => box.open('hunter2')).toThrow(SecretBoxError);
  });

  it('refuses another key, and another context', () => {
    const sealed = createSecretBox(key()).seal('hunter2');
    expect(() => createSecretBox(key()).open(sealed)).toThrow(/key this service does not hold/);
    // Same key id but different bytes cannot happen; a forged id still fails authentication.
    const other = createSecretBox(key());
    const forged = sealed.replace(/^v1:[^:]+:/, `v1:${other.keyId}:`);
    expect(() => other.open(forged)).toThrow(/does not authenticate/);

    const box = createSecretBox(key());
    const bound = box.seal('hunter2', 'sip_trunks.password:a');
    expect(box.open(bound, 'sip_trunks.password:a')).toBe('hunter2');
    expect(() => box.open(bound, 'sip_trunks.password:b')).toThrow(SecretBoxError);
    expect(() => box.open(bound)).toThrow(SecretBoxError);
  });

  it('opens values of a previous key after rotation, and seals with the new one', () => {
    const oldKey = key();
    const sealed = createSecretBox(oldKey).seal('hunter2');
    const rotated = createSecretBox(key(), [oldKey]);
    expect(rotated.open(sealed)).toBe('hunter2');
    expect(rotated.seal('x').split(':')[1]).toBe(rotated.keyId);
    expect(rotated.keyId).not.toBe(sealed.split(':')[1]);
  });

  it('wants 32-byte keys', () => {
    expect(() => createSecretBox(randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe('decodeSecretsKey and the SECRETS_KEY setting', () => {
  it('accepts exactly the base64 of 32 bytes', () => {
    const k = key();
    expect(decodeSecretsKey(k.toString('base64'), 'SECRETS_KEY').equals(k)).toBe(true);
    expect(decodeSecretsKey(`${k.toString('base64')}\n`, 'file').equals(k)).toBe(true);
    for (const bad of ['', 'not base64 at all', randomBytes(16).toString('base64'), randomBytes(33).toString('base64'), `${k.toString('base64')}!`]) {
      expect(() => decodeSecretsKey(bad, 'SECRETS_KEY')).toThrow(/base64 encoding of 32 bytes/);
    }
  });

  it('is validated with the rest of the configuration', () => {
    const k = key().toString('base64');
    expect(loadConfig({ SECRETS_KEY: k }).SECRETS_KEY).toBe(k);
    expect(loadConfig({}).SECRETS_KEY).toBeUndefined();
    expect(() => loadConfig({ SECRETS_KEY: randomBytes(16).toString('base64') })).toThrow(/SECRETS_KEY/);
    expect(() => loadConfig({ SECRETS_KEY: 'x'.repeat(44) })).toThrow(/SECRETS_KEY/);
  });
});

describe('loadSecretsKey', () => {
  const dirs: string[] = [];
  const tempDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ams-secrets-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it('uses SECRETS_KEY when set, and writes nothing', async () => {
    const dir = await tempDir();
    const k = key();
    expect((await loadSecretsKey({ SECRETS_KEY: k.toString('base64'), DATA_DIR: dir })).equals(k)).toBe(true);
    await expect(stat(join(dir, SECRETS_KEY_FILE))).rejects.toThrow(/ENOENT/);
  });

  it('creates the key file once (mode 0600) and reuses it', async () => {
    const dir = join(await tempDir(), 'nested', 'data');
    const first = await loadSecretsKey({ DATA_DIR: dir });
    expect(first).toHaveLength(32);
    const file = join(dir, SECRETS_KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const text = await readFile(file, 'utf8');
    const again = await loadSecretsKey({ DATA_DIR: dir });
    expect(again.equals(first)).toBe(true);
    expect(await readFile(file, 'utf8')).toBe(text);
    // What one box sealed, a box made from the reloaded key opens (a restart).
    expect(createSecretBox(again).open(createSecretBox(first).seal('hunter2'))).toBe('hunter2');
  });

  it('settles on one key when processes start together', async () => {
    const dir = await tempDir();
    const keys = await Promise.all(Array.from({ length: 8 }, () => loadSecretsKey({ DATA_DIR: dir })));
    for (const k of keys) expect(k.equals(keys[0]!)).toBe(true);
    expect(await readdir(dir)).toEqual([SECRETS_KEY_FILE]);
  });

  it('refuses a damaged key file rather than replacing it', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, SECRETS_KEY_FILE), 'garbage\n', { mode: 0o600 });
    await expect(loadSecretsKey({ DATA_DIR: dir })).rejects.toThrow(/base64 encoding of 32 bytes/);
  });
});
