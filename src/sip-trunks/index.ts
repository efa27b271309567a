import type { SecretBox } from '../crypto/secret-box.ts';
import { deleteSipTrunk, insertSipTrunk, updateSipTrunk, type SipTrunkInput } from '../db/sip-trunks.ts';
import type { FamilyDeps } from '../deps.ts';
import { normalizeSipHost } from '../domain/sip-host.ts';
import { AppError, fieldError, notFound } from '../errors.ts';
import type { SipTrunk } from '../schemas/sip-trunks.ts';

/** The SIP trunks family's use cases: the password is sealed with `secrets`, never returned. */
type SipTrunkDeps = Pick<FamilyDeps, 'sql'> & { secrets: SecretBox };

/** The bare `hostname[:port]` of a submitted host, or 400 on `sip_host`. */
function sipHost(input: string): string {
  const result = normalizeSipHost(input);
  if (!result.ok) throw fieldError('sip_host', 'invalid_sip_host', result.reason);
  return result.host;
}

/** Creates a trunk, its host normalized (400 `invalid_sip_host`) and its password sealed. */
export async function createSipTrunk(deps: SipTrunkDeps, orgId: string, input: SipTrunkInput): Promise<SipTrunk> {
  return insertSipTrunk(deps.sql, deps.secrets, orgId, { ...input, sip_host: sipHost(input.sip_host) });
}

/** Changes any subset of a trunk's fields; a new password rotates the stored one. 404 when the trunk is not the organization's. */
export async function patchSipTrunk(deps: SipTrunkDeps, orgId: string, id: string, patch: Partial<SipTrunkInput>): Promise<SipTrunk> {
  const fields = patch.sip_host === undefined ? patch : { ...patch, sip_host: sipHost(patch.sip_host) };
  const trunk = await updateSipTrunk(deps.sql, deps.secrets, orgId, id, fields);
  if (!trunk) throw notFound('SIP trunk');
  return trunk;
}

/** Deletes a trunk no transfer rule uses: 409 `sip_trunk_in_use` (with `transfer_rule_count`) while rules still reference it. */
export async function removeSipTrunk(deps: Pick<FamilyDeps, 'sql'>, orgId: string, id: string): Promise<void> {
  const result = await deps.sql.begin((tx) => deleteSipTrunk(tx, orgId, id));
  if (result.rulesInUse > 0) {
    const rules = result.rulesInUse === 1 ? '1 transfer rule uses' : `${result.rulesInUse} transfer rules use`;
    throw new AppError(409, 'sip_trunk_in_use', `${rules} this SIP trunk: reassign them to another trunk or delete them first`, {
      extra: { transfer_rule_count: result.rulesInUse },
    });
  }
  if (!result.deleted) throw notFound('SIP trunk');
}
