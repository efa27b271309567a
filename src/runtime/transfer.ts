import { terms } from './text.ts';

/**
 * Which transfer rule a caller's words meet: the runtime's reading of each rule's natural-language
 * condition, highest priority first. A rule matches when the caller's latest message carries a
 * content term of its condition other than the words every condition shares ("caller asks to...").
 * Both runtimes use it (the LLM one answers, but a transfer must not depend on a model's mood).
 */

/** Words that say who and how, not what: "when the caller asks to speak with ...". */
const GENERIC = terms('caller customer visitor user person someone asks ask asked wants wanted wishes request requests requesting '
  + 'mention mentions mentioned says say said talk speak speaking call calls calling about regarding something anything issue question '
  + 'questions help transfer connect human agent');

export interface RuleCandidate { id: string; name: string; condition: string; priority: number; enabled: boolean }

export function matchTransferRule<R extends RuleCandidate>(rules: R[], callerText: string): R | null {
  const said = terms(callerText);
  if (said.size === 0) return null;
  const ordered = rules.filter((r) => r.enabled).sort((a, b) => b.priority - a.priority);
  for (const rule of ordered) {
    const wanted = [...terms(rule.condition)].filter((t) => !GENERIC.has(t));
    if (wanted.some((t) => said.has(t))) return rule;
  }
  return null;
}
