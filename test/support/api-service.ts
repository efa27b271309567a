import { afterAll, beforeAll } from 'vitest';
import { client, startTestService, type TestService } from '../helpers.ts';
import type { Api } from './orgs.ts';

/** An API-only test service (no worker, a limiter that never refuses) and an admin of a fresh organization. */
export interface ApiOnlyService { svc: TestService; admin: { orgId: string; token: string }; api: Api }

/**
 * Registers the file's `beforeAll` and `afterAll`: starts the service once for the file, hands it
 * to `ready`, and stops it at the end.
 */
export function useApiOnlyService(ready: (service: ApiOnlyService) => void): void {
  let svc: TestService | undefined;
  beforeAll(async () => {
    svc = await startTestService({ RATE_LIMIT_PER_MINUTE: 100_000 }, { worker: false });
    const admin = await svc.newOrg();
    ready({ svc, admin, api: client(svc.url, admin.token) });
  });
  afterAll(async () => { await svc?.stop(); });
}
