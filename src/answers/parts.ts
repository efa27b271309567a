import { fold } from './text.ts';

/**
 * What a visitor's message asks, part by part. Visitors tell a story before they ask ("my daughter is moving out of her
 * dorm in May, it's just some boxes. what would a 5x5 cost?"), and ask two things at once ("what's the admin fee and do
 * you charge a deposit?"). Read whole, the story's words outweigh the question's and two questions get one answer. This
 * finds the clauses that ask, by the shape of a question in English and French (an interrogative word, an auxiliary
 * verb first, or the question mark that closes it), never by what they are about.
 */

/** Words that open a question: interrogatives and auxiliaries put first (English, French, and their chat spellings). */
const OPENERS = new Set([
  // English interrogatives, as typed.
  'what', 'whats', "what's", 'wat', 'wut', 'when', 'whens', "when's", 'where', 'wheres', "where's", 'who', 'whos', "who's",
  'whom', 'whose', 'which', 'why', 'how', 'hows', "how's", 'hw',
  // English auxiliaries and modals put first ("do you…", "can I…", "is there…").
  'do', 'does', 'did', 'dont', "don't", 'doesnt', "doesn't", 'can', 'cant', "can't", 'could', 'will', 'would', 'wont',
  "won't", 'should', 'shall', 'may', 'might', 'must', 'is', 'isnt', "isn't", 'are', 'arent', "aren't", 'was', 'were',
  'am', 'have', 'has', 'any', 'anything', 'anyone', 'anybody',
  // French interrogatives and question forms.
  'quel', 'quelle', 'quels', 'quelles', 'kel', 'kelle', 'quand', 'qd', 'où', 'comment', 'combien', 'cb', 'pourquoi', 'qui',
  'quoi', 'est-ce', 'estce', "qu'est-ce", 'peut-on', 'puis-je', 'pouvez-vous', 'avez-vous', 'faut-il', 'dois-je',
]);

/** Two-word openers whose first word alone opens statements as well ("je peux…?", "vous avez…?", "il y a…?"). */
const OPENING_PAIRS = [
  /^(est|y) ce\b/, /^(je|j'|on|nous|vous|vs) (peux|peut|pouvons|pouvez|dois|doit|devons|devez|faut|accept\w*|av\w*|fai\w*|livr\w*|propos\w*|vend\w*|pren\w*)\b/,
  /^il (y a|faut)\b/, /^(c'est|c) (combien|quoi|qui|quand|ou|où|possible|payant|gratuit|ouvert|ferm\w*)\b/, /^(faut|fo) (il|t'il|-il)?\b/,
  /^(i|we) (was|were|am) wondering\b/, /^(tell|show) (me|us)\b/, /^(i|we)('d| would) like to know\b/, /^(i|we) (need|want) to know\b/,
];

/** Words that join a clause to the one before it ("and", "et", "also", a typed "+") and may stand before a second question. */
const JOINS = /\s+(?:and(?: also)?|also|plus|&|\+|et(?: aussi)?)\s+/gi;

/** Whether a clause opens as a question does. */
export function opensQuestion(clause: string): boolean {
  const f = fold(clause).replace(/^(and|also|so|but|ok|okay|oh|hey|hi|hello|also|et|alors|mais|sinon|bonjour|salut|du coup|aussi)\b[\s,]*/g, '').trim();
  const first = /^[\p{L}'-]+/u.exec(f)?.[0] ?? '';
  return OPENERS.has(first) || OPENING_PAIRS.some((p) => p.test(f));
}

/** A clause that tells of the visitor or their plans ("my daughter is moving…", "je bosse de nuit…"): a story, not a question. */
const TELLS = /^(i|i'm|im|i've|ive|i'll|my|we|we're|were|we've|our|me|just|je|j'|j'ai|ma|mon|mes|on|nous|notre|nos)\b/;

/** Content left once the opener's small words go: a clause of one or two letters' words asks nothing alone. */
const hasContent = (clause: string) => fold(clause).split(/[^\p{L}\p{N}]+/u).filter((w) => w.length >= 3).length >= 2;

/** What a message asks (`asks`, one string per question) and what it tells besides (`story`, '' when nothing). */
export interface MessageParts { asks: string[]; story: string }

/**
 * The parts of `message` that ask, in order: one string per question, each as the visitor wrote it, and the clauses
 * that only tell (the story told before the question), together. A message that is one question (or none the shape of
 * this reading finds) comes back whole, as the only part, with no story. Two questions joined by "and" ("what's the admin
 * fee and do u charge a deposit") are two parts, as are two sentences that each ask.
 */
export function questionParts(message: string): MessageParts {
  const text = message.replace(/\s+/g, ' ').trim();
  const whole = { asks: [text], story: '' };
  if (!text) return whole;
  const told: string[] = [];
  // Sentences, each with the mark that ends it.
  const sentences = text.match(/[^.!?…]+(?:[.!?…]+|$)/g)?.map((s) => s.trim()).filter(Boolean) ?? [text];
  const asks: string[] = [];
  for (const sentence of sentences) {
    const asked = /\?\s*$/.test(sentence);
    const clauses = sentence.replace(/[.!?…]+$/, '').split(/\s*[,;:]\s+|\s+[-–—]\s+/).filter((c) => c.trim());
    clauses.forEach((clause, i) => {
      const last = i === clauses.length - 1;
      // "whats the admin fee and do u charge a deposit": a join before a second opener makes two questions.
      const pieces: string[] = [];
      let rest = clause;
      for (;;) {
        JOINS.lastIndex = 0;
        let split = -1;
        let after = 0;
        for (let m = JOINS.exec(rest); m; m = JOINS.exec(rest)) {
          if (opensQuestion(rest.slice(m.index + m[0].length)) && hasContent(rest.slice(0, m.index))) {
            split = m.index;
            after = m.index + m[0].length;
            break;
          }
        }
        if (split < 0) break;
        pieces.push(rest.slice(0, split));
        rest = rest.slice(after);
      }
      pieces.push(rest);
      // The first piece asks when it opens as a question, ends the sentence's question mark, or is followed by a
      // second question and tells nothing of the visitor ("price of a wardrobe box and can i bring back…"); the others
      // open as questions.
      const [first, ...others] = pieces;
      if (opensQuestion(first!) || (asked && last && !others.length) || (others.length && !TELLS.test(fold(first!)))) asks.push(first!.trim());
      else told.push(first!.trim());
      asks.push(...others.map((p) => p.trim()));
    });
  }
  // Nothing shaped as a question, or the message is that one question: it is read whole.
  if (!asks.length) return whole;
  if (asks.length === 1 && fold(asks[0]!).length >= fold(text.replace(/[.!?…]+$/, '')).length - 1) return whole;
  return { asks: asks.slice(0, 3), story: told.filter(Boolean).join('. ') };
}
