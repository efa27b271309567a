import { detachVoiceProfile } from '../db/agents.ts';
import { deleteVoiceProfile } from '../db/voice-profiles.ts';
import type { FamilyDeps } from '../deps.ts';
import { notFound } from '../errors.ts';

/**
 * Deletes a voice profile and detaches it from every agent using it (live or in a pending draft),
 * in one transaction: no agent is left pointing at a profile that no longer exists.
 */
export async function removeVoiceProfile(deps: Pick<FamilyDeps, 'sql'>, orgId: string, id: string): Promise<void> {
  await deps.sql.begin(async (tx) => {
    if (!(await deleteVoiceProfile(tx, orgId, id))) throw notFound('voice profile');
    await detachVoiceProfile(tx, orgId, id);
  });
}
