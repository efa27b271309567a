import type { Sql } from '../db/index.ts';
import { listTransferRules } from '../db/transfer-rules.ts';
import { groundingWords } from '../conversations/lifecycle.ts';
import type { Agent } from '../schemas/agents.ts';
import { LEXICON_KNOWLEDGE, wordsOf } from './lexicon.ts';

/**
 * The words a call to this agent is likely to hear, beyond common ones (issue 44): the agent's name, greeting and
 * consent line, its transfer rules' names and conditions, and the words its knowledge writes most. The offline
 * recognizer searches these with the language model's most probable words (lexicon.ts); a provider ignores them.
 */
export async function callWords(sql: Sql, orgId: string, agent: Agent, consent: string | null): Promise<string[]> {
  const [rules, knowledge] = await Promise.all([listTransferRules(sql, orgId, agent.id), groundingWords(sql, agent.id, LEXICON_KNOWLEDGE)]);
  return wordsOf([agent.name, agent.greeting, consent, ...rules.flatMap((r) => [r.name, r.condition]), ...knowledge]);
}
