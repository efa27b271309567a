import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Worker } from '@temporalio/worker';
import { expect, inject } from 'vitest';
import { workflowBundle } from '../helpers.ts';

/**
 * Recorded histories, replayed on today's workflow code by test/replay.test.ts (every file of the
 * folder). A family's own test file can run its workflow, replay it, and record its fixture with
 * these two helpers: `RECORD_HISTORIES=1 npm test -- test/<family>.test.ts`.
 */
export const FIXTURES = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));

/** With RECORD_HISTORIES=1, writes the history of `workflowId` to fixtures/histories/<file>. */
export async function recordFixture(workflowId: string, file: string): Promise<void> {
  if (process.env.RECORD_HISTORIES !== '1') return;
  // The CLI writes the proto JSON that Temporal's tools (and runReplayHistories) read.
  const { stdout } = await promisify(execFile)(inject('cliPath'), ['workflow', 'show', '--workflow-id', workflowId,
    '--address', inject('temporalAddress'), '--output', 'json'], { maxBuffer: 64 * 1024 * 1024 });
  await writeFile(FIXTURES + file, stdout);
}

/** Replays the histories on the current workflow bundle; any non-determinism fails the test. */
export async function replayAll(histories: { workflowId: string; history: unknown }[]): Promise<void> {
  const results = Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, histories);
  for await (const result of results) {
    expect(result.error, `${result.workflowId}: ${String(result.error)}`).toBeUndefined();
  }
}
