/**
 * Where a passage of an uploaded file comes from, written into its page's URL so that every reader of passages (the
 * offline reply, the model's tool result, the evaluation) can cite it without another lookup: a file's pages are
 * `file:///<file name>#page=2` (a PDF page) or `file:///<file name>#part=3&heading=<heading>` (a section of another
 * kind). Replies cite them as "(Price list, page 2)" or "(Handbook, Returns)". Pure: no I/O.
 */

const FILE_PREFIX = 'file:///';

/** The URL of one page of an uploaded file: a PDF's page number, or the section's place and heading. */
export function filePageUrl(fileName: string, where: { page: number } | { part: number; heading: string | null }): string {
  const base = `${FILE_PREFIX}${encodeURIComponent(fileName)}`;
  if ('page' in where) return `${base}#page=${where.page}`;
  return `${base}#part=${where.part}${where.heading ? `&heading=${encodeURIComponent(where.heading)}` : ''}`;
}

/** Whether a passage's URL is a page of an uploaded file. */
export function isFileUrl(url: string): boolean {
  return url.startsWith(FILE_PREFIX);
}

/** The name a file is cited by: its name without the extension ("Price list.pdf" → "Price list"). */
export function citedName(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  return (dot > 0 ? fileName.slice(0, dot) : fileName).trim() || fileName;
}

const decode = (text: string) => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

/** "Price list, page 2" for a file page's URL; null for a web page's. */
export function fileCitation(url: string): string | null {
  if (!isFileUrl(url)) return null;
  const [path = '', fragment = ''] = url.slice(FILE_PREFIX.length).split('#', 2);
  const name = citedName(decode(path));
  const params = new URLSearchParams(fragment);
  const page = params.get('page');
  if (page) return `${name}, page ${page}`;
  const heading = params.get('heading');
  return heading ? `${name}, ${heading}` : name;
}

/**
 * The lines citing a reply's sources: web pages on the runtime's "Source:" line (`sourceLine`), uploaded files each as
 * "(Price list, page 2)". Empty when there is none.
 */
export function citationLines(urls: string[], sourceLine: (urls: string[]) => string): string {
  const web = urls.filter((u) => !isFileUrl(u));
  const files = [...new Set(urls.map(fileCitation).filter((c): c is string => c !== null))];
  return [...(web.length ? [sourceLine(web)] : []), ...files.map((c) => `(${c})`)].join('\n');
}
