import { evaluateOffline } from './evaluation.ts';
import { greetingFor } from '../answers/phrases.ts';
import { withModules } from './prompt-modules.ts';
import { readAhead, replyOffline } from './reply.ts';
import { matchTransferInput } from './transfer.ts';
import type { AgentRuntime } from './types.ts';

/**
 * The offline runtime: deterministic, no network. It answers from the agent's knowledge by
 * picking the passage sentences that answer the question, says so honestly when nothing does,
 * declines what a guardrail forbids, and asks for the data_schema fields one at a time.
 * Everything it needs to remember between turns it reads back from the transcript (which field
 * it last asked for, what it offered), so it keeps no state. Its rooms: see README.md.
 */

export interface OfflineRuntimeOptions {
  /** The clock for tool-call timestamps and relative dates ("tomorrow"); tests pin it. */
  now?: () => Date;
}

/**
 * The default runtime: no network, the same answer for the same conversation.
 * @example
 * const runtime = createOfflineRuntime();
 * const turn = await runtime.reply({ agent, messages, captured: {}, contactFacts: {}, language: 'en' }, { searchKnowledge });
 */
export function createOfflineRuntime(options: OfflineRuntimeOptions = {}): AgentRuntime {
  const now = options.now ?? (() => new Date());
  return {
    kind: 'offline',
    async greet(agent, opts) {
      return greetingFor(agent, opts.language || agent.default_language || 'en', opts.contactFacts);
    },
    reply: async (input, tools) => withModules(await replyOffline(input, tools, now), input.agent, input),
    readAhead,
    async chooseTransferRule(input) {
      return matchTransferInput(input);
    },
    async evaluate(input) {
      return evaluateOffline(input, now());
    },
  };
}
