import type { RedactionSettings, RedactionTarget } from '../schemas/governance.ts';
import { LOG_POLICY, type RedactionPolicy } from '../domain/redaction.ts';

/**
 * Agents' redaction settings as this process last read them (issue 47, review): storing a message or
 * an event applies its agent's settings without reading them again each time. An entry carries the
 * `agent_governance.version` it was read at; every write that applies it names that version and
 * goes through only while it is still the agent's (src/db/conversations.ts, src/db/events.ts), else
 * the settings are read again and the write retried. So a change made through another replica is
 * never missed, and this process's own changes replace their entry at once.
 */

/** An agent's settings (null: none) and the version of its `agent_governance` row they were read at (0: no row). */
export interface KnownRedaction { settings: RedactionSettings | null; version: number }

const MAX_ENTRIES = 10_000;
const byAgent = new Map<string, KnownRedaction>();
// A conversation's agent never changes: remembered so a message's write needs no lookup of it.
const agentOfConversation = new Map<string, string>();

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_ENTRIES) map.delete(map.keys().next().value!);
}

export function knownRedaction(agentId: string): KnownRedaction | undefined { return byAgent.get(agentId); }

/** Replaces what is known of the agent (a read that raced a change only costs the next write a retry: its version no longer matches). */
export function rememberRedaction(agentId: string, known: KnownRedaction): void { remember(byAgent, agentId, known); }

export function knownAgentOf(conversationId: string): string | undefined { return agentOfConversation.get(conversationId); }
export function rememberAgentOf(conversationId: string, agentId: string): void { remember(agentOfConversation, conversationId, agentId); }

// A campaign call's agent as its campaign read when the call was claimed or answered: the statement ending the call writes
// `campaign_call.ended` only while the campaign's agent is still this one (and its redaction at the version known).
const agentOfCall = new Map<string, string>();
export function knownAgentOfCall(callId: string): string | undefined { return agentOfCall.get(callId); }
export function rememberAgentOfCall(callId: string, agentId: string): void { remember(agentOfCall, callId, agentId); }

/** The policy `settings` apply at `target`, or null when they hide nothing there. */
export function policyAt(settings: RedactionSettings | null | undefined, target: RedactionTarget): RedactionPolicy | null {
  if (!settings || !settings.kinds.length || !settings.targets.includes(target)) return null;
  return { kinds: settings.kinds, countries: settings.national_id_countries, patterns: settings.patterns };
}

/**
 * What a log line naming `agentId` hides: always e-mail, phone, card and IBAN, and the agent's own
 * kinds (its national ids, its patterns) whatever its targets, as this process last read them.
 */
export function logPolicyOf(agentId: unknown): RedactionPolicy {
  const settings = typeof agentId === 'string' ? byAgent.get(agentId)?.settings : null;
  if (!settings?.kinds.length) return LOG_POLICY;
  return {
    kinds: [...new Set([...LOG_POLICY.kinds, ...settings.kinds])],
    countries: settings.national_id_countries, patterns: settings.patterns,
  };
}
