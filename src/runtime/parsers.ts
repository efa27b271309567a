import type { CountryCode } from 'libphonenumber-js/max';
import { phoneLibMax as phoneLib } from '../domain/phone-lib.ts';
import type { Lang } from '../answers/phrases.ts';
import { DECLINE_FIELD, isQuestion } from './signals.ts';
import { fold, overlap, terms } from '../answers/text.ts';
import type { DataField, RuntimeAgent } from './types.ts';

/**
 * Data capture: a parser per data_schema type (email, phone, number, boolean, date, free text),
 * shared by both runtimes (the LLM's capture_data tool normalizes through them).
 */

export interface ParseContext { lang: Lang; country: CountryCode; now: Date }

// The lookbehind makes a match start only where a local part can start: without it a long run of
// digits is scanned again from every position (quadratic).
export const EMAIL = /(?<![a-z0-9._%+-])[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}/i;
/** What the parsers read of one message: a data answer is never longer, and it bounds their work. */
const MAX_PARSED_CHARS = 4000;

export function parseEmail(text: string): string | undefined {
  return EMAIL.exec(text)?.[0].toLowerCase();
}

/** The first valid phone number in the text, in E.164 (national numbers read in the default country). */
export function parsePhone(text: string, country: CountryCode): string | undefined {
  const found = phoneLib().findPhoneNumbersInText(text, { defaultCountry: country });
  const valid = found.find((f) => f.number.isValid());
  if (valid) return valid.number.number;
  const whole = phoneLib().parsePhoneNumberFromString(text.trim(), country);
  return whole?.isValid() ? whole.number : undefined;
}

const SMALL_NUMBERS: Record<string, number> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12,
  fifteen: 15, twenty: 20, thirty: 30, fifty: 50, hundred: 100, thousand: 1000,
  un: 1, une: 1, deux: 2, trois: 3, quatre: 4, cinq: 5, sept: 7, huit: 8, neuf: 9, dix: 10, onze: 11, douze: 12, quinze: 15,
  vingt: 20, trente: 30, cinquante: 50, cent: 100, mille: 1000,
};

/**
 * The first number in the text: "1,250" and "1 250" are thousands, "3,5" is a decimal in French,
 * "10k" is 10000, and a few number words ("ten", "dix") are read too.
 */
