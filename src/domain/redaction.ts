import type { CountryCode } from 'libphonenumber-js/max';
import type * as Ibantools from 'ibantools';
import { createRequire } from 'node:module';
import type * as Stdnum from 'stdnum';
import type { RedactionKind } from '../schemas/governance.ts';
import { phoneLibMax } from './phone-lib.ts';

/**
 * Personal data found in free text, and the text with it masked (issue 47). Each detector pairs a
 * loose candidate pattern with a real check, so an order number is not taken for a card: phones by
 * libphonenumber-js (valid for their country), cards by length and the Luhn checksum, IBANs by
 * ibantools (country length and mod-97), national ids by the `stdnum` validators of the configured
 * countries, e-mail addresses by shape, and free-form patterns as the agent's owner wrote them.
 */


export interface RedactionPattern { name: string; pattern: string }

/** What to look for: the kinds, the countries whose national ids count, the free-form patterns. */
export interface RedactionPolicy {
  kinds: readonly RedactionKind[];
  countries?: readonly string[];
  patterns?: readonly RedactionPattern[];
  /** The country national phone numbers (without +) are read in; international ones are found anyway. */
  defaultCountry?: string;
}

/** One piece of personal data in a text: where it is, what it is, and what shows instead. */
export interface Finding { kind: RedactionKind; start: number; end: number; mask: string }

/** What logs always hide, whatever an agent says. */
export const LOG_POLICY: RedactionPolicy = { kinds: ['email', 'phone', 'card', 'iban'] };

const DOT = '•';
const EMAIL = /(?<![\w.%+-])[\w.%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}/gi;
// Digit groups split by one space or dash: card candidates (13 to 19 digits of whole groups, passing Luhn). A run
// that starts inside a word ("DE89 3704 ...", an IBAN or a reference) is not one: its letters are matched to skip it.
const DIGIT_RUN = /(?<![\w-])[a-z]*\d+(?:[ -]\d+)*(?![\d-])/gi;
const IBAN = /\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]){11,30}\b/gi;
// Runs of letter/digit groups split by a space, dot, dash or slash: national id candidates.
const ID_RUN = /\b[A-Z0-9]{1,13}(?:[ .\-/][A-Z0-9]{1,13})*\b/gi;
const ID_GROUPS_MAX = 5;
const PATTERN_MAX = 500;

/** True when the digits pass the Luhn checksum (payment card numbers). */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) { d *= 2; if (d > 9) d -= 9; }
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** A phone number in E.164 as the transcript shows it: `+1 ••• ••• 0142`. */
export function maskPhone(e164: string, callingCode?: string): string {
  const digits = e164.replace(/\D/g, '');
  const cc = callingCode ?? digits.slice(0, Math.max(1, digits.length - 10));
  return `+${cc} ${DOT.repeat(3)} ${DOT.repeat(3)} ${digits.slice(-4)}`;
}

const maskCard = (digits: string) => `${DOT.repeat(4)} ${DOT.repeat(4)} ${DOT.repeat(4)} ${digits.slice(-4)}`;
const maskIban = (iban: string) => `${iban.slice(0, 2)}${DOT.repeat(2)} ${DOT.repeat(4)} ${iban.slice(-4)}`;

function findEmails(text: string): Finding[] {
  return [...text.matchAll(EMAIL)].map((m) => ({ kind: 'email' as const, start: m.index, end: m.index + m[0].length, mask: `${DOT.repeat(3)}@${DOT.repeat(3)}` }));
}

function findPhones(text: string, country: string | undefined): Finding[] {
  const found = phoneLibMax().findPhoneNumbersInText(text, country ? { defaultCountry: country as CountryCode } : {});
  return found.map((f) => ({ kind: 'phone' as const, start: f.startsAt, end: f.number.ext ? endOfNumber(text, f.startsAt, f.number.nationalNumber) : f.endsAt,
    mask: maskPhone(f.number.number, f.number.countryCallingCode) }));
}

// libphonenumber reads what follows a number after a comma as its extension ("+1 415 555 0142, 4111 ..."): the finding
// ends where the number's own digits end, so the next value (a card, say) is found by its own detector.
function endOfNumber(text: string, start: number, nationalNumber: string): number {
  let digits = '';
  for (let i = start; i < text.length; i++) {
    if (!/\d/.test(text[i]!)) continue;
    digits += text[i];
    if (digits.endsWith(nationalNumber)) return i + 1;
  }
  return text.length;
}

/** Runs of digit groups (split by one space or dash): a card may sit among other numbers, so every window of whole groups is tried, longest first. */
function findCards(text: string): Finding[] {
  const out: Finding[] = [];
  for (const run of text.matchAll(DIGIT_RUN)) {
    if (!/^\d/.test(run[0])) continue;
    const groups = [...run[0].matchAll(/\d+/g)].map((g) => ({ start: run.index + g.index, end: run.index + g.index + g[0].length, digits: g[0] }));
    let i = 0;
    while (i < groups.length) {
      let found: Finding | null = null;
      for (let j = groups.length - 1; j >= i && !found; j--) {
        const digits = groups.slice(i, j + 1).map((g) => g.digits).join('');
        if (digits.length >= 13 && digits.length <= 19 && luhnValid(digits)) {
          found = { kind: 'card', start: groups[i]!.start, end: groups[j]!.end, mask: maskCard(digits) };
          out.push(found);
          i = j + 1;
        }
      }
      if (!found) i++;
    }
  }
  return out;
}

/** ibantools, required on the first IBAN-shaped text (its CommonJS build, the same release's code as its ES module; issue 48). */
let ibantools: typeof Ibantools | undefined;

