import { terms } from '../answers/text.ts';
import { visitorSide } from './signals.ts';
import type { TransferCandidate, TransferInput } from './types.ts';

/**
 * Which transfer rule a caller's words meet: the runtime's reading of each rule's natural-language
 * condition, highest priority first. A rule matches when the caller's latest message carries a
 * content term of its condition other than the words every condition shares ("caller asks to...").
 * The offline runtime decides by it; the LLM runtime lets the model decide and falls back to it
 * when the model cannot be reached.
 */

/** Words that say who and how, not what: "when the caller asks to speak with ...". */
const GENERIC = terms('caller customer visitor user person someone asks ask asked wants wanted wishes request requests requesting '
  + 'mention mentions mentioned says say said talk speak speaking call calls calling about regarding something anything issue question '
  + 'questions help transfer connect human agent');

export type RuleCandidate = TransferCandidate;

/** The content terms of a natural-language condition: what it is about, without who asks and how. */
export function conditionTerms(condition: string): string[] {
  return [...terms(condition)].filter((t) => !GENERIC.has(t));
}

export function matchTransferRule<R extends RuleCandidate>(rules: R[], callerText: string): R | null {
  const said = terms(callerText);
  if (said.size === 0) return null;
  const ordered = rules.filter((r) => r.enabled).sort((a, b) => b.priority - a.priority);
  for (const rule of ordered) {
    if (conditionTerms(rule.condition).some((t) => said.has(t))) return rule;
  }
  return null;
}

/** The latest visitor or caller message of a transcript ('' when there is none). */
export function latestVisitorText(messages: TransferInput<TransferCandidate>['messages']): string {
  return [...messages].reverse().find(visitorSide)?.text ?? '';
}

/** The offline runtime's decision: the condition's words in the latest visitor or caller message. */
export function matchTransferInput<R extends TransferCandidate>(input: TransferInput<R>): R | null {
  return matchTransferRule(input.rules, latestVisitorText(input.messages));
}
