/**
 * The built-in caller: a scripted person who talks to an agent (the callee of a sandbox campaign
 * call; the visitor of a simulation). It opens with its goal, answers the agent's questions
 * plainly, and hangs up once the agent has answered or after `maxTurns` replies.
 */

export interface CallerScript { goal: string; persona?: string; maxTurns?: number }

export interface ScriptedCaller {
  opening(): string;
  /** The caller's next line after the agent said `agentText` (turn counts from 1), or null: the caller hangs up. */
  reply(agentText: string, turn: number): string | null;
}

const QUESTION = /\?\s*$/;
const ASKS_FOR = /\b(name|e-?mail|phone|number|address|when|what time|which)\b/i;

export function createScriptedCaller(script: CallerScript): ScriptedCaller {
  const maxTurns = Math.max(1, script.maxTurns ?? 3);
  return {
    opening: () => script.goal,
    reply(agentText, turn) {
      if (turn >= maxTurns) return null;
      const text = agentText.trim();
      if (QUESTION.test(text) && ASKS_FOR.test(text)) return 'I would rather not say. Can you help me with my question?';
      if (QUESTION.test(text)) return 'Yes, please.';
      return turn === 1 ? 'Thank you. Is there anything else I should know?' : null;
    },
  };
}