export function parseNumber(text: string, lang: Lang): number | undefined {
  const m = /(-?\d{1,3}(?:[\s\u00a0\u202f.,']\d{3})+(?:[.,]\d+)?|-?\d+(?:[.,]\d+)?)(\s?k\b)?/i.exec(text);
  if (m) {
    let raw = m[1]!.replace(/[\s\u00a0\u202f']/g, '');
    const lastComma = raw.lastIndexOf(',');
    const lastDot = raw.lastIndexOf('.');
    if (lastComma >= 0 && lastDot >= 0) {
      // Both: the later one is the decimal separator.
      const [thousands, decimal] = lastComma > lastDot ? ['.', ','] : [',', '.'];
      raw = raw.split(thousands).join('').replace(decimal, '.');
    } else if (lastComma >= 0) {
      const groups = raw.split(',');
      const thousands = lang !== 'fr' && groups.slice(1).every((g) => g.length === 3);
      raw = thousands || groups.length > 2 ? groups.join('') : groups.join('.');
    } else if (lastDot >= 0) {
      const groups = raw.split('.');
      if (groups.length > 2 || (lang === 'fr' && groups[1]!.length === 3)) raw = groups.join('');
    }
    const n = Number(raw);
    if (Number.isFinite(n)) return m[2] ? n * 1000 : n;
  }
  for (const word of fold(text).split(/[^a-z]+/)) {
    const n = SMALL_NUMBERS[word];
    if (n !== undefined) return n;
  }
  return undefined;
}

const YES_WORDS = /\b(yes|yeah|yep|yup|sure|of course|absolutely|definitely|correct|indeed|true|oui|ouais|bien sur|absolument|exact|tout a fait|affirmative)\b/;
const NO_WORDS = /\b(no|nope|nah|not|never|false|don'?t|doesn'?t|isn'?t|aren'?t|non|pas|jamais|aucun)\b/;

/** yes/no in English or French; the first one said wins ("no, not yet" is false, "yes, not sure when" is true). */
export function parseBoolean(text: string): boolean | undefined {
  const f = fold(text);
  const yes = YES_WORDS.exec(f);
  const no = NO_WORDS.exec(f);
  if (yes && (!no || yes.index <= no.index)) return true;
  if (no) return false;
  return undefined;
}

const MONTHS: Record<string, number> = {
  january: 1, jan: 1, february: 2, feb: 2, march: 3, mar: 3, april: 4, apr: 4, may: 5, june: 6, jun: 6, july: 7, jul: 7,
  august: 8, aug: 8, september: 9, sept: 9, sep: 9, october: 10, oct: 10, november: 11, nov: 11, december: 12, dec: 12,
  janvier: 1, janv: 1, fevrier: 2, fevr: 2, fev: 2, mars: 3, avril: 4, avr: 4, mai: 5, juin: 6, juillet: 7, juil: 7,
  aout: 8, septembre: 9, octobre: 10, novembre: 11, decembre: 12,
};
const MONTH_NAMES = Object.keys(MONTHS).sort((a, b) => b.length - a.length).join('|');
const WEEKDAYS: Record<string, number> = {
  sunday: 0, monday: 1, tuesday: 2, wednesday: 3, thursday: 4, friday: 5, saturday: 6,
  dimanche: 0, lundi: 1, mardi: 2, mercredi: 3, jeudi: 4, vendredi: 5, samedi: 6,
};

function isoDate(year: number, month: number, day: number): string | undefined {
  const d = new Date(Date.UTC(year, month - 1, day));
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) return undefined;
  return d.toISOString().slice(0, 10);
}

const fullYear = (y: string) => (y.length === 2 ? 2000 + Number(y) : Number(y));

/**
 * A calendar date as `YYYY-MM-DD`: ISO dates, 14/03/2026 (day first in French and whenever the
 * first number cannot be a month, month first otherwise), "March 14, 2026", "14 mars 2026",
 * a month and day without a year (the next such day), today / tomorrow / next Monday (and French).
 */
export function parseDate(text: string, lang: Lang, now: Date): string | undefined {
  const f = fold(text);
  let m = /\b(\d{4})-(\d{1,2})-(\d{1,2})\b/.exec(f);
  if (m) return isoDate(Number(m[1]), Number(m[2]), Number(m[3]));
  m = /\b(\d{1,2})[/.-](\d{1,2})[/.-](\d{4}|\d{2})\b/.exec(f);
  if (m) {
    const a = Number(m[1]);
    const b = Number(m[2]);
    const dayFirst = lang === 'fr' || a > 12;
    return isoDate(fullYear(m[3]!), dayFirst ? b : a, dayFirst ? a : b);
  }
  const withYear = (month: number, day: number, year?: string) => {
    if (year) return isoDate(fullYear(year), month, day);
    const thisYear = now.getUTCFullYear();
    const candidate = isoDate(thisYear, month, day);
    return candidate && candidate >= now.toISOString().slice(0, 10) ? candidate : isoDate(thisYear + 1, month, day);
  };
  m = new RegExp(`\\b(${MONTH_NAMES})\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b(?:,?\\s+(\\d{4}))?`).exec(f);
  if (m) return withYear(MONTHS[m[1]!]!, Number(m[2]), m[3]);
  m = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th|er)?\\s+(?:of\\s+)?(${MONTH_NAMES})\\b\\.?(?:,?\\s+(\\d{4}))?`).exec(f);
  if (m) return withYear(MONTHS[m[2]!]!, Number(m[1]), m[3]);
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const plusDays = (n: number) => new Date(today + n * 86_400_000).toISOString().slice(0, 10);
  if (/\b(day after tomorrow|apres-demain|apres demain)\b/.test(f)) return plusDays(2);
  if (/\b(tomorrow|demain)\b/.test(f)) return plusDays(1);
  if (/\b(today|aujourd'hui|aujourdhui)\b/.test(f)) return plusDays(0);
  m = new RegExp(`\\b(${Object.keys(WEEKDAYS).join('|')})\\b`).exec(f);
  if (m) {
    const delta = (WEEKDAYS[m[1]!]! - new Date(today).getUTCDay() + 7) % 7 || 7;
    return plusDays(delta);
  }
  return undefined;
}

const STRING_LEAD_INS = [
  /^(?:my|our)\s+[\p{L}\s]{1,30}?\s+(?:is|are|would be)\s+/iu,
  /^(?:it'?s|it is|this is|i am|i'm|call me|we are|we're|that'?s|sure,?|yes,?|ok,?)\s+/iu,
  /^(?:je m'appelle|je suis|c'est|nous sommes|mon\s+[\p{L}\s]{1,30}?\s+est|notre\s+[\p{L}\s]{1,30}?\s+est)\s+/iu,
];

/** A free-text answer to a question the agent just asked: the message minus lead-ins like "my name is". */
export function parseAnswer(text: string): string | undefined {
  let value = text.trim().replace(/[’]/g, "'");
  for (let i = 0; i < 2; i += 1) for (const re of STRING_LEAD_INS) value = value.replace(re, '');
  value = value.replace(/^["'«“\s]+|["'»”.!\s]+$/g, '').trim();
  if (!value || value.length > 200 || isQuestion(value)) return undefined;
  if (DECLINE_FIELD.test(fold(value)) && value.split(/\s+/).length <= 4) return undefined;
  return value;
}

/** The value of `field` in a free-text message; `asked` says the agent has just asked for this very field. */
export function extractField(field: DataField, message: string, asked: boolean, ctx: ParseContext): unknown {
  const text = message.slice(0, MAX_PARSED_CHARS);
  switch (field.type) {
    case 'email':
      return parseEmail(text);
    case 'phone': {
      // Unprompted, only an international number or one introduced as a phone number counts.
      const introduced = /\+\d|\b(phone|mobile|cell|tel|call|reach|text|whatsapp|numero|telephone|portable|joindre|appeler)\b/.test(fold(text));
      return asked || introduced ? parsePhone(withoutEmails(text), ctx.country) : undefined;
    }
    case 'date':
      return parseDate(withoutEmails(text), ctx.lang, ctx.now);
    case 'number': {
      const clean = withoutPhonesAndDates(text, ctx);
      if (asked) return parseNumber(clean, ctx.lang);
      // Unprompted: a number said next to a word of the field ("we are 50 employees").
      const fieldTerms = terms(`${field.name.replace(/_/g, ' ')} ${field.description ?? ''}`);
      return overlap(fieldTerms, terms(clean)).length && /\d/.test(clean) ? parseNumber(clean, ctx.lang) : undefined;
    }
    case 'boolean':
      return asked ? parseBoolean(text) : undefined;
    case 'string': {
      if (asked) return parseAnswer(text);
      if (/name|nom/.test(field.name)) {
        const m = /\b(?:my name is|i am|i'm|this is|je m'appelle|je suis)\s+(\p{Lu}[\p{L}'-]+(?:\s+\p{Lu}[\p{L}'-]+)?)/u.exec(text.replace(/’/g, "'"));
        return m?.[1];
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

export function withoutEmails(text: string): string {
  return text.replace(new RegExp(EMAIL.source, 'gi'), ' ').replace(/https?:\/\/\S+/g, ' ');
}

function withoutPhonesAndDates(text: string, ctx: ParseContext): string {
  let out = withoutEmails(text);
  for (const found of phoneLib().findPhoneNumbersInText(out, { defaultCountry: ctx.country }).reverse()) {
    out = `${out.slice(0, found.startsAt)} ${out.slice(found.endsAt)}`;
  }
  return out.replace(/\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}\b/g, ' ');
}

/**
 * Checks and normalizes a value captured for a field (the LLM runtime's capture_data tool): phone
 * numbers to E.164, emails lower-cased, dates to YYYY-MM-DD, numbers and booleans from text too.
 */
export function normalizeFieldValue(field: DataField, value: unknown, ctx: ParseContext): { ok: true; value: unknown } | { ok: false; error: string } {
  if (value === null || value === undefined || value === '') return { ok: false, error: 'empty value' };
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  let parsed: unknown;
  if (field.type === 'number' && typeof value === 'number') parsed = Number.isFinite(value) ? value : undefined;
  else if (field.type === 'boolean' && typeof value === 'boolean') parsed = value;
  else if (field.type === 'string') parsed = text.trim().slice(0, 500) || undefined;
  else if (field.type === 'phone') parsed = parsePhone(text, ctx.country);
  else if (field.type === 'number') parsed = parseNumber(text, ctx.lang);
  else if (field.type === 'boolean') parsed = parseBoolean(text);
  else parsed = extractField(field, text, true, ctx);
  return parsed === undefined ? { ok: false, error: `not a valid ${field.type}` } : { ok: true, value: parsed };
}

/** The country national phone numbers are read in: config variable `country` (ISO 3166 alpha-2), else FR for French pages, else US. */
export function defaultCountry(agent: RuntimeAgent, lang: Lang): CountryCode {
  const configured = agent.config_variables?.country ?? agent.config_variables?.default_country;
  if (configured && /^[A-Za-z]{2}$/.test(configured)) return configured.toUpperCase() as CountryCode;
  return lang === 'fr' ? 'FR' : 'US';
}
