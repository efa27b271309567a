import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestService, type TestService } from './helpers.ts';
import { newOrg } from './support/orgs.ts';
import { startS3Server, type S3Server } from './fixtures/s3-server.ts';
import { createS3BlobStore } from '../src/storage/s3.ts';

// The S3-compatible blob store against a local server that speaks S3's wire protocol (path-style, SigV4-signed).
let s3: S3Server;
let svc: TestService;
beforeAll(async () => {
  s3 = await startS3Server({ pageSize: 2 });
  svc = await startTestService({
    SENTENCE_ENCODER: 'off', S3_BUCKET: s3.bucket, S3_ENDPOINT: s3.endpoint, S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey, S3_FORCE_PATH_STYLE: true, S3_PREFIX: 'deployment-a',
  });
});
afterAll(async () => {
  await svc?.stop();
  await s3?.close();
});

describe('S3-compatible blob store', () => {
  const store = () => createS3BlobStore({
    bucket: s3.bucket, region: 'us-east-1', endpoint: s3.endpoint, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey,
    forcePathStyle: true, prefix: 'unit',
  });

  it('stores, replaces, streams and deletes a blob with its content type', async () => {
    const blobs = store();
    await blobs.put('recordings/org_1/conv_1.wav', Buffer.from('first'), 'audio/wav');
    await blobs.put('recordings/org_1/conv_1.wav', Buffer.from('second'), 'audio/wav');
    expect(s3.objects.get('unit/recordings/org_1/conv_1.wav')?.bytes.toString()).toBe('second');
    expect(await blobs.get('recordings/org_1/conv_1.wav')).toEqual({ bytes: Buffer.from('second'), contentType: 'audio/wav' });
    const opened = await blobs.open('recordings/org_1/conv_1.wav');
    expect(opened?.size).toBe(6);
    const chunks: Buffer[] = [];
    for await (const chunk of opened!.stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('second');
    await blobs.delete('recordings/org_1/conv_1.wav');
    await blobs.delete('recordings/org_1/conv_1.wav');
    expect(await blobs.get('recordings/org_1/conv_1.wav')).toBeNull();
    expect(await blobs.open('recordings/org_1/conv_1.wav')).toBeNull();
    await expect(blobs.put('../escape', Buffer.from('x'), 'text/plain')).rejects.toThrow(/invalid blob key/);
  });

  it('deletes a whole prefix across list pages, and nothing beside it', async () => {
    const blobs = store();
    for (const name of ['a', 'b', 'c', 'd', 'e']) await blobs.put(`files/kb_1/${name}.pdf`, Buffer.from(name), 'application/pdf');
    await blobs.put('files/kb_10/x.pdf', Buffer.from('x'), 'application/pdf');
    await blobs.deletePrefix('files/kb_1');
    expect([...s3.objects.keys()].filter((k) => k.startsWith('unit/files/'))).toEqual(['unit/files/kb_10/x.pdf']);
  });

  it('a service configured with S3_* keeps uploaded knowledge files there, reads them in its workflow, and deletes them', async () => {
    const { api } = await newOrg(svc);
    const kb = (await api.post('/api/v1/rest/knowledge-bases', { name: 'Docs' })).body;
    const up = await api.post(`/api/v1/rest/knowledge-bases/${kb.id}/files`, {
      name: 'faq.md', content_base64: Buffer.from('# Parking\n\nThe car park behind the shop is free after six.\n').toString('base64'),
    });
    expect(up.status, up.text).toBe(201);
    const file = await eventually(async () => {
      const f = (await api.get(`/api/v1/rest/knowledge-bases/${kb.id}/files/${up.body.id}`)).body;
      return f.status !== 'processing' && f;
    });
    expect(file).toMatchObject({ status: 'ready', error: null });
    const keys = [...s3.objects.keys()].filter((k) => k.includes(up.body.id));
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(new RegExp(`^deployment-a/knowledge-files/[0-9a-f-]+/${kb.id}/${up.body.id}/1$`));
    expect(s3.objects.get(keys[0]!)!.contentType).toBe('text/markdown');
    expect((await api.delete(`/api/v1/rest/knowledge-bases/${kb.id}/files/${up.body.id}`)).status).toBe(204);
    expect([...s3.objects.keys()].filter((k) => k.includes(up.body.id))).toEqual([]);
  });
});
