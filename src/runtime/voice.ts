import { pageLanguage } from './phrases.ts';
import { splitSentences } from './text.ts';

/**
 * What the agent says on a call, from what it would write (issue 43, "Voice"): no URL and no
 * "Source:" line is ever spoken (a link becomes "our website"), no markdown, and one or two
 * short sentences a turn. Pure.
 */

const URL = /\b(?:https?:\/\/|www\.)[^\s<>"')\]]*[^\s<>"')\].,;:!?]/gi;
const SOURCE_LINE = /(?:^|\n|\s)(?:Sources?)\s?:\s*(?:\S+(?:,\s*)?)+\s*$/i;

/** Sentences a voice turn keeps at most. */
const MAX_SENTENCES = 2;
/** Characters under which a turn is short however many sentences it has. */
const SHORT_TURN = 160;

/**
 * @example
 * spokenText('We open at 9.\nSource: https://example.com/hours', 'en') // 'We open at 9.'
 * spokenText('Prices are at https://example.com/pricing.', 'en')        // 'Prices are on our website.'
 */
export function spokenText(text: string, language: string | null | undefined): string {
  const fr = pageLanguage(language) === 'fr';
  let t = text.replace(SOURCE_LINE, '').replace(/^\s*(?:Sources?)\s?:.*$/gim, '');
  t = t.replace(/\b(?:at|on|see|visit|here:?)\s+(?=(?:https?:\/\/|www\.))/gi, fr ? '' : 'on ')
    .replace(/\b(?:sur|voir|consultez)\s+(?=(?:https?:\/\/|www\.))/gi, 'sur ')
    .replace(URL, fr ? 'notre site' : 'our website')
    .replace(/\bon on our website\b/g, 'on our website')
    .replace(/[*_`#>]+/g, '').replace(/^\s*[-•]\s+/gm, '')
    .replace(/\s+([.,])/g, '$1').replace(/\s{2,}/g, ' ').trim();
  const sentences = splitSentences(t);
  // A turn short enough to say in a breath or two stays whole (an introduction: who, for whom, why, a question).
  if (sentences.length <= MAX_SENTENCES || t.length <= SHORT_TURN) return sentences.join(' ') || t;
  // The first sentence answers; a closing question (the next thing asked for) is kept over the middle.
  const last = sentences.at(-1)!;
  return [sentences[0]!, /\?$/.test(last) ? last : sentences[1]!].join(' ');
}
