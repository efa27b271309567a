import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import PDFDocument from 'pdfkit';

/**
 * The answers corpus (`bench/answers/sites/`): made-up businesses' websites, each with the questions
 * its visitors type, written by people who never read the engine and never saw its replies.
 *
 * A site is a folder: `pages/` holds its HTML files (`index.html` is `/`, `pricing.html` is
 * `/pricing`, `blog/a-post.html` is `/blog/a-post`), `questions.json` its questions. The folder's
 * name gives its split: `dev-*` sites are for fitting and calibrating; `test-*` sites are read by
 * no one who changes the engine, and the evaluation prints only their scores.
 */

export type Split = 'dev' | 'test';

export interface CorpusQuestion {
  q: string;
  type: 'fact' | 'unknown';
  /** Groups of strings: a right reply holds, for each group, at least one of them (case-insensitive). */
  expect?: string[][];
  /** The meaning of a right reply to a yes/no question. */
  polarity?: 'yes' | 'no';
  /** The location, product or service the question is about. */
  entity?: string;
  /** Strings that mean another entity's fact was given as this one's. */
  not?: string[];
  tags?: string[];
}

export interface CorpusSite {
  name: string; split: Split; dir: string; brand: string; language: string; questions: CorpusQuestion[]; pages: number;
  /** Documents the business uploads besides its site (`files.json`): each a PDF made from its pages' text (issue 46). */
  files: CorpusFile[];
}

/** A document of a corpus site: its file name and the text of each of its PDF pages. */
export interface CorpusFile { name: string; pages: string[] }

export const CORPUS_DIR = fileURLToPath(new URL('./sites/', import.meta.url));

function countPages(dir: string): number {
  let n = 0;
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) n += countPages(path);
    else if (entry.endsWith('.html')) n++;
  }
  return n;
}

/** The corpus's sites, dev before test, each in name order; `only` keeps those whose name it lists. */
export function loadCorpus(only?: string[]): CorpusSite[] {
  if (!existsSync(CORPUS_DIR)) return [];
  const sites: CorpusSite[] = [];
  for (const name of readdirSync(CORPUS_DIR).sort()) {
    const dir = join(CORPUS_DIR, name);
    const split: Split | null = name.startsWith('dev-') ? 'dev' : name.startsWith('test-') ? 'test' : null;
    if (!split || !existsSync(join(dir, 'questions.json')) || !existsSync(join(dir, 'pages', 'index.html'))) continue;
    if (only?.length && !only.includes(name)) continue;
    const file = JSON.parse(readFileSync(join(dir, 'questions.json'), 'utf8')) as { brand: string; language: string; questions: CorpusQuestion[] };
    const files = existsSync(join(dir, 'files.json')) ? (JSON.parse(readFileSync(join(dir, 'files.json'), 'utf8')) as { files: CorpusFile[] }).files : [];
    sites.push({ name, split, dir, brand: file.brand, language: file.language, questions: file.questions, pages: countPages(join(dir, 'pages')), files });
  }
  return sites.sort((a, b) => (a.split === b.split ? a.name.localeCompare(b.name) : a.split === 'dev' ? -1 : 1));
}

export interface ServedSite { url: string; close(): Promise<void> }

