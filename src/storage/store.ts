import { createDiskBlobStore, type BlobStore } from './blobs.ts';
import { createS3BlobStore } from './s3.ts';

const stores = new Map<string, BlobStore>();

/**
 * The deployment's blob store, one per configuration: the disk under `DATA_DIR` unless S3-compatible storage is
 * configured (`S3_BUCKET`, see `s3.ts`).
 */
export function blobStoreOf(config: BlobConfig): BlobStore {
  const key = config.S3_BUCKET
    ? `s3:${config.S3_ENDPOINT ?? ''}:${config.S3_REGION}:${config.S3_BUCKET}:${config.S3_PREFIX}:${config.S3_ACCESS_KEY_ID ?? ''}`
    : `disk:${config.DATA_DIR}`;
  let store = stores.get(key);
  if (!store) {
    store = config.S3_BUCKET
      ? createS3BlobStore({
        bucket: config.S3_BUCKET, region: config.S3_REGION, endpoint: config.S3_ENDPOINT, accessKeyId: config.S3_ACCESS_KEY_ID,
        secretAccessKey: config.S3_SECRET_ACCESS_KEY, forcePathStyle: config.S3_FORCE_PATH_STYLE, prefix: config.S3_PREFIX,
      })
      : createDiskBlobStore(config.DATA_DIR);
    stores.set(key, store);
  }
  return store;
}

/** The settings that choose the blob store (a subset of the service's configuration). */
export interface BlobConfig {
  DATA_DIR: string; S3_BUCKET?: string | undefined; S3_REGION: string; S3_ENDPOINT?: string | undefined; S3_ACCESS_KEY_ID?: string | undefined;
  S3_SECRET_ACCESS_KEY?: string | undefined; S3_FORCE_PATH_STYLE: boolean; S3_PREFIX: string;
}
