/**
 * Whether a promise was made by workflow code: its realm is a workflow context, whose global holds the SDK's
 * activator (the SDK's own test, vm-shared.ts `getActivator`). Only a process running workflows in its main thread
 * (WORKFLOW_THREAD=main) holds such promises; its rejections are the workflow's (the SDK fails the workflow task).
 */
export function isWorkflowPromise(promise: Promise<unknown>): boolean {
  try {
    const realmFunction = (promise.constructor as unknown as { constructor: FunctionConstructor }).constructor;
    return realmFunction('return globalThis.__TEMPORAL_ACTIVATOR__')() !== undefined;
  } catch {
    return false;
  }
}
