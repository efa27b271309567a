import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';

/**
 * Where the service keeps files too large or too binary for a row: uploaded knowledge files, call
 * recordings, report artifacts. One interface, so the disk default and an S3-compatible store are
 * interchangeable; keys are `/`-separated paths the caller builds from ids (`recordings/<org>/<conversation>.wav`),
 * never from user input.
 */
export interface BlobStore {
  /** Writes (or replaces) the blob at `key`; the write is whole or not at all. */
  put(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The blob's bytes and type, or null when there is none. */
  get(key: string): Promise<{ bytes: Buffer; contentType: string } | null>;
  /** A stream of the blob, for large downloads, or null when there is none. */
  open(key: string): Promise<{ stream: Readable; size: number; contentType: string } | null>;
  /** Deletes the blob; deleting a missing one is not an error (deletes are retried). */
  delete(key: string): Promise<void>;
  /** Deletes every blob whose key starts with `prefix/`. */
  deletePrefix(prefix: string): Promise<void>;
}

const KEY = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/;

/** Refuses a key that could leave the store's root (`..`, absolute, empty segments). */
export function checkBlobKey(key: string): string {
  if (!KEY.test(key) || key.split('/').some((part) => part === '.' || part === '..')) {
    throw new Error(`invalid blob key: ${JSON.stringify(key)}`);
  }
  return key;
}

/**
 * The default store: files under `<DATA_DIR>/blobs/`, each beside a `.type` file holding its content type.
 * Writes go to a temporary name and are renamed into place, so a reader never sees half a file.
 */
export function createDiskBlobStore(dataDir: string): BlobStore {
  const root = resolve(dataDir, 'blobs');
  const pathOf = (key: string) => {
    const path = join(root, ...checkBlobKey(key).split('/'));
    if (!path.startsWith(root + sep)) throw new Error(`invalid blob key: ${key}`);
    return path;
  };
  const typeOf = async (path: string) => (await readFile(`${path}.type`, 'utf8').catch(() => 'application/octet-stream')).trim();
  return {
    async put(key, bytes, contentType) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      const temporary = `${path}.${process.pid}.${Date.now()}.tmp`;
      await writeFile(`${path}.type`, contentType, { mode: 0o600 });
      await writeFile(temporary, bytes, { mode: 0o600 });
      await rename(temporary, path);
    },
    async get(key) {
      const path = pathOf(key);
      const bytes = await readFile(path).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return null;
        throw error;
      });
      return bytes ? { bytes, contentType: await typeOf(path) } : null;
    },
    async open(key) {
      const path = pathOf(key);
      const info = await stat(path).catch(() => null);
      if (!info?.isFile()) return null;
      return { stream: createReadStream(path), size: info.size, contentType: await typeOf(path) };
    },
    async delete(key) {
      const path = pathOf(key);
      await rm(path, { force: true });
      await rm(`${path}.type`, { force: true });
    },
    async deletePrefix(prefix) {
      await rm(pathOf(prefix), { recursive: true, force: true });
    },
  };
}

