/**
 * The built-in scripted caller: a simulated visitor or callee with a goal, deterministic and
 * offline. It reads its script once (the goal and persona in plain words), then, turn by turn:
 * answers what the agent asks from the facts the script gives (name, email, phone, "order number
 * is 1234"), otherwise asks the next thing its goal needs, and says goodbye when nothing is left.
 * After `maxTurns` it hangs up. The same script and the same agent replies give the same turns,
 * so a run can be replayed from its transcript (a worker that restarts rebuilds the caller that way).
 * Shared by Simulations (the caller) and Campaigns (the sandbox callee).
 */

export interface CallerScript {
  /** What the caller wants, in plain words: questions to ask, things to request, facts to give. */
  goal: string;
  /** Who the caller is: more facts ("My name is Ana Ruiz, email ana@example.com"). */
  persona?: string;
  /** Caller turns, the opening included, after which it hangs up (default 20). */
  maxTurns?: number;
}

export interface ScriptedCaller {
  /** The caller's first words. */
  opening(): string;
  /**
   * The caller's answer to the agent's turn. `turn` is the caller turn being played (the opening is
   * turn 1, so the first reply is turn 2). null: the caller hangs up (goal met earlier, or maxTurns).
   */
  reply(agentText: string, turn: number): string | null;
  /** True once the caller has said goodbye because its goal is met (its next reply is null). */
  goalMet?(): boolean;
}

const DEFAULT_MAX_TURNS = 20;
export const CALLER_GOODBYE = 'Goodbye, and thank you: that is everything I needed.';

interface Fact { key: string; words: string[]; value: string; say: string }

