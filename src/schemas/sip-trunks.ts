import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, Timestamp, Uuid } from './common.ts';

const Label = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Display name, 1 to 200 characters' });
const SipHost = Type.String({
  minLength: 1, maxLength: 300,
  description: 'Host of the PBX: an IPv4 address, a bracketed IPv6 address or a DNS name, with an optional port 1 to 65535. '
    + 'A pasted URI is accepted and normalized to a bare lower-case `hostname[:port]` (`sip:`/`sips:`/`http(s)://` schemes, the user part, '
    + 'paths, `;params` and `?headers` are dropped); an invalid host is 400 `validation_error` with code `invalid_sip_host`',
  examples: ['pbx.example.com:5061'],
});
const SipUsername = Type.String({
  minLength: 1, maxLength: 256, pattern: '^\\S+$', 'x-code': 'invalid_sip_username',
  description: 'User name the service authenticates with on the trunk, 1 to 256 characters without spaces',
});
const Password = Type.String({
  minLength: 1, maxLength: 256, writeOnly: true,
  description: 'Write-only credential, 1 to 256 characters: stored encrypted (AES-256-GCM), never returned or logged',
});

/** A trunk as every endpoint answers it: host and user name, never a credential. */
export const SipTrunkSchema = Type.Object({
  id: Uuid,
  label: Type.String(),
  sip_host: Type.String({ description: 'Bare lower-case `hostname[:port]`' }),
  sip_username: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'SipTrunk', additionalProperties: false, description: 'A connection to a customer\'s own PBX; the password is never shown' });
export type SipTrunk = Static<typeof SipTrunkSchema>;

export const SipTrunkCreateSchema = Type.Object({
  label: Label,
  sip_host: SipHost,
  sip_username: SipUsername,
  password: Password,
}, { $id: 'SipTrunkCreate', additionalProperties: false });

export const SipTrunkPatchSchema = Type.Object({
  label: Type.Optional(Label),
  sip_host: Type.Optional(SipHost),
  sip_username: Type.Optional(SipUsername),
  password: Type.Optional({ ...Password, description: 'A new credential: replaces (rotates) the stored one at once' }),
}, { $id: 'SipTrunkPatch', additionalProperties: false, description: 'Any subset of the fields; `{}` changes nothing' });

export const SipTrunkListSchema = ListEnvelope(SipTrunkSchema, 'SipTrunkList');
