import type { Db, Sql } from './index.ts';

/**
 * The one rule for "the workflow may start before the transaction that wrote its rows commits" (issue 41, item 3;
 * why this rule: `src/temporal/README.md`). A use case starts its workflow inside that transaction, after
 * `holdUntilCommit` took the workflow id's transaction-scoped advisory lock; the workflow's first activity reads its
 * rows through `readAfterCommit`, whose shared lock on the same id waits until that transaction has ended. Then a
 * row is there (committed) or is not (rolled back, or the process died: the transaction went with its connection).
 * No polling, no timeout to tune, nothing to compensate. A start that no transaction holds (a Schedule's firing, a
 * signal to a running workflow) takes nothing, and the read goes through at once.
 */
/** Inside the writing transaction, before the start: the workflow's first read waits for this transaction's end. */
export async function holdUntilCommit(tx: Db, workflowId: string): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtextextended(${workflowId}, 0))`;
}

/**
 * The workflow's first read of the rows its start wrote: waits for the starting transaction (if one still holds the
 * id), then reads in a transaction of its own, so what it sees is committed.
 */
export async function readAfterCommit<T>(sql: Sql, workflowId: string, read: (tx: Db) => Promise<T>): Promise<T> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock_shared(hashtextextended(${workflowId}, 0))`;
    return read(tx);
  }) as Promise<T>;
}
