import { notFound } from '../../src/errors.ts';
import { findVoiceProfile, insertVoiceProfile, listVoiceProfiles, updateVoiceProfile } from '../../src/db/voice-profiles.ts';
import { removeVoiceProfile } from '../../src/voice-profiles/index.ts';
import { IdParams, PageQuery } from '../../src/schemas/common.ts';
import {
  VoiceProfileCreateSchema, VoiceProfileListSchema, VoiceProfilePatchSchema, VoiceProfileSchema,
} from '../../src/schemas/voice-profiles.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

export const voiceProfilesFamily: RouteFamily = {
  base: BASE,
  order: 60,
  tag: 'Voice profiles',
  description: 'The organization\'s reusable voice library: a base voice plus delivery direction (accent, energy, pace, formality).',
  routes: [
    route({
      method: 'GET', path: '/voice-profiles', operationId: 'list_voice_profiles', summary: 'List voice profiles, newest first',
      permissions: ['agents.read'], query: PageQuery,
      responses: { 200: { description: 'A page of voice profiles', schema: VoiceProfileListSchema } },
      async handler({ query, principal, deps }) {
        const page = await listVoiceProfiles(deps.sql, principal.orgId, query);
        return pageReply(page, query);
      },
    }),
    route({
      method: 'GET', path: '/voice-profiles/:id', operationId: 'get_voice_profile', summary: 'Get a voice profile',
      permissions: ['agents.read'], params: IdParams,
      responses: { 200: { description: 'The voice profile', schema: VoiceProfileSchema } },
      async handler({ params, principal, deps }) {
        const profile = await findVoiceProfile(deps.sql, principal.orgId, params.id);
        if (!profile) throw notFound('voice profile');
        return { status: 200, body: profile };
      },
    }),
    route({
      method: 'POST', path: '/voice-profiles', operationId: 'create_voice_profile', summary: 'Create a voice profile',
      description: '`accent`, `energy`, `pace` and `formality` default to `neutral`, `medium`, `normal` and `neutral`; `custom_direction` to null.',
      permissions: ['voice_profiles.write'], body: VoiceProfileCreateSchema,
      responses: { 201: { description: 'The new voice profile', schema: VoiceProfileSchema } },
      async handler({ body, principal, deps }) {
        const profile = await insertVoiceProfile(deps.sql, principal.orgId, body);
        return { status: 201, body: profile, headers: { Location: `${BASE}/voice-profiles/${profile.id}` } };
      },
    }),
    route({
      method: 'PATCH', path: '/voice-profiles/:id', operationId: 'update_voice_profile', summary: 'Update a voice profile',
      description: 'Any subset of the fields; `{}` changes nothing; `custom_direction: null` clears the direction. Agents using the profile speak with the change at once.',
      permissions: ['voice_profiles.write'], params: IdParams, body: VoiceProfilePatchSchema,
      responses: { 200: { description: 'The updated voice profile', schema: VoiceProfileSchema } },
      async handler({ params, body, principal, deps }) {
        const profile = await updateVoiceProfile(deps.sql, principal.orgId, params.id, body);
        if (!profile) throw notFound('voice profile');
        return { status: 200, body: profile };
      },
    }),
    route({
      method: 'DELETE', path: '/voice-profiles/:id', operationId: 'delete_voice_profile', summary: 'Delete a voice profile',
      description: 'Agents using the profile (live or in a pending draft) lose their `voice_profile_id` and speak with their base `voice`.',
      permissions: ['voice_profiles.write'], params: IdParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        await removeVoiceProfile(deps, principal.orgId, params.id);
        return { status: 204 };
      },
    }),
  ],
};
