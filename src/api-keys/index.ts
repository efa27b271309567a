import type { Authenticator, Principal } from '../auth/authenticator.ts';
import { createApiKey, revokeApiKey } from '../auth/keys.ts';
import type { FamilyDeps } from '../deps.ts';
import { missingPermission, notFound } from '../errors.ts';
import type { ApiKeyCreate } from '../schemas/api-keys.ts';

/**
 * The API keys family's use cases: a key issues and revokes only keys whose every permission it
 * holds itself (403 `missing_permission` names the first it lacks). The token is hashed at rest by
 * `src/auth/keys.ts` and shown once, in the issue's answer.
 */

/** Issues a key (a user token with `user_email`, the member created if new). */
export async function issueApiKey(deps: Pick<FamilyDeps, 'sql'>, principal: Pick<Principal, 'orgId' | 'permissions'>, body: ApiKeyCreate) {
  const lacking = body.permissions.find((p) => !principal.permissions.has(p));
  if (lacking) throw missingPermission(lacking);
  return deps.sql.begin((tx) => createApiKey(tx, principal.orgId, {
    name: body.name, permissions: body.permissions, userEmail: body.user_email ?? null,
  }));
}

/** Revokes a key at once: the row locked and checked in one transaction, then this replica's cache forgets it. */
export async function removeApiKey(
  deps: Pick<FamilyDeps, 'sql'> & { authenticator: Pick<Authenticator, 'forget'> },
  principal: Pick<Principal, 'orgId' | 'permissions'>, id: string,
): Promise<void> {
  const revoked = await deps.sql.begin((tx) => revokeApiKey(tx, principal.orgId, id, principal.permissions));
  if (!revoked) throw notFound('api key');
  if (revoked !== true) throw missingPermission(revoked.lacking);
  deps.authenticator.forget(id);
}
