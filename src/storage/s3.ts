import type { Readable } from 'node:stream';
import type * as S3Module from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { checkBlobKey, type BlobStore } from './blobs.ts';

/** Where an S3-compatible store is and how to sign for it (the S3_* settings). */
export interface S3Settings {
  bucket: string; region: string; endpoint?: string | undefined; accessKeyId?: string | undefined; secretAccessKey?: string | undefined;
  forcePathStyle?: boolean; prefix?: string;
}

type S3Sdk = typeof S3Module;

const missing = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
};

/**
 * The blob store in an S3-compatible bucket (AWS S3, MinIO, R2, a local test server), through `@aws-sdk/client-s3`.
 * Keys are the caller's, under `prefix/` when one is set. The SDK is loaded on first use: a deployment on disk never
 * holds it. Checksums are sent only where the API requires them, which every S3-compatible server accepts.
 */
export function createS3BlobStore(settings: S3Settings): BlobStore {
  let ready: Promise<{ sdk: S3Sdk; client: S3Client }> | undefined;
  const open = () => ready ??= import('@aws-sdk/client-s3').then((sdk) => ({
    sdk,
    client: new sdk.S3Client({
      region: settings.region,
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      forcePathStyle: settings.forcePathStyle ?? false,
      ...(settings.accessKeyId && settings.secretAccessKey
        ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } } : {}),
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    }),
  }));
  const Bucket = settings.bucket;
  const keyOf = (key: string) => (settings.prefix ? `${settings.prefix}/${checkBlobKey(key)}` : checkBlobKey(key));
  return {
    async put(key, bytes, contentType) {
      const { sdk, client } = await open();
      await client.send(new sdk.PutObjectCommand({ Bucket, Key: keyOf(key), Body: bytes, ContentType: contentType, ContentLength: bytes.length }));
    },
    async get(key) {
      const { sdk, client } = await open();
      try {
        const out = await client.send(new sdk.GetObjectCommand({ Bucket, Key: keyOf(key) }));
        const bytes = Buffer.from(await out.Body!.transformToByteArray());
        return { bytes, contentType: out.ContentType ?? 'application/octet-stream' };
      } catch (err) {
        if (missing(err)) return null;
        throw err;
      }
    },
    async open(key) {
      const { sdk, client } = await open();
      try {
        const out = await client.send(new sdk.GetObjectCommand({ Bucket, Key: keyOf(key) }));
        return { stream: out.Body as Readable, size: out.ContentLength ?? 0, contentType: out.ContentType ?? 'application/octet-stream' };
      } catch (err) {
        if (missing(err)) return null;
        throw err;
      }
    },
    async delete(key) {
      const { sdk, client } = await open();
      // S3 answers 204 for a key that is not there: deleting twice is not an error.
      await client.send(new sdk.DeleteObjectCommand({ Bucket, Key: keyOf(key) }));
    },
    async deletePrefix(prefix) {
      const { sdk, client } = await open();
      const Prefix = `${keyOf(prefix)}/`;
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(new sdk.ListObjectsV2Command({ Bucket, Prefix, ...(ContinuationToken ? { ContinuationToken } : {}) }));
        const keys = (page.Contents ?? []).map((o) => o.Key).filter((k): k is string => !!k);
        if (keys.length) await client.send(new sdk.DeleteObjectsCommand({ Bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }));
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
    },
  };
}
