import { pageLanguage } from '../answers/phrases.ts';
import { splitSentences } from '../answers/text.ts';

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
  // A line that is only a citation ("(Price list, page 2)", an uploaded file's) is for the eye, not the ear.
  t = t.replace(/^\s*\([^()\n]{1,200}\)\s*$/gm, '');
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

const CURRENCY = {
  en: { $: ['dollar', 'dollars'], '€': ['euro', 'euros'], '£': ['pound', 'pounds'], cents: 'cents' },
  fr: { $: ['dollar', 'dollars'], '€': ['euro', 'euros'], '£': ['livre', 'livres'], cents: 'centimes' },
} as const;
type Symbol_ = '$' | '€' | '£';

/** `39` `95` in `$` as a person says it: "39 dollars 95", "1 dollar", "50 cents". */
function sayAmount(lang: 'en' | 'fr', symbol: Symbol_, whole: string, cents: string | undefined): string {
  const words = CURRENCY[lang][symbol];
  const units = Number(whole.replace(/[,\s.\u202f]/g, ''));
  const c = cents && Number(cents) ? String(Number(cents)) : '';
  if (units === 0 && c) return `${c} ${CURRENCY[lang].cents}`;
  return `${whole} ${units === 1 ? words[0] : words[1]}${c ? ` ${c}` : ''}`;
}

/** `14`, `30`, `pm` as an English speaker says the time: "2:30 p.m.", "9 a.m.". */
function sayClock(hours: number, minutes: string, half: string | undefined): string {
  let h = hours;
  let suffix = half ? (/^p/i.test(half) ? 'p.m.' : 'a.m.') : h >= 12 ? 'p.m.' : 'a.m.';
  if (!half) h = h % 12 || 12;
  if (h === 0) { h = 12; suffix = 'a.m.'; }
  return `${h}${minutes !== '00' ? `:${minutes}` : ''} ${suffix}`;
}

/**
 * Prices and clock times as a person says them on a call (issue 43): "$39.95" is "39 dollars 95", "€0.50" "50 cents",
 * "9:00 am" and "09:00" "9 a.m.", "14:30" "2:30 p.m."; in French "25,50 €" is "25 euros 50" and "14:00" or "14h00"
 * "14 heures". Only the voice surface says it so: the transcript keeps the written form. Other languages are left to
 * the carrier's voice. Pure.
 * @example spokenForm('Plans start at $39.95 and we open at 9:00 am.', 'en') // 'Plans start at 39 dollars 95 and we open at 9 a.m.'
 */
export function spokenForm(text: string, language: string | null | undefined): string {
  const primary = (language ?? 'en').toLowerCase().split(/[-_]/)[0];
  if (primary !== 'en' && primary !== 'fr') return text;
  const lang = primary;
  const decimal = lang === 'fr' ? '[.,]' : '\\.';
  const grouped = lang === 'fr' ? '\\d{1,3}(?:[ \\u202f.]\\d{3})+|\\d+' : '\\d{1,3}(?:,\\d{3})+|\\d+';
  let t = text
    .replace(new RegExp(`([$€£])\\s?(${grouped})(?:${decimal}(\\d{2}))?(?!\\d)`, 'g'),
      (_m, symbol: Symbol_, whole: string, cents?: string) => sayAmount(lang, symbol, whole, cents))
    .replace(new RegExp(`(?<![\\d.,])(${grouped})(?:${decimal}(\\d{2}))?\\s?(€|EUR\\b|USD\\b|\\$)`, 'g'),
      (_m, whole: string, cents: string | undefined, unit: string) => sayAmount(lang, unit === '€' || unit === 'EUR' ? '€' : '$', whole, cents));
  if (lang === 'fr') {
    return t.replace(/\b([01]?\d|2[0-3])\s?(?::|h)\s?([0-5]\d)?(?![\p{L}\d:])/gu, (m, h: string, min?: string) =>
      (m.includes(':') && !min ? m : `${Number(h)} heure${Number(h) > 1 ? 's' : ''}${min && min !== '00' ? ` ${min}` : ''}`));
  }
  t = t.replace(/\b(1[0-2]|0?[1-9])(?::([0-5]\d))?\s?([ap])\.?m\.?(?![a-z])/gi,
    (_m, h: string, min: string | undefined, half: string) => sayClock(Number(h), min ?? '00', half))
    .replace(/\b([01]?\d|2[0-3]):([0-5]\d)(?![\d:])(?!\s?[ap]\.?m)/gi, (_m, h: string, min: string) => sayClock(Number(h), min, undefined));
  // "at 5:30 p.m." ending its sentence keeps one full stop.
  return t.replace(/([ap]\.m\.)\./g, '$1');
}
