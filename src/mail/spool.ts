import { readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config.ts';

/**
 * The mail spool: without SMTP_URL, every message the service sends is an `.eml` file under
 * DATA_DIR/mail/ (`outbound.ts`). It holds people's data (a reply to a correspondent, a
 * notification listing captured data), so retention and a contact's erase reach it (issue 47).
 * A file is named `<ms since epoch>-org_<org id>-<message id>.eml` when the sender named its
 * organization, so both find an organization's files without reading the others'.
 */

const ORG_TAG = /^(\d+)-org_([0-9a-f-]{36})-.+\.eml$/;

export const spoolDirOf = (config: Pick<Config, 'DATA_DIR'>): string => join(config.DATA_DIR, 'mail');

export function spoolFileName(at: number, orgId: string | undefined, messageId: string): string {
  return `${at}-${orgId ? `org_${orgId}-` : ''}${messageId.replace(/[^\w.-]/g, '_')}.eml`;
}

/** One spooled message of an organization: its file name and when it was written. */
export interface SpooledMail { file: string; writtenAt: Date }

/** The organization's spooled messages, oldest first (none when the spool does not exist). */
export async function spooledMailOf(config: Pick<Config, 'DATA_DIR'>, orgId: string): Promise<SpooledMail[]> {
  let names: string[];
  try {
    names = await readdir(spoolDirOf(config));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names.flatMap((file) => {
    const m = ORG_TAG.exec(file);
    return m && m[2] === orgId ? [{ file, writtenAt: new Date(Number(m[1])) }] : [];
  }).sort((a, b) => a.writtenAt.getTime() - b.writtenAt.getTime() || a.file.localeCompare(b.file));
}

/** Deletes spooled files by name; one already gone counts as deleted (a retried batch, or a concurrent erase). */
export async function deleteSpooled(config: Pick<Config, 'DATA_DIR'>, files: string[]): Promise<number> {
  for (const file of files) {
    await unlink(join(spoolDirOf(config), file)).catch((err: NodeJS.ErrnoException) => { if (err.code !== 'ENOENT') throw err; });
  }
  return files.length;
}

/** A spooled message as a person reads it: headers, decoded text and attachments (quoted-printable and base64 undone). */
async function readableText(path: string): Promise<{ subject: string; to: string; text: string } | null> {
  let raw: Buffer;
  try { raw = await readFile(path); } catch { return null; }
  const { simpleParser } = await import('mailparser');
  const parsed = await simpleParser(raw);
  const to = [parsed.to].flat().flatMap((a) => (a ? [a.text] : [])).join(', ');
  const parts = [raw.toString('utf8'), parsed.subject ?? '', to, parsed.text ?? '', typeof parsed.html === 'string' ? parsed.html : '',
    ...parsed.attachments.map((a) => a.content.toString('utf8'))];
  return { subject: parsed.subject ?? '', to, text: parts.join('\n') };
}

/** True when `text` names the person: their e-mail address (any case), or their phone number however its digits are grouped. */
function names(text: string, person: { email: string | null; phone: string | null }): boolean {
  if (person.email && text.toLowerCase().includes(person.email.toLowerCase())) return true;
  const digits = person.phone?.replace(/\D/g, '');
  if (!digits) return false;
  // Digit runs with their separators (spaces, dots, dashes, brackets) taken out: +1 (415) 555-0142 reads 14155550142.
  return (text.match(/\+?\d[\d ().-]{5,}\d/g) ?? []).some((run) => run.replace(/\D/g, '').includes(digits.length > 10 ? digits.slice(-10) : digits));
}

/** The organization's spooled messages that name the person: file, subject, recipients and time. */
export async function spooledMailNaming(config: Pick<Config, 'DATA_DIR'>, orgId: string, person: { email: string | null; phone: string | null }) {
  const out: { file: string; subject: string; to: string; written_at: string }[] = [];
  for (const m of await spooledMailOf(config, orgId)) {
    const read = await readableText(join(spoolDirOf(config), m.file));
    if (read && names(read.text, person)) out.push({ file: m.file, subject: read.subject, to: read.to, written_at: m.writtenAt.toISOString() });
  }
  return out;
}
