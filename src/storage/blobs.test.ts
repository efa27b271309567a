import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkBlobKey, createDiskBlobStore } from './blobs.ts';

describe('disk blob store', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'blobs-'));
  const store = createDiskBlobStore(dir);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('stores, replaces, streams and deletes a blob with its content type', async () => {
    await store.put('recordings/org_1/conv_1.wav', Buffer.from('first'), 'audio/wav');
    await store.put('recordings/org_1/conv_1.wav', Buffer.from('second'), 'audio/wav');
    expect(await store.get('recordings/org_1/conv_1.wav')).toEqual({ bytes: Buffer.from('second'), contentType: 'audio/wav' });
    const opened = await store.open('recordings/org_1/conv_1.wav');
    expect(opened?.size).toBe(6);
    const chunks: Buffer[] = [];
    for await (const chunk of opened!.stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('second');
    await store.delete('recordings/org_1/conv_1.wav');
    await store.delete('recordings/org_1/conv_1.wav');
    expect(await store.get('recordings/org_1/conv_1.wav')).toBeNull();
    expect(await store.open('recordings/org_1/conv_1.wav')).toBeNull();
  });

  it('deletes a whole prefix', async () => {
    await store.put('files/kb_1/a.pdf', Buffer.from('a'), 'application/pdf');
    await store.put('files/kb_1/b.pdf', Buffer.from('b'), 'application/pdf');
    await store.put('files/kb_2/c.pdf', Buffer.from('c'), 'application/pdf');
    await store.deletePrefix('files/kb_1');
    expect(await store.get('files/kb_1/a.pdf')).toBeNull();
    expect((await store.get('files/kb_2/c.pdf'))?.bytes.toString()).toBe('c');
  });

  it('refuses keys that could leave its folder', () => {
    for (const key of ['../secrets.key', '/etc/passwd', 'a//b', 'a/../../b', '', 'a/./b', 'a b']) {
      expect(() => checkBlobKey(key)).toThrow(/invalid blob key/);
    }
    expect(checkBlobKey('recordings/org_1/x.wav')).toBe('recordings/org_1/x.wav');
  });
});
