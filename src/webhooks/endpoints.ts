import { WorkflowNotFoundError } from '@temporalio/client';
import type { SecretBox } from '../crypto/secret-box.ts';
import {
  deleteEndpoint, endpointHealth, findEndpoint, insertEndpoint, pendingDeliveries, rotateEndpointSecret, updateEndpoint,
} from '../db/webhooks.ts';
import { workflowIds } from '../temporal/ids.ts';
import { newWebhookSecret } from '../events/signing.ts';
import { assertOutboundUrl, outboundPolicy } from '../net/outbound.ts';
import type { WebhookCreate, WebhookEndpoint, WebhookEndpointDetail, WebhookEndpointWithSecret, WebhookPatch } from '../schemas/webhooks.ts';
import type { FamilyDeps } from '../deps.ts';

/** What the webhook use cases need. */
export type WebhookDeps = FamilyDeps & { secrets: SecretBox };

/** A receiver URL: https, and never a private address (unless ALLOW_PRIVATE_NETWORK_TARGETS). */
async function checkUrl(deps: Pick<WebhookDeps, 'config'>, url: string): Promise<void> {
  await assertOutboundUrl(url, 'url', outboundPolicy(deps.config));
}

/** Creates an endpoint with a new signing secret, which the answer shows once. */
export async function createEndpoint(deps: WebhookDeps, orgId: string, input: WebhookCreate): Promise<WebhookEndpointWithSecret> {
  await checkUrl(deps, input.url);
  return insertEndpoint(deps.sql, deps.secrets, orgId, { ...input, secret: newWebhookSecret() });
}

/**
 * Applies a PATCH (a new URL is checked first); null when there is no such endpoint. Disabling it
 * cancels its pending retry workflows: they end `canceled` at once, their deliveries `failed`.
 */
export async function changeEndpoint(deps: WebhookDeps, orgId: string, id: string, patch: WebhookPatch): Promise<WebhookEndpoint | null> {
  if (patch.url !== undefined) await checkUrl(deps, patch.url);
  const endpoint = await updateEndpoint(deps.sql, orgId, id, patch);
  if (endpoint && patch.enabled === false) await cancelRetries(deps, id, await pendingDeliveries(deps.sql, orgId, id));
  return endpoint;
}

/** Deletes an endpoint and its delivery log, and cancels its pending retry workflows; false when there is no such endpoint. */
export async function removeEndpoint(deps: WebhookDeps, orgId: string, id: string): Promise<boolean> {
  const pending = await pendingDeliveries(deps.sql, orgId, id);
  const deleted = await deleteEndpoint(deps.sql, orgId, id);
  if (deleted) await cancelRetries(deps, id, pending);
  return deleted;
}

/**
 * Cancels the retry workflows of these deliveries (issue 43: before, they slept out their delay, up to
 * 10 hours, then found the endpoint gone). A delivery with no workflow (its first attempt is the
 * dispatcher's) or one that ended meanwhile has nothing to cancel; a failure is logged, and the run then
 * ends at its next attempt as it always did.
 */
async function cancelRetries(deps: Pick<WebhookDeps, 'temporal' | 'log'>, endpointId: string, pending: { eventId: string; manualRetries: number }[]): Promise<void> {
  const ids = pending.flatMap((d) => [
    workflowIds.webhookDelivery(d.eventId, endpointId), ...(d.manualRetries > 0 ? [workflowIds.webhookDelivery(d.eventId, endpointId, d.manualRetries)] : []),
  ]);
  await Promise.all(ids.map(async (workflowId) => {
    try {
      await deps.temporal.workflow.getHandle(workflowId).cancel();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) deps.log.warn({ err, workflow_id: workflowId }, 'could not cancel a webhook retry workflow');
    }
  }));
}

/** Replaces the signing secret (the old one signs 24 hours more); null when there is no such endpoint. */
export async function rotateSecret(deps: WebhookDeps, orgId: string, id: string): Promise<WebhookEndpointWithSecret | null> {
  return rotateEndpointSecret(deps.sql, deps.secrets, orgId, id, newWebhookSecret());
}

/** The endpoint with its 24-hour success rate and latest failure, or null. */
export async function showEndpoint(deps: WebhookDeps, orgId: string, id: string): Promise<WebhookEndpointDetail | null> {
  const endpoint = await findEndpoint(deps.sql, orgId, id);
  return endpoint ? { ...endpoint, ...(await endpointHealth(deps.sql, id)) } : null;
}
