import { listPage, type Db } from './index.ts';
import { newId } from '../ids.ts';
import type { BaseVoice } from '../schemas/voices.ts';
import {
  VOICE_PROFILE_DEFAULTS, type Accent, type EnergyLevel, type Formality, type Pace,
  type VoiceProfile, type VoiceProfileCreate, type VoiceProfilePatch,
} from '../schemas/voice-profiles.ts';

interface VoiceProfileRow {
  id: string; name: string; base_voice: BaseVoice; accent: Accent; energy: EnergyLevel; pace: Pace;
  formality: Formality; custom_direction: string | null; created_at: Date; updated_at: Date;
}

const COLUMNS = ['id', 'name', 'base_voice', 'accent', 'energy', 'pace', 'formality', 'custom_direction', 'created_at', 'updated_at'];
const WRITABLE = ['name', 'base_voice', 'accent', 'energy', 'pace', 'formality', 'custom_direction'] as const;

/** The API shape of a voice profile row. */
export function toVoiceProfile(row: VoiceProfileRow): VoiceProfile {
  return {
    id: row.id, name: row.name, base_voice: row.base_voice, accent: row.accent, energy: row.energy, pace: row.pace,
    formality: row.formality, custom_direction: row.custom_direction,
    created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

/** Creates a profile; the optional delivery fields take VOICE_PROFILE_DEFAULTS. */
export async function insertVoiceProfile(db: Db, orgId: string, input: VoiceProfileCreate): Promise<VoiceProfile> {
  const values = { ...VOICE_PROFILE_DEFAULTS, ...definedFields(input), id: newId(), org_id: orgId };
  const [row] = await db<VoiceProfileRow[]>`insert into voice_profiles ${db(values)} returning ${db(COLUMNS)}`;
  return toVoiceProfile(row!);
}

/** The wording direction of an agent's voice profile (formality, custom_direction), or null when it has none in its organization. */
export async function findVoiceStyle(db: Db, agentId: string, profileId: string): Promise<{ formality: Formality; custom_direction: string | null } | null> {
  const [row] = await db<{ formality: Formality; custom_direction: string | null }[]>`select p.formality, p.custom_direction
    from voice_profiles p join agents a on a.org_id = p.org_id where p.id = ${profileId} and a.id = ${agentId}`;
  return row ?? null;
}

/**
 * The profile in the organization, or null. `forShare` locks it until the caller's transaction
 * ends, so a concurrent DELETE (which detaches the profile from agents) waits: use it when
 * pointing an agent at the profile.
 */
export async function findVoiceProfile(db: Db, orgId: string, id: string, opts: { forShare?: boolean } = {}): Promise<VoiceProfile | null> {
  const [row] = await db<VoiceProfileRow[]>`select ${db(COLUMNS)} from voice_profiles
    where id = ${id} and org_id = ${orgId} ${opts.forShare ? db`for share` : db``}`;
  return row ? toVoiceProfile(row) : null;
}

export async function listVoiceProfiles(db: Db, orgId: string, q: { limit: number; offset: number }): Promise<{ data: VoiceProfile[]; total: number }> {
  return listPage(db, { ...q, columns: db(COLUMNS), from: db`from voice_profiles where org_id = ${orgId}`, order: db`created_at desc, id desc` }, toVoiceProfile);
}

/** Applies the fields present in `patch` (null clears `custom_direction`). Null when absent. */
export async function updateVoiceProfile(db: Db, orgId: string, id: string, patch: VoiceProfilePatch): Promise<VoiceProfile | null> {
  const fields = definedFields(patch);
  if (Object.keys(fields).length === 0) return findVoiceProfile(db, orgId, id);
  const [row] = await db<VoiceProfileRow[]>`
    update voice_profiles set ${db(fields)}, updated_at = now()
    where id = ${id} and org_id = ${orgId} returning ${db(COLUMNS)}`;
  return row ? toVoiceProfile(row) : null;
}

/** Deletes the profile row only; the caller detaches it from agents in the same transaction. False when absent. */
export async function deleteVoiceProfile(db: Db, orgId: string, id: string): Promise<boolean> {
  const rows = await db`delete from voice_profiles where id = ${id} and org_id = ${orgId} returning id`;
  return rows.length > 0;
}

function definedFields(input: VoiceProfilePatch): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const key of WRITABLE) if (input[key] !== undefined) fields[key] = input[key];
  return fields;
}

/** True when the profile is the organization's; FOR SHARE, so a concurrent delete waits for the caller's transaction. */
export async function voiceProfileHeld(db: Db, orgId: string, id: string): Promise<boolean> {
  const [found] = await db`select 1 from voice_profiles where id = ${id} and org_id = ${orgId} for share`;
  return found !== undefined;
}
