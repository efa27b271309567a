import { renderTemplate } from '../answers/phrases.ts';
import { splitSentences } from '../answers/text.ts';
import type { RuntimeAgent, TurnResult } from './types.ts';

/**
 * The agent's enabled `prompt_modules` in both runtimes (issue 43). Every enabled module's content,
 * with the agent's `{{variables}}` rendered, goes into the LLM system prompt. The modules named in
 * BUILT_IN also act on the offline runtime, and on the model's replies as a check: their rule is
 * applied to every reply of a turn, whichever runtime wrote it. A module of another name is an
 * instruction to the model alone (the offline runtime follows no free text).
 */

export const BUILT_IN_MODULES = ['disclaimer', 'no_links', 'concise'] as const;
export type BuiltInModule = (typeof BUILT_IN_MODULES)[number];

/** What the model is told of each built-in module (its content follows, when it has one). */
const INSTRUCTIONS: Record<BuiltInModule, string> = {
  disclaimer: 'End every reply with this sentence, word for word:',
  no_links: 'Never write a URL or a "Source:" line: say the information is on our website.',
  concise: 'Keep every reply to at most two sentences.',
};

interface EnabledModule { name: string; kind: BuiltInModule | null; content: string }

/** "No links", "no-links" and "NO_LINKS" all name `no_links`. */
function kindOf(name: string): BuiltInModule | null {
  const key = name.trim().toLowerCase().replace(/[\s-]+/g, '_');
  return (BUILT_IN_MODULES as readonly string[]).includes(key) ? key as BuiltInModule : null;
}

/** The enabled modules, their content rendered with the agent's variables and the contact's facts. */
export function enabledModules(agent: Pick<RuntimeAgent, 'name' | 'config_variables' | 'prompt_modules'>,
  contactFacts: Record<string, unknown> = {}): EnabledModule[] {
  return (agent.prompt_modules ?? []).filter((m) => m.enabled)
    .map((m) => ({ name: m.name, kind: kindOf(m.name), content: renderTemplate(m.content, agent, contactFacts) }));
}

/** The system prompt's section of the enabled modules, or '' when there is none. */
export function modulesPrompt(agent: Pick<RuntimeAgent, 'name' | 'config_variables' | 'prompt_modules'>, contactFacts: Record<string, unknown>): string {
  const modules = enabledModules(agent, contactFacts);
  if (!modules.length) return '';
  const lines = modules.map((m) => (m.kind
    ? `- ${INSTRUCTIONS[m.kind]}${m.content ? ` ${m.content}` : ''}`
    : `- ${m.name}: ${m.content}`));
  return `Modules of this agent; follow each:\n${lines.join('\n')}`;
}

const URL = /\b(?:https?:\/\/|www\.)[^\s<>"')\]]*[^\s<>"')\].,;:!?]/gi;
const SOURCE_LINE = /^\s*Sources?\s?:.*$/gim;

function withoutLinks(text: string, lang: string): string {
  const website = /^fr/i.test(lang) ? 'notre site' : 'our website';
  return text.replace(SOURCE_LINE, '').replace(URL, website).replace(/[ \t]{2,}/g, ' ').replace(/\n{2,}/g, '\n').trim();
}

/** At most two sentences; a "Source:" line, which is not a sentence said, stays. */
function concise(text: string): string {
  const source = text.match(SOURCE_LINE)?.[0]?.trim();
  const body = text.replace(SOURCE_LINE, '').trim();
  const sentences = splitSentences(body);
  const kept = sentences.length > 2 ? sentences.slice(0, 2).join(' ') : body;
  return source ? `${kept}\n${source}` : kept;
}

/** Applies the built-in modules' rules to one reply. */
export function applyModulesToReply(reply: string, modules: EnabledModule[], lang: string): string {
  let out = reply;
  if (modules.some((m) => m.kind === 'concise')) out = concise(out);
  if (modules.some((m) => m.kind === 'no_links')) out = withoutLinks(out, lang);
  for (const m of modules.filter((x) => x.kind === 'disclaimer' && x.content)) {
    if (!out.includes(m.content)) out = /\nSources?\s?:/i.test(out) ? out.replace(/\n(Sources?\s?:)/i, ` ${m.content}\n$1`) : `${out} ${m.content}`;
  }
  return out;
}

/** A turn's replies with the built-in modules applied (the same for the offline runtime and the model). */
export function withModules(turn: TurnResult, agent: Pick<RuntimeAgent, 'name' | 'config_variables' | 'prompt_modules'>,
  opts: { language: string; contactFacts: Record<string, unknown> }): TurnResult {
  const modules = enabledModules(agent, opts.contactFacts).filter((m) => m.kind);
  if (!modules.length) return turn;
  return { ...turn, replies: turn.replies.map((reply) => applyModulesToReply(reply, modules, opts.language)) };
}
