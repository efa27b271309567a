import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { agentDeleteHooks } from '../src/agents/delete-hooks.ts';
import { agentPurgeSteps } from '../src/agents/purge-steps.ts';
import { moduleFiles } from '../src/modules.ts';
import { TASK_QUEUE_KINDS, type WorkflowKind } from '../src/temporal/ids.ts';
import { workflowsEntry } from '../src/temporal/workflow-bundle.ts';

/** Families register by being in their folder: these check that what is found is what is meant. */

const WORKFLOWS = new URL('../workflows/', import.meta.url);
const isKind = (value: unknown): value is WorkflowKind => typeof value === 'object' && value !== null && 'workflowType' in value && 'queue' in value;

it('bundles every workflow file, and every declared kind names a workflow its own file exports, on a known queue', async () => {
  const files = moduleFiles(WORKFLOWS);
  expect(files.map((f) => f.slice(f.lastIndexOf('/') + 1))).toContain('purge-agent.ts');
  expect(workflowsEntry().trim().split('\n')).toHaveLength(files.length);
  const kinds: WorkflowKind[] = [];
  for (const file of files) {
    const mod = await import(pathToFileURL(file).href) as Record<string, unknown>;
    for (const kind of Object.values(mod).filter(isKind)) {
      kinds.push(kind);
      expect(typeof mod[kind.workflowType], `${file}: ${kind.workflowType}`).toBe('function');
      expect(TASK_QUEUE_KINDS).toContain(kind.queue);
      expect(['allowDuplicate', 'rejectDuplicate']).toContain(kind.reuse);
    }
  }
  // A new family's kind joins these without an edit here.
  expect(kinds.map((k) => k.workflowType)).toEqual(expect.arrayContaining(['conversationLifecycle', 'crawlSite', 'deliverWebhook', 'purgeAgent', 'sendEmailReply']));
});

it('finds each family\'s agent delete hooks and purge steps in its own folder', async () => {
  expect(Object.keys(await agentDeleteHooks())).toEqual(expect.arrayContaining(['data_tables', 'email_inboxes', 'knowledge', 'phone_numbers', 'training_notes']));
  expect(Object.keys(await agentPurgeSteps())).toEqual(expect.arrayContaining(['conversations', 'site_pages']));
});
