import { PHRASES, type Lang } from '../answers/phrases.ts';
import { extractField, type ParseContext } from './parsers.ts';
import { agentSide, isQuestion } from './signals.ts';
import type { DataField, TranscriptMessage } from './types.ts';

/** Asking for the data_schema fields one at a time, and reading the answers out of visitor messages. */

export function humanize(name: string): string {
  return name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ').toLowerCase().trim();
}

/** "you" for "the visitor", so a description written about the visitor reads as a question to them. */
function youify(text: string): string {
  return text
    .replace(/\b(?:the\s+)?(?:visitor|customer|user|caller|lead|prospect|client)(?:'s|’s)\s+/gi, 'your ')
    .replace(/\b(?:the\s+)?(?:visitor|customer|user|caller|lead|prospect|client)\s+(is|has|was|wants|needs)\b/gi, (_m, verb: string) =>
      `you ${({ is: 'are', has: 'have', was: 'were', wants: 'want', needs: 'need' } as Record<string, string>)[verb.toLowerCase()]}`);
}

/** What the field is called in a question: its description tidied up, else its name. */
export function fieldLabel(field: DataField, lang: Lang): string {
  const description = field.description?.trim().replace(/[.!:;]+$/, '');
  if (description && description.length <= 100 && !description.endsWith('?')) {
    const label = youify(description)
      .replace(/^(?:please\s+)?(?:ask\s+(?:the\s+\w+\s+)?for|collect|capture|get|obtain|record)\s+/i, '')
      .replace(/^(?:your|their|the|a|an|his|her)\s+/i, '');
    if (label) return /^[A-Z]{2}/.test(label) ? label : label.charAt(0).toLowerCase() + label.slice(1);
  }
  const name = humanize(field.name);
  if (field.type === 'email' && !/mail/.test(name)) return `${name} (${PHRASES[lang].typeLabel.email})`;
  if (field.type === 'email' && name === 'email') return PHRASES[lang].typeLabel.email;
  if (field.type === 'phone' && /^(phone|tel|telephone|mobile)$/.test(name)) return PHRASES[lang].typeLabel.phone;
  return name;
}

/** The question asking for a field; the offline runtime recognises it later in the transcript. */
export function askFor(field: DataField, lang: Lang): string {
  const description = field.description?.trim();
  if (description?.endsWith('?')) return description;
  const label = fieldLabel(field, lang);
  return /^(whether|if|si)\b/i.test(label) ? PHRASES[lang].askWhether(label) : PHRASES[lang].ask(label);
}

/** The field the agent's message asked for (it contains our question for it, in either language). */
export function askedField(schema: DataField[], agentText: string | undefined): DataField | undefined {
  if (!agentText) return undefined;
  return schema.find((f) => agentText.includes(askFor(f, 'en')) || agentText.includes(askFor(f, 'fr')));
}

/** The next required field to ask for: not captured, not declined, not asked twice already. */
export function timesAsked(field: DataField, messages: TranscriptMessage[]): number {
  return messages.filter((m) => agentSide(m) && (m.text.includes(askFor(field, 'en')) || m.text.includes(askFor(field, 'fr')))).length;
}

export function nextField(schema: DataField[], captured: Record<string, unknown>, messages: TranscriptMessage[], skip: Set<string>): DataField | undefined {
  const agentTexts = messages.filter(agentSide).map((m) => m.text);
  return schema.find((f) => {
    if (!f.required || captured[f.name] !== undefined || skip.has(f.name)) return false;
    const asks = timesAsked(f, messages);
    const declined = agentTexts.some((t) => t.includes(PHRASES.en.skipped(fieldLabel(f, 'en'))) || t.includes(PHRASES.fr.skipped(fieldLabel(f, 'fr'))));
    // Asked twice and still not given: the visitor is not going to; do not nag.
    return asks < 2 && !declined;
  });
}

/**
 * Reads data_schema values out of one visitor message. The field the agent just asked for is
 * read first and most leniently; other fields only from unambiguous forms (an email, a phone
 * number introduced as one...), each value going to one field only.
 */
export function captureFrom(schema: DataField[], text: string, asked: DataField | undefined, captured: Record<string, unknown>, ctx: ParseContext): { field: string; value: unknown }[] {
  const out: { field: string; value: unknown }[] = [];
  const used = new Set<string>();
  const order = asked ? [asked, ...schema.filter((f) => f !== asked)] : schema;
  for (const field of order) {
    const isAsked = field === asked;
    if (!isAsked && captured[field.name] !== undefined) continue;
    // "Are you open on Monday?" names a day but gives no appointment date.
    if (!isAsked && (field.type === 'date' || field.type === 'number') && isQuestion(text)) continue;
    const value = extractField(field, text, isAsked, ctx);
    if (value === undefined || value === null || value === '') continue;
    const key = `${field.type}:${JSON.stringify(value)}`;
    if (used.has(key) || (field.type === 'string' && !isAsked && out.length)) continue;
    used.add(key);
    out.push({ field: field.name, value });
  }
  return out;
}
