import type { FieldError } from '../validation.ts';

/**
 * The rules of a contacts CSV import (issue 45 item 6), pure: which header names mean which field, and what
 * a row must hold. Any other column becomes a fact (text). The database decides creates from updates.
 */

/** Header names (any case, spaces or dashes for underscores) and the field each fills. */
const FIELD_OF: Record<string, 'phone' | 'email' | 'first_name' | 'last_name' | 'do_not_call'> = {
  phone: 'phone', phone_e164: 'phone', phone_number: 'phone', email: 'email', email_lower: 'email', email_address: 'email',
  first_name: 'first_name', firstname: 'first_name', last_name: 'last_name', lastname: 'last_name', do_not_call: 'do_not_call',
};

const FACT_KEY = /^[A-Za-z_][A-Za-z0-9_.-]{0,99}$/;

export interface ImportedContact {
  phone: string | null; email: string | null; first_name: string | null; last_name: string | null; do_not_call: boolean | null;
  facts: Record<string, string>;
}

/** The error of a row: `row` is 1 for the first line after the header; `field` the column (as the header wrote it). */
export type RowError = FieldError & { row: number };

const key = (header: string) => header.trim().toLowerCase().replace(/[\s-]+/g, '_');

/** Refusals of the header line itself: no identity column, a column twice, a name that cannot be a fact. */
export function importHeaderErrors(header: string[]): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const name of header) {
    const k = key(name);
    const field = FIELD_OF[k] ?? k;
    if (seen.has(field)) errors.push({ field: name, code: 'duplicate_column', message: `the column ${name} is given twice` });
    seen.add(field);
    if (!FIELD_OF[k] && !FACT_KEY.test(k)) errors.push({ field: name, code: 'invalid_column', message: `${name} cannot name a fact: letters, digits, _ . - (100 at most)` });
  }
  if (!seen.has('phone') && !seen.has('email')) errors.push({ field: '', code: 'missing_column', message: 'the header must name a phone or an email column' });
  return errors;
}

const YES = new Set(['true', 'yes', 'y', '1']);
const NO = new Set(['false', 'no', 'n', '0']);

/**
 * One data line as a contact, or its errors. `normalize` turns a phone into E.164 and an email into its stored
 * form (null when it is not one): the repository's rules, handed in so that this stays pure.
 */
export function importRow(record: Record<string, string>, row: number, normalize: { phone(v: string): string | null; email(v: string): string | null }):
  { contact: ImportedContact } | { errors: RowError[] } {
  const errors: RowError[] = [];
  const contact: ImportedContact = { phone: null, email: null, first_name: null, last_name: null, do_not_call: null, facts: {} };
  for (const [name, raw] of Object.entries(record)) {
    const value = (raw ?? '').trim();
    const field = FIELD_OF[key(name)];
    if (!value) continue;
    if (field === 'phone') {
      contact.phone = normalize.phone(value);
      if (!contact.phone) errors.push({ row, field: name, code: 'invalid_e164', message: `row ${row}: ${name} is not a phone number (E.164, e.g. +14155550123)` });
    } else if (field === 'email') {
      contact.email = normalize.email(value);
      if (!contact.email) errors.push({ row, field: name, code: 'invalid_email', message: `row ${row}: ${name} is not an email address` });
    } else if (field === 'do_not_call') {
      const v = value.toLowerCase();
      if (YES.has(v)) contact.do_not_call = true;
      else if (NO.has(v)) contact.do_not_call = false;
      else errors.push({ row, field: name, code: 'invalid_boolean', message: `row ${row}: ${name} must be true or false (yes/no, 1/0)` });
    } else if (field === 'first_name' || field === 'last_name') {
      if (value.length > 100) errors.push({ row, field: name, code: 'too_long', message: `row ${row}: ${name} is longer than 100 characters` });
      else contact[field] = value;
    } else if (value.length > 2000) {
      errors.push({ row, field: name, code: 'too_long', message: `row ${row}: ${name} is longer than 2000 characters` });
    } else {
      contact.facts[key(name)] = value;
    }
  }
  if (!errors.length && !contact.phone && !contact.email) {
    errors.push({ row, field: '', code: 'no_identity', message: `row ${row}: a contact needs a phone or an email` });
  }
  return errors.length ? { errors } : { contact };
}
