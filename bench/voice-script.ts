/** What bench:voice's callers say (bench/voice.ts), and the word error rate of what was heard: shared with bench/stt-decoder.ts. */

/** The bench agent's name and greeting (its only words: it has no knowledge). */
export const AGENT_NAME = 'Bench voice';
export const AGENT_GREETING = 'Hello, Acme here. How can I help?';

/** What the callers say, in turn (the same script on every call). */
export const LINES = [
  'What are your opening hours',
  'Do you deliver to my address',
  'How much does the basic plan cost',
  'Can I speak to someone tomorrow',
  'Thank you very much goodbye',
  'I would like to book a table for two',
  'Where is your shop',
];
export const INTERRUPTION = 'Sorry can I ask something else';

/** Word error rate: word-level edit distance over the reference's words. */
export function wordErrors(reference: string, heard: string): { errors: number; words: number } {
  const norm = (s: string) => s.toLowerCase().replace(/[^a-z' ]/g, ' ').split(/\s+/).filter(Boolean);
  const r = norm(reference);
  const h = norm(heard);
  let prev = Array.from({ length: h.length + 1 }, (_, j) => j);
  for (let i = 1; i <= r.length; i++) {
    const row = [i];
    for (let j = 1; j <= h.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (r[i - 1] === h[j - 1] ? 0 : 1));
    prev = row;
  }
  return { errors: prev[h.length]!, words: r.length };
}
