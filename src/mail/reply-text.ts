import EmailReplyParser from 'email-reply-parser';

/**
 * What the agent reads of a received mail, and how its answer is dressed as a mail (issue 43):
 * people's mail carries sign-offs, signatures, phone footers, legal notices and the quoted thread,
 * none of which is the question. The quoted thread and the signature blocks are found by
 * email-reply-parser (Crisp's maintained port of GitHub's parser, with many languages' "On ...
 * wrote:" headers and mobile footers); the sign-off lines ("Thanks, Mia") and legal footers it leaves
 * are taken off here.
 */

/** A closing word or phrase that starts a sign-off line. */
const CLOSING = /^(thanks( (a lot|again|so much|in advance))?|thank you( (so much|very much|again|in advance))?|many thanks|thx|cheers|best|best wishes|all the best|(best|kind|warm|warmest) regards|regards|sincerely|yours( (truly|sincerely))?|talk soon|merci( beaucoup| d'avance)?|cordialement|bien (à|a) vous|bonne journée)(?![\p{L}])/iu;
/** What may follow it on the line: punctuation, then at most a name of up to three capitalized words ("Thanks, Mia"). */
const AFTER_CLOSING = /^[ \t]*[,.!]*[ \t]*(\p{Lu}[\p{L}'’.-]*( \p{Lu}[\p{L}'’.-]*){0,2})?[ \t]*$/u;

const isClosing = (line: string) => {
  const match = CLOSING.exec(line);
  return match !== null && AFTER_CLOSING.test(line.slice(match[0].length));
};

/** Footer lines a phone or mail program adds. */
const DEVICE_FOOTER = /^(sent from (my )?\S+( \S+){0,4}|get outlook for \S+|envoyé de mon \S+.*)$/i;

/** A paragraph of legal or mailing boilerplate. */
const LEGAL = /\b(confidential(ity)?|disclaimer|privileged|intended (solely |only )?for the (use of the )?(addressee|recipient|individual)|received this (e-?mail|message|communication) in error|ce (message|courriel) (et ses pièces jointes )?(est|sont) confidentiel)/i;

/** The lines after a closing that are still the sign-off: a name, a title, a company, a phone number. */
const isSignOffTail = (lines: string[]) => lines.length <= 4 && lines.every((l) => l.length <= 60 && !/[?]/.test(l));

/** Cuts the sign-off (a closing line and the few short lines after it) from the end of `lines`. */
function withoutSignOff(lines: string[]): string[] {
  for (let i = lines.length - 1; i >= Math.max(1, lines.length - 6); i--) {
    if (isClosing(lines[i]!.trim()) && isSignOffTail(lines.slice(i + 1).filter((l) => l.trim()))) return lines.slice(0, i);
  }
  return lines;
}

/** Cuts device footers and legal paragraphs from the end of the text. */
function withoutFooters(text: string): string {
  const paragraphs = text.split(/\n[ \t]*\n/);
  while (paragraphs.length > 1) {
    const last = paragraphs.at(-1)!.trim();
    if (!last || LEGAL.test(last) || last.split('\n').every((l) => DEVICE_FOOTER.test(l.trim()))) paragraphs.pop();
    else break;
  }
  return paragraphs.join('\n\n');
}

/**
 * The new words of a received mail: without the quoted earlier messages, the `-- ` signature,
 * device footers, legal notices and the sign-off. A mail that is nothing but those keeps its text.
 */
export function newWordsOf(text: string): string {
  const normalized = text.replace(/\r\n/g, '\n');
  const visible = new EmailReplyParser().read(normalized).getVisibleText();
  const lines: string[] = [];
  for (const line of visible.split('\n')) {
    // The parser's "On ... wrote:" patterns, and ours for the shapes it misses (a header on one line, French).
    if (/^On .+ wrote:$/.test(line.trim()) || /^Le .+ a écrit ?:$/.test(line.trim())) break;
    if (line.startsWith('>')) continue;
    lines.push(line);
  }
  const words = withoutFooters(withoutSignOff(withoutFooters(lines.join('\n')).trimEnd().split('\n')).join('\n'))
    .replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
  return words || normalized.trim();
}

/** The agent's answer as a mail: a salutation (by the correspondent's first name when known), the answer, a closing. */
export function framedReply(input: { body: string; firstName: string | null; senderName: string; language: string | null }): string {
  const french = input.language === 'fr';
  const name = input.firstName?.trim();
  const salutation = french ? `Bonjour${name ? ` ${name}` : ''},` : `Hello${name ? ` ${name}` : ''},`;
  const closing = french ? `Cordialement,\n${input.senderName}` : `Best regards,\n${input.senderName}`;
  const body = input.body.trim();
  // An answer that greets or signs off already is not greeted or signed twice.
  const greets = /^(hi|hello|hey|dear|good (morning|afternoon|evening)|bonjour|bonsoir)\b/i.test(body);
  const signs = body.split('\n').at(-1)!.trim() === input.senderName.trim();
  return [greets ? null : salutation, body, signs ? null : closing].filter((p) => p !== null).join('\n\n');
}
