import { foldTags } from '../schemas/live-inbox.ts';
import { visitorSide } from './signals.ts';
import { terms } from '../answers/text.ts';
import { conditionTerms } from './transfer.ts';
import type { RuntimeAgent, TranscriptMessage } from './types.ts';

/**
 * The agent's tracking rules as labels of a conversation (issue 43): a rule's name becomes a label
 * (case-folded, as the live inbox stores labels) of every conversation that meets its condition.
 * Offline, a condition is met when a visitor or caller message carries one of its content terms,
 * as a transfer rule's is; the LLM runtime asks the model and falls back to this.
 */

/** The enabled tracking rules of an agent. */
export function enabledTrackingRules(agent: Pick<RuntimeAgent, 'tracking_rules'>): { name: string; condition: string }[] {
  return (agent.tracking_rules ?? []).filter((r) => r.enabled);
}

/** The labels of the enabled rules whose condition the visitor's side of the transcript meets; undefined when the agent has no rule. */
export function trackingLabels(agent: Pick<RuntimeAgent, 'tracking_rules'>, messages: TranscriptMessage[]): string[] | undefined {
  const rules = enabledTrackingRules(agent);
  if (!rules.length) return undefined;
  const said = terms(messages.filter(visitorSide).map((m) => m.text).join('\n'));
  return foldTags(rules.filter((r) => conditionTerms(r.condition).some((t) => said.has(t))).map((r) => r.name));
}

/** The model's labels kept to the enabled rules' names (case-folded), or null when it gave no list. */
export function checkedLabels(agent: Pick<RuntimeAgent, 'tracking_rules'>, given: unknown): string[] | null {
  if (!Array.isArray(given)) return null;
  const names = new Set(enabledTrackingRules(agent).map((r) => r.name.trim().toLowerCase()));
  return foldTags(given.filter((x): x is string => typeof x === 'string')).filter((label) => names.has(label));
}
