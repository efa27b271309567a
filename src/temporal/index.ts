import { Client, Connection } from '@temporalio/client';
import { asyncContextGate, callContextStorageOf } from './async-context.ts';
import { SEARCH_ATTRIBUTES } from './search-attributes.ts';
import type { Config } from '../config.ts';

export { SEARCH_ATTRIBUTES } from './search-attributes.ts';
export { taskQueues, workflowIds } from './ids.ts';

export async function connectTemporal(config: Pick<Config, 'TEMPORAL_NAMESPACE'>, address: string): Promise<{ connection: Connection; client: Client }> {
  const connection = await Connection.connect({ address });
  // Its call context (withDeadline) is switched off between uses; see async-context.ts.
  asyncContextGate.register(callContextStorageOf(connection));
  return { connection, client: new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }) };
}

/**
 * Registers our search attributes on the namespace when missing (the dev server and a real cluster
 * alike). Registration is idempotent; a cluster that forbids it (Temporal Cloud) needs them added by
 * its operator, which the error says.
 */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.keys(SEARCH_ATTRIBUTES).filter((name) => !(name in (customAttributes ?? {})));
  if (missing.length === 0) return;
  const KEYWORD = 2; // temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((name) => [name, KEYWORD])),
    });
  } catch (err) {
    const again = await connection.operatorService.listSearchAttributes({ namespace });
    if (missing.every((name) => name in (again.customAttributes ?? {}))) return; // another process registered them first
    throw new Error(`could not register search attributes ${missing.join(', ')} on namespace ${namespace}: ${(err as Error).message}`);
  }
}