/** Serves a corpus site's pages on 127.0.0.1 (random port), with a robots.txt that allows everything. */
export async function serveCorpusSite(site: Pick<CorpusSite, 'dir'>): Promise<ServedSite> {
  const root = join(site.dir, 'pages');
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    if (path === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      return;
    }
    const rel = normalize(path.replace(/\/+$/, '') || '/index').replace(/^(\.\.[/\\])+/, '');
    const file = [join(root, `${rel}.html`), join(root, rel, 'index.html'), join(root, rel)]
      .find((f) => f.startsWith(root) && existsSync(f) && statSync(f).isFile());
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Lower case, one space, no accents, typographic quotes and dashes as plain ones. */
export function folded(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').replace(/[’‘]/g, "'").replace(/[–—]/g, '-')
    .replace(/\u00a0|\u202f/g, ' ').replace(/\s+/g, ' ').toLowerCase();
}

/** An honest "the site does not say", in English or French. */
export const ADMITS = new RegExp([
  "don'?t know", 'do not know', 'not sure', "couldn'?t find", 'could not find', "can'?t find", 'cannot find',
  "does(n'?t| not) (say|mention)", "isn'?t on (our|the) (site|website)", 'not on (our|the) (site|website)', 'no information',
  'je ne sais pas', 'ne (le )?sais pas', 'ne connais pas', "n'?est pas (indique|mentionne|precise)", 'ne (le )?mentionne pas', 'ne trouve pas',
  "pas d'information", 'aucune information', 'ne dit pas', 'ne precise pas',
].join('|'), 'i');

const POLAR = { yes: /^(yes|oui)\b/i, no: /^(no|non)\b/i } as const;

export interface Judged {
  right: boolean;
  /** The reply says it does not know. */
  admits: boolean;
  /** A fact question answered with another entity's fact (a `not` string in the reply). */
  otherEntity: boolean;
  /** An unknown answered as if the site said it. */
  invented: boolean;
  /** For a fact question: the reply holds every expected group (whatever else it says). */
  holds: boolean;
}

/** Whether every group of `expect` has a string in `text`. */
export function holdsAll(expect: string[][] | undefined, text: string): boolean {
  const t = folded(text);
  return (expect ?? []).every((group) => group.some((s) => t.includes(folded(s))));
}

/** Judges one reply against its question. */
export function judge(question: CorpusQuestion, reply: string): Judged {
  const admits = ADMITS.test(folded(reply));
  if (question.type === 'unknown') return { right: admits, admits, otherEntity: false, invented: !admits, holds: false };
  const holds = holdsAll(question.expect, reply);
  const t = folded(reply);
  const otherEntity = (question.not ?? []).some((s) => s.trim() && t.includes(folded(s)));
  const opposite = question.polarity ? POLAR[question.polarity === 'yes' ? 'no' : 'yes'].test(reply.trim()) : false;
  return { right: holds && !admits && !otherEntity && !opposite, admits, otherEntity, invented: false, holds };
}

/**
 * Creates an agent on a site through the REST API (`rest`, with `auth`'s headers) and waits until the crawl workflow
 * has indexed it (three minutes at most): the agent, and the crawl's page count and seconds.
 */
export async function crawledAgent(rest: string, auth: Record<string, string>, name: string, url: string, patch: Record<string, unknown> = {}):
  Promise<{ agent: { id: string; public_key: string }; pages: number; seconds: number }> {
  const call = async (path: string, init: RequestInit = {}): Promise<any> => {
    const res = await fetch(`${rest}${path}`, { headers: auth, ...init });
    const text = await res.text();
    if (!res.ok) throw new Error(`${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  const agent = await call('/agents', { method: 'POST', body: JSON.stringify({ name, site_url: `${url}/` }) });
  if (Object.keys(patch).length) await call(`/agents/${agent.id}`, { method: 'PATCH', body: JSON.stringify(patch) });
  for (const started = Date.now(); ;) {
    const site = (await call(`/sites?widget_id=${agent.id}`)).data[0];
    // The evaluation reads the whole engine: the passages' meaning vectors too, computed after the site is ready.
    if (site?.status === 'ready' && site.passages_embedding === 0) return { agent, pages: site.pages_crawled, seconds: (Date.now() - started) / 1000 };
    if (site?.status === 'failed') throw new Error(`${name}: crawl failed: ${site.error}`);
    if (Date.now() - started > 180_000) throw new Error(`${name}: the crawl did not finish in 3 minutes`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** A corpus document as a PDF, one page per entry of `pages`, made with pdfkit. */
export function corpusFilePdf(file: CorpusFile): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ autoFirstPage: false, info: { Title: file.name } });
    const chunks: Buffer[] = [];
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    for (const text of file.pages) {
      doc.addPage();
      doc.fontSize(12).text(text);
    }
    doc.end();
  });
}

/**
 * Uploads a site's documents to a new knowledge base the agent answers from, and waits until each is read
 * (`ready`); throws when one fails.
 */
export async function uploadCorpusFiles(rest: string, auth: Record<string, string>, agentId: string, site: CorpusSite): Promise<void> {
  if (!site.files.length) return;
  const call = async (path: string, init: RequestInit = {}): Promise<any> => {
    const res = await fetch(`${rest}${path}`, { headers: auth, ...init });
    const text = await res.text();
    if (!res.ok) throw new Error(`${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  const kb = await call('/knowledge-bases', { method: 'POST', body: JSON.stringify({ name: `${site.brand} documents` }) });
  await call(`/knowledge-bases/${kb.id}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: agentId }) });
  for (const file of site.files) {
    const bytes = await corpusFilePdf(file);
    const up = await call(`/knowledge-bases/${kb.id}/files`, { method: 'POST', body: JSON.stringify({ name: file.name, content_base64: bytes.toString('base64') }) });
    for (const started = Date.now(); ;) {
      const got = await call(`/knowledge-bases/${kb.id}/files/${up.id}`);
      if (got.status === 'ready') break;
      if (got.status === 'failed') throw new Error(`${site.name}: ${file.name} could not be read: ${got.error}`);
      if (Date.now() - started > 120_000) throw new Error(`${site.name}: ${file.name} was not read in 2 minutes`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
