import type { Sql } from '../src/db/index.ts';
import type { Config } from '../src/config.ts';
import { createPurgeActivities } from './purge.ts';

export interface ActivityDeps { sql: Sql; config: Config }

/** Activities grouped by the task queue whose worker runs them. */
export function createActivities(deps: ActivityDeps) {
  return {
    maintenance: { ...createPurgeActivities(deps) },
  };
}
