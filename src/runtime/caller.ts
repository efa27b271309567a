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

/** Contractions and curly quotes of prose written naturally ("You'd like to know", "you’re curious"), spelled out. */
const spelledOut = (text: string) => text.replace(/[’‘]/g, "'")
  .replace(/\b(you|i|he|she|they|we)'d\b/gi, '$1 would').replace(/\b(you|they|we)'re\b/gi, '$1 are').replace(/\b(he|she|it)'s\b/gi, '$1 is')
  .replace(/\bi'm\b/gi, 'I am');

/** The verb after "you" for the business's third-person one ("accepts" → "accept", "has" → "have"); other words as they are. */
function pluralVerb(word: string): string {
  const irregular: Record<string, string> = { has: 'have', is: 'are', does: 'do', was: 'were' };
  if (irregular[word.toLowerCase()]) return irregular[word.toLowerCase()]!;
  if (!/^[a-z]+s$/.test(word) || /ss$/.test(word)) return word;
  if (/ies$/.test(word)) return word.replace(/ies$/, 'y');
  if (/(sh|ch|x|z|o)es$/.test(word)) return word.replace(/es$/, '');
  return word.slice(0, -1);
}

/** What the scenario says of the business in the third person, as the caller says it to the agent ("they offer" → "you offer"). */
const toAgent = (text: string) => text
  .replace(/\b(?:the (?:store|shop|company|business|agent|restaurant|clinic|office)|their)'s\b/gi, 'your')
  .replace(/\bthe (?:store|shop|company|business|restaurant|clinic|office)(?:\s+([a-z]+))?\b/gi, (whole: string, verb?: string) => {
    if (verb && /^(hours|opening|address|phone|policy|policies|website|owner|staff|team)$/i.test(verb)) return whole;
    return verb ? `you ${pluralVerb(verb)}` : 'you';
  })
  .replace(/\bthey are\b/gi, 'you are').replace(/\bthey\b/gi, 'you').replace(/\btheir\b/gi, 'your').replace(/\bthem\b/gi, 'you');

/** Who may be asked, between "ask" and what is asked ("ask them about", "ask the agent whether"). */
const ASKED = String.raw`(?:\s+(?:them|him|her|the agent|the assistant|the business|the store|the shop|the company|the staff))?`;
const ABOUT = new RegExp(String.raw`\b(?:asks?|asking|wants? to know|would like to know|inquires?|enquires?|is curious|are curious|curious|is interested|are interested|interested)${ASKED}\s+(?:about|for|regarding|in)\s+(.+)$`, 'i');
const WHETHER = new RegExp(String.raw`\b(?:asks?|asking|wants? to know|would like to know|needs? to know|curious|wonders?|wondering|find out|finds out|check|checks|checking|to see|confirm|confirms)${ASKED}\s+(whether|if|when|where|how|what|which|who|why)\s+(.+)$`, 'i');

/** How a new clause of the script starts: a subject, or an instruction. */
const CLAUSE_START = String.raw`(?:you|he|she|they|i|we|asks?|asking|finds? out|checks?|requests?|inquires?|enquires?|wonders?|see if|see whether|also)\b`;

/**
 * The clauses of a sentence that each say what the caller wants: "You would like to know X, and you are
 * also curious whether Y" is two. A clause starts after ", and" / "and then" / "but" when a new subject
 * or an instruction follows; a plain list ("about A, B and C") stays one clause.
 */
const clausesOf = (sentence: string) =>
  sentence.split(new RegExp(String.raw`,?\s+(?:and|but)\s+(?:then\s+|also\s+)*(?=${CLAUSE_START})|,\s+(?:then|also)\s+(?=${CLAUSE_START})`, 'i'))
    .map((c) => c.trim()).filter(Boolean);

/** What the caller says for one clause of its script (nothing for a clause that asks nothing). */
function asksOfClause(clause: string): string[] {
  const sentence = clause.replace(/^(then|also|and|finally|first|next|lastly|after that)[, ]+/i, '').replace(/^(you|he|she|they|we)\s+(?:are\s+)?also\s+/i, '$1 ');
  const quoted = [...sentence.matchAll(/["“]([^"”]+\?)["”]/g)].map((m) => m[1]!.trim());
  if (quoted.length) return quoted;
  if (/\?$/.test(sentence) && !/^(my|the)\b/i.test(sentence)) return [clean(sentence.replace(/^(ask|asks|asking)[: ]+/i, '')) + '?'];
  const about = ABOUT.exec(sentence);
  if (about) return topicsOf(about[1]!).map((topic) => `Can you tell me about ${toAgent(topic).replace(/^(your|the)\s+/i, 'your ')}?`);
  const whether = WHETHER.exec(sentence);
  if (whether) return [`Can you tell me ${whether[1]!.toLowerCase()} ${toAgent(clean(whether[2]!))}?`];
  // "You want to know the opening hours" asks for them: "Can you tell me your opening hours?"
  const know = /\b(?:wants? to know|would like to know|needs? to know|wants? to find out|find out)\s+(.+)$/i.exec(sentence);
  if (know) return [`Can you tell me ${toAgent(clean(know[1]!)).replace(/^(the|your)\s+/i, 'your ')}?`];
  const wants = /\b(?:wants?|would like|needs?|tries|trying|hopes?|plans?)\s+to\s+(.+)$/i.exec(sentence);
  if (wants && !/\bknow\b/i.test(wants[1]!)) return [`I would like to ${toAgent(clean(wants[1]!))}.`];
  const request = /\b(?:requests?|asks? for)\s+(?:a|an)\s+(.+)$/i.exec(sentence);
  if (request) return [`I would like a ${toAgent(clean(request[1]!))}.`];
  return [];
}

/**
 * What the caller will say to pursue its goal, in the script's order: from a list of instructions
 * ("Ask about X. Then ask whether Y.") and from prose ("You would like to know X, and you are also
 * curious whether they do Y. Finally, ask for Z."), every ask it names (issue 43).
 */
function asksOf(text: string): string[] {
  const asks: string[] = [];
  for (const sentence of sentencesOf(spelledOut(text))) {
    for (const clause of clausesOf(sentence)) asks.push(...asksOfClause(clause));
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
