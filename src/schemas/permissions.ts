/** Every permission a token can hold: the specification's table plus the contract's additions. */
export const PERMISSIONS = [
  'agents.read', 'agents.write',
  'voice_profiles.write',
  'phone_numbers.write',
  'reports.read', 'reports.write',
  'simulations.read', 'simulations.write',
  'org.read', 'org.write',
  'sites.read', 'sites.write',
  'campaigns.read', 'campaigns.write',
  'conversations.read', 'conversations.write',
  'knowledge.write',
  // A person's data on request (issue 47): each its own permission.
  'contacts.export', 'contacts.erase',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}