const sentencesOf = (text: string) =>
  text.split(/(?<=[.!?]["”]?)\s+|\n+|;\s*/).map((s) => s.trim()).filter(Boolean);

const clean = (s: string) => s.replace(/^["'“‘\s-]+|["'”’\s]+$/g, '').replace(/[.,;:!]+$/, '').trim();

/** Topics in "about A, B and C": each one asked on its own. */
const topicsOf = (list: string) =>
  list.split(/,\s*(?:and\s+|then\s+)?|\s+and\s+(?:then\s+)?|\s+then\s+/i).map(clean).filter((t) => t.length > 1);

/** What the caller will say to pursue its goal, in the script's order. */
function asksOf(text: string): string[] {
  const asks: string[] = [];
  for (const raw of sentencesOf(text)) {
    const sentence = raw.replace(/^(then|also|and|finally|first|next)[, ]+/i, '');
    const quoted = [...sentence.matchAll(/["“]([^"”]+\?)["”]/g)].map((m) => m[1]!.trim());
    if (quoted.length) { asks.push(...quoted); continue; }
    if (/\?$/.test(sentence) && !/^(my|the)\b/i.test(sentence)) { asks.push(clean(sentence.replace(/^(ask|asks|asking)[: ]+/i, '')) + '?'); continue; }
    const about = /\b(?:asks?|asking|wants? to know|would like to know|inquires?|enquires?)\s+(?:about|for|regarding)\s+(.+)$/i.exec(sentence);
    if (about) { for (const topic of topicsOf(about[1]!)) asks.push(`Can you tell me about ${topic.replace(/^(your|the)\s+/i, 'your ')}?`); continue; }
    const whether = /\b(?:asks?|asking|wants? to know|would like to know)\s+(whether|if|when|where|how|what|which|who|why)\s+(.+)$/i.exec(sentence);
    if (whether) { asks.push(`Can you tell me ${whether[1]!.toLowerCase()} ${clean(whether[2]!)}?`); continue; }
    // "You want to know the opening hours" asks for them: "Can you tell me your opening hours?"
    const know = /\b(?:wants? to know|would like to know|needs? to know|wants? to find out)\s+(.+)$/i.exec(sentence);
    if (know) { asks.push(`Can you tell me ${clean(know[1]!).replace(/^(the|your)\s+/i, 'your ')}?`); continue; }
    const wants = /\b(?:wants?|would like|needs?|tries|trying|hopes?)\s+to\s+(.+)$/i.exec(sentence);
    if (wants && !/\bknow\b/i.test(wants[1]!)) { asks.push(`I would like to ${clean(wants[1]!)}.`); continue; }
  }
  return [...new Set(asks)];
}

const FACT_WORDS: Record<string, string[]> = {
  email: ['email', 'e-mail', 'mail', 'address'],
  phone: ['phone', 'number', 'mobile', 'call you', 'reach you', 'telephone'],
  name: ['name', 'who am i', 'who is', 'call you'],
};

/** Facts the script gives, each with the words an agent's question would use for it. */
function factsOf(text: string): Fact[] {
  const facts: Fact[] = [];
  const add = (key: string, value: string, say: string, words = FACT_WORDS[key] ?? key.split(/\s+/)) => {
    if (!facts.some((f) => f.key === key)) facts.push({ key, words, value, say });
  };
  const email = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/.exec(text);
  if (email) add('email', email[0], `My email is ${email[0]}.`);
  const phone = /(?<![\w@])\+?\d[\d ().-]{6,}\d/.exec(text);
  if (phone) add('phone', phone[0].trim(), `My phone number is ${phone[0].trim()}.`);
  // A name is capitalized words on one line ("My name is Ana Ruiz"), never the next sentence's first word.
  const name = /\b(?:my name is|name is|named|called|i am|i'm|this is)[ \t]+([A-Z][\p{L}'-]+(?:[ \t]+[A-Z][\p{L}'-]+)*)/u.exec(text);
  if (name) add('name', name[1]!, `My name is ${name[1]}.`);
  // "my order number is A-1234", "company: Acme": other facts, named by their own words.
  for (const m of text.matchAll(/\b(?:my|our|the)\s+([a-z][a-z ]{1,30}?)\s+(?:is|are|:)\s+([^,.;\n]+)/gi)) {
    const key = m[1]!.toLowerCase().trim();
    if (key === 'name' || /e-?mail|phone|number$/.test(key) && facts.some((f) => key.includes(f.key))) continue;
    if (/\b(goal|question|problem)\b/.test(key)) continue;
    add(key, m[2]!.trim(), `My ${key} is ${m[2]!.trim()}.`, key.split(/\s+/).filter((w) => w.length > 2));
  }
  return facts;
}

/** Whether the agent's turn asks the caller for something (a question put to "you"). */
const asksCaller = (text: string) =>
  /\?/.test(text) && /\b(your|you)\b/i.test(text) || /\b(please (share|provide|give|tell|send|enter)|may i (have|get|ask))\b/i.test(text);

/** The fact the agent asks for, by the words of its question (most specific first), or null. */
function factAskedFor(facts: Fact[], agentText: string): Fact | null {
  const text = agentText.toLowerCase();
  const questions = sentencesOf(text).filter((s) => /\?$/.test(s) || /\b(please|may i|could you|can you)\b/.test(s));
  const scope = questions.length ? questions.join(' ') : text;
  let best: { fact: Fact; score: number } | null = null;
  for (const fact of facts) {
    for (const word of fact.words) {
      const at = scope.search(new RegExp(`\\b${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`));
      if (at >= 0 && (!best || word.length > best.score)) best = { fact, score: word.length };
    }
  }
  return best?.fact ?? null;
}

/**
 * A caller that follows its script deterministically.
 * @example
 * const caller = createScriptedCaller({ goal: 'Ask about opening hours. My email is ana@example.com', maxTurns: 6 });
 * caller.opening();                               // 'Hello! Can you tell me about opening hours?'
 * caller.reply('We open at 9. What is your email?', 2); // 'My email is ana@example.com.'
 */
export function createScriptedCaller(script: CallerScript): ScriptedCaller {
  const maxTurns = Math.max(1, script.maxTurns ?? DEFAULT_MAX_TURNS);
  const text = [script.persona ?? '', script.goal].join('\n');
  const asks = asksOf(script.goal);
  const facts = factsOf(text);
  const given = new Map<string, number>();
  let next = 0;
  let finished = false;
  let hungUp = false;

  const nextAsk = (): string => {
    if (next < asks.length) return asks[next++]!;
    finished = true;
    return CALLER_GOODBYE;
  };

  return {
    opening() {
      if (asks.length === 0) { next = 0; return `Hello! ${clean(script.goal)}.`; }
      next = 0;
      return `Hello! ${nextAsk()}`;
    },
    reply(agentText, turn) {
      if (hungUp || finished || turn > maxTurns) { hungUp = true; return null; }
      if (asksCaller(agentText)) {
        const fact = factAskedFor(facts, agentText);
        // Each fact is given at most twice: an agent that keeps asking is not answered forever.
        if (fact && (given.get(fact.key) ?? 0) < 2) {
          given.set(fact.key, (given.get(fact.key) ?? 0) + 1);
          return fact.say;
        }
      }
      // With no explicit ask the goal itself was the opening: the first reply is the goodbye.
      return nextAsk();
    },
    goalMet: () => finished,
  };
}
