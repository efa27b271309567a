/**
 * Splits page text into passages for the retrieval index: whole paragraphs packed together up
 * to `maxChars`; a paragraph too long for one passage is split between sentences (Unicode
 * sentence boundaries, Intl.Segmenter), a sentence too long between words. Each passage after
 * the first starts with up to `overlap` characters of the end of the previous one (from a
 * sentence or word start), so that an answer straddling a boundary is found whole in one of
 * them.
 *
 * @example
 * chunkText(page.text, { maxChars: 1200, overlap: 150 }) // ['First passage...', '...']
 */

export interface ChunkOptions {
  /** Longest passage, in characters (UTF-16 code units); default 1200. */
  maxChars?: number;
  /** Characters repeated from the end of the previous passage; default 150. */
  overlap?: number;
}

interface Unit { text: string; sep: string }

let segmenter: Intl.Segmenter | undefined;

function sentences(paragraph: string): string[] {
  segmenter ??= new Intl.Segmenter('en', { granularity: 'sentence' });
  const out: string[] = [];
  for (const { segment } of segmenter.segment(paragraph)) {
    const s = segment.trim();
    if (s) out.push(s);
  }
  return out;
}

/** Cuts a string into pieces of at most `max` characters, at the last space before the limit when there is one. */
function byWords(text: string, max: number): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > max) {
    let cut = rest.lastIndexOf(' ', max);
    if (cut < max / 2) cut = max;
    out.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) out.push(rest);
  return out;
}

function unitsOf(text: string, max: number): Unit[] {
  const units: Unit[] = [];
  for (const raw of text.split(/\n\s*\n/)) {
    const paragraph = raw.trim();
    if (!paragraph) continue;
    if (paragraph.length <= max) {
      units.push({ text: paragraph, sep: '\n\n' });
      continue;
    }
    let first = true;
    for (const sentence of sentences(paragraph)) {
      for (const piece of sentence.length <= max ? [sentence] : byWords(sentence, max)) {
        units.push({ text: piece, sep: first ? '\n\n' : ' ' });
        first = false;
      }
    }
  }
  return units;
}

/** The end of a passage to repeat at the start of the next: at most `overlap` characters, from a sentence start if one is in reach, else a word start. */
function tailOf(chunk: string, overlap: number): string {
  if (overlap <= 0 || chunk.length === 0) return '';
  if (chunk.length <= overlap) return chunk;
  const window = chunk.slice(chunk.length - overlap);
  const sentenceStart = window.search(/[.!?]\s+\S|\n\S/);
  if (sentenceStart >= 0) {
    const from = window.slice(sentenceStart + 1).trimStart();
    if (from) return from;
  }
  const space = window.indexOf(' ');
  return space >= 0 ? window.slice(space + 1) : '';
}

/** Passages of `text` (see the module comment); [] for blank text. */
export function chunkText(text: string, opts: ChunkOptions = {}): string[] {
  const max = Math.max(50, opts.maxChars ?? 1200);
  const overlap = Math.min(Math.max(0, opts.overlap ?? 150), Math.floor(max / 2));
  const chunks: string[] = [];
  let current = '';
  for (const unit of unitsOf(text, max)) {
    if (!current) {
      current = unit.text;
    } else if (current.length + unit.sep.length + unit.text.length <= max) {
      current += unit.sep + unit.text;
    } else {
      chunks.push(current);
      let tail = tailOf(current, overlap);
      if (tail.length + 1 + unit.text.length > max) tail = '';
      current = tail ? `${tail}${unit.sep === ' ' ? ' ' : '\n'}${unit.text}` : unit.text;
    }
  }
  if (current) chunks.push(current);
  return chunks;
}

/** A passage and the section it belongs to ("Page title › Heading › Subheading"). */
export interface SectionChunk { text: string; section: string | null }

const HEADING_LINE = /^(#{1,6}) (.+)$/;

/**
 * Passages of extracted page text (headings marked `#` by `extractHtml`), one section at a
 * time: a passage never spans two sections, carries its section path, and leaves the heading
 * lines out of its text (the path holds them). A heading that repeats the page title is not
 * repeated in the path.
 *
 * @example
 * chunkSections('# Hours\n\n## Holidays\n\nClosed on Christmas Day.', 'Opening hours')
 * // [{ text: 'Closed on Christmas Day.', section: 'Opening hours › Hours › Holidays' }]
 */
export function chunkSections(text: string, title: string | null, opts: ChunkOptions = {}): SectionChunk[] {
  const out: SectionChunk[] = [];
  const headings: { level: number; text: string }[] = [];
  let body: string[] = [];
  const path = () => {
    const names = headings.map((h) => h.text).filter((h) => !title || !title.toLowerCase().startsWith(h.toLowerCase()));
    const parts = [...(title ? [title] : []), ...names];
    return parts.length ? parts.join(' › ') : null;
  };
  const flush = () => {
    const section = path();
    for (const chunk of chunkText(body.join('\n'), opts)) out.push({ text: chunk, section });
    body = [];
  };
  for (const line of text.split('\n')) {
    const heading = HEADING_LINE.exec(line.trim());
    if (!heading) {
      body.push(line);
      continue;
    }
    flush();
    const level = heading[1]!.length;
    while (headings.length && headings.at(-1)!.level >= level) headings.pop();
    headings.push({ level, text: heading[2]!.trim() });
  }
  flush();
  return out;
}
