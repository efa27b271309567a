import type { ActivityDeps, ActivityRegistration } from './index.ts';
import { heartbeating } from './index.ts';
import { abandonExport, runExport } from '../src/data-transfers/export.ts';
import { abandonImport, runImport } from '../src/data-transfers/import.ts';

/** The steps of exports and imports, each idempotent on its job's row (a finished job is left alone). */
export function createDataTransferActivities(deps: Pick<ActivityDeps, 'sql' | 'config'>) {
  return {
    writeExport: (input: { exportId: string }) => heartbeating(() => runExport(deps, input.exportId)),
    failExport: (input: { exportId: string; error: string }) => abandonExport(deps, input.exportId, input.error),
    applyContactImport: (input: { importId: string }) => heartbeating(() => runImport(deps, input.importId)),
    failContactImport: (input: { importId: string; error: string }) => abandonImport(deps, input.importId, input.error),
  };
}
export type DataTransferActivities = ReturnType<typeof createDataTransferActivities>;

export const registration: ActivityRegistration = { queue: 'maintenance', create: createDataTransferActivities };
