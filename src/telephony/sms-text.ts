/**
 * An SMS reply as a person would text it (issue 43): the greeting said once (the first reply of a
 * thread is the agent's greeting followed by its answer, and both may greet and ask "How can I help
 * you today?"), and at most SMS_MAX_SEGMENTS segments long, cut at a sentence boundary.
 */

/** The most segments a reply takes: three are 459 GSM-7 characters, or 201 in UCS-2 (any other character). */
export const SMS_MAX_SEGMENTS = 3;

// The GSM 03.38 default alphabet and its extension table (which costs two characters each).
const GSM7 = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
);
const GSM7_EXTENDED = new Set('^{}\\[~]|€');

/** How many characters a text may hold in `segments` segments, by its alphabet, and what it costs. */
function budget(text: string, segments: number): { limit: number; cost: (t: string) => number } {
  const gsm = [...text].every((c) => GSM7.has(c) || GSM7_EXTENDED.has(c));
  if (gsm) return { limit: segments === 1 ? 160 : segments * 153, cost: (t) => [...t].reduce((n, c) => n + (GSM7_EXTENDED.has(c) ? 2 : 1), 0) };
  // UCS-2 counts UTF-16 code units.
  return { limit: segments === 1 ? 70 : segments * 67, cost: (t) => t.length };
}

/** The sentences of a text, each with its closing punctuation. */
const sentencesOf = (text: string) => text.match(/[^.!?\n]+(?:[.!?]+|\n|$)/g)?.map((s) => s.trim()).filter(Boolean) ?? [];

/** A sentence as compared for repetition: its letters and digits, lower case. */
const key = (sentence: string) => sentence.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();

/** A sentence that only greets ("Hello!", "Hi there!", "Bonjour !"). */
const SALUTATION = /^(hi|hello|hey|hi there|hello there|good (morning|afternoon|evening)|bonjour|bonsoir|salut)$/;

/** Drops every sentence said earlier in the reply, and a later part's greeting when an earlier part greeted. */
function withoutRepeats(parts: string[]): string[] {
  const said = new Set<string>();
  let greeted = false;
  return parts.map((part) => {
    const kept = sentencesOf(part).filter((sentence) => {
      const k = key(sentence);
      if (!k) return true;
      if (SALUTATION.test(k)) {
        if (greeted) return false;
        greeted = true;
      }
      if (said.has(k)) return false;
      said.add(k);
      return true;
    });
    for (const s of sentencesOf(part)) if (/^(hi|hello|hey|bonjour|bonsoir|salut)\b/.test(key(s))) greeted = true;
    return kept.join(' ');
  }).filter(Boolean);
}

/** The reply's text: its parts without repeats, joined, within SMS_MAX_SEGMENTS segments (whole sentences, else whole words). */
export function smsText(parts: string[], segments = SMS_MAX_SEGMENTS): string {
  const text = withoutRepeats(parts).join('\n\n');
  const { limit, cost } = budget(text, segments);
  if (cost(text) <= limit) return text;
  let out = '';
  for (const paragraph of text.split('\n\n')) {
    for (const sentence of sentencesOf(paragraph)) {
      const next = out ? `${out}${out.endsWith('\n\n') ? '' : ' '}${sentence}` : sentence;
      if (cost(next) > limit) return out.trim() || cutAtWord(sentence, limit, cost);
      out = next;
    }
    out += '\n\n';
  }
  return out.trim();
}

/** A single sentence longer than the budget: whole words, then "...". */
function cutAtWord(sentence: string, limit: number, cost: (t: string) => number): string {
  let out = '';
  for (const word of sentence.split(/\s+/)) {
    const next = out ? `${out} ${word}` : word;
    if (cost(`${next}...`) > limit) break;
    out = next;
  }
  return `${out}...`;
}