function findIbans(text: string): Finding[] {
  // The candidate may run on into the next word ("... 0130 00 thanks"): the longest valid prefix counts.
  return [...text.matchAll(IBAN)].flatMap((m) => {
    for (let end = m[0].length; end >= 15; end--) {
      if (!/[A-Z0-9]/i.test(m[0][end - 1]!)) continue;
      ibantools ??= createRequire(import.meta.url)('ibantools') as typeof Ibantools;
      const iban = ibantools.electronicFormatIBAN(m[0].slice(0, end).toUpperCase()) ?? '';
      if (ibantools.isValidIBAN(iban)) return [{ kind: 'iban' as const, start: m.index, end: m.index + end, mask: maskIban(iban) }];
    }
    return [];
  });
}

type Validator = { validate(value: string): { isValid: boolean } };
/**
 * `stdnum`'s validators, required (synchronously: it is CommonJS) the first time a policy names countries: three
 * hundred modules and about 2.4 MiB of heap that a process redacting no national id never needs (issue 48).
 */
let personValidators: Record<string, Validator[] | undefined> | undefined;
const validatorsOf = (countries: readonly string[]): Validator[] => {
  if (!countries.length) return [];
  personValidators ??= (createRequire(import.meta.url)('stdnum') as typeof Stdnum).personValidators as Record<string, Validator[] | undefined>;
  return countries.flatMap((c) => personValidators![c.toUpperCase()] ?? []);
};

/** A run of groups may hold an id among other words: its sub-runs are tried, longest first. */
function findNationalIds(text: string, countries: readonly string[]): Finding[] {
  const validators = validatorsOf(countries);
  if (!validators.length) return [];
  const out: Finding[] = [];
  for (const run of text.matchAll(ID_RUN)) {
    const groups = [...run[0].matchAll(/[A-Z0-9]+/gi)].map((g) => ({ start: run.index + g.index, end: run.index + g.index + g[0].length }));
    const taken: boolean[] = groups.map(() => false);
    for (let size = Math.min(groups.length, ID_GROUPS_MAX); size >= 1; size--) {
      for (let i = 0; i + size <= groups.length; i++) {
        if (taken.slice(i, i + size).some(Boolean)) continue;
        const start = groups[i]!.start, end = groups[i + size - 1]!.end;
        const candidate = text.slice(start, end);
        if ((candidate.match(/\d/g)?.length ?? 0) < 5) continue;
        if (validators.some((v) => v.validate(candidate).isValid)) {
          out.push({ kind: 'national_id', start, end, mask: DOT.repeat(Math.min(candidate.length, 9)) });
          for (let k = i; k < i + size; k++) taken[k] = true;
        }
      }
    }
  }
  return out;
}

function findPatterns(text: string, patterns: readonly RedactionPattern[]): Finding[] {
  return patterns.flatMap((p) => {
    let re: RegExp;
    try { re = new RegExp(p.pattern.slice(0, PATTERN_MAX), 'gi'); } catch { return []; }
    return [...text.matchAll(re)].filter((m) => m[0].length > 0).map((m) => ({ kind: 'pattern' as const, start: m.index, end: m.index + m[0].length, mask: `[${p.name}]` }));
  });
}

/** Every piece of personal data of the policy's kinds in `text`, in order, overlaps resolved (the earliest, then the longest wins). */
export function findPersonalData(text: string, policy: RedactionPolicy): Finding[] {
  const kinds = new Set(policy.kinds);
  const all = [
    ...(kinds.has('email') ? findEmails(text) : []),
    ...(kinds.has('card') ? findCards(text) : []),
    ...(kinds.has('iban') ? findIbans(text) : []),
    ...(kinds.has('phone') ? findPhones(text, policy.defaultCountry) : []),
    ...(kinds.has('national_id') ? findNationalIds(text, policy.countries ?? []) : []),
    ...(kinds.has('pattern') ? findPatterns(text, policy.patterns ?? []) : []),
  ].sort((a, b) => a.start - b.start || (b.end - b.start) - (a.end - a.start));
  const kept: Finding[] = [];
  for (const f of all) if (!kept.length || f.start >= kept[kept.length - 1]!.end) kept.push(f);
  return kept;
}

/** `text` with each finding replaced by its mask. */
export function redactText(text: string, policy: RedactionPolicy): string {
  if (!text || !policy.kinds.length) return text;
  const findings = findPersonalData(text, policy);
  if (!findings.length) return text;
  let out = '';
  let at = 0;
  for (const f of findings) { out += text.slice(at, f.start) + f.mask; at = f.end; }
  return out + text.slice(at);
}

/** Ids, times and enum fields a JSON payload (a webhook event, a report's figures) keeps as they are. */
export const PAYLOAD_KEPT_FIELDS: ReadonlySet<string> = new Set(['id', 'widget_id', 'contact_id', 'conversation_id', 'agent_id', 'started_at', 'ended_at',
  'created_at', 'updated_at', 'ts', 'status', 'surface', 'role', 'type', 'public_key', 'report_id', 'period_start', 'period_end']);

/** Every string of a JSON value redacted (keys kept); `skipKeys` are left as they are (ids, timestamps). */
export function redactValue<T>(value: T, policy: RedactionPolicy, skipKeys: ReadonlySet<string> = new Set()): T {
  if (typeof value === 'string') return redactText(value, policy) as T;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, policy, skipKeys)) as T;
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, skipKeys.has(k) ? v : redactValue(v, policy, skipKeys)])) as T;
  }
  return value;
}
