import type * as ReadabilityLib from '@mozilla/readability';
import type * as Htmlparser2 from 'htmlparser2';
import type { AnyNode, Element as HtmlElement } from 'domhandler';
import { createRequire } from 'node:module';
import type * as Linkedom from 'linkedom';
import { normalizeUrl } from './url.ts';

/**
 * What the crawler takes from one HTML page: title, canonical URL, links, robots directives
 * and the main content as text, with paragraph breaks kept for the chunker.
 *
 * The page is parsed once with htmlparser2 (a light DOM, no per-node event machinery), and one
 * walk over it collects everything but the text. The main content then comes from the first
 * of:
 * 1. the page's own semantic markup: its one top-level `<article>`, else its one `<main>` (or
 *    `role="main"`), when it holds real text; cleaned as Readability cleans: navigation,
 *    asides, footers, forms, hidden elements, boilerplate classes (comments, share, related,
 *    cookie...) and link lists dropped;
 * 2. Mozilla Readability (Firefox's reader view) on a linkedom DOM, for pages without such
 *    markup (a second parse, only for them);
 * 3. the body's text without page furniture, when Readability finds nothing.
 */

export interface ExtractedPage {
  title: string | null;
  /** `<link rel="canonical">`, normalized, or null. */
  canonical: string | null;
  /** Every http(s) link of the page (`<a href>`, `<area href>`), normalized, de-duplicated, in document order. */
  links: string[];
  /** Main content text: paragraphs separated by a blank line. */
  text: string;
  /** How the text was found (for tests and tuning). */
  method: 'semantic' | 'readability' | 'body' | 'none';
  /** `<meta name="robots|AgentManagementBot" content="noindex">` (or `none`). */
  noindex: boolean;
  /** `<meta name="robots|AgentManagementBot" content="nofollow">` (or `none`). */
  nofollow: boolean;
}

/** Main content shorter than this (characters) is not trusted: the next method is tried. */
const MIN_MAIN_CHARS = 200;

/** Elements that separate paragraphs. */
const BLOCK = new Set(['p', 'div', 'section', 'article', 'main', 'header', 'footer', 'aside', 'nav', 'h1', 'h2', 'h3', 'h4',
  'h5', 'h6', 'blockquote', 'pre', 'table', 'ul', 'ol', 'dl', 'figure', 'figcaption', 'form', 'fieldset', 'address',
  'details', 'summary', 'hr', 'center']);
/** Elements that start a new line within a paragraph. */
const LINE = new Set(['li', 'tr', 'br', 'dt', 'dd', 'caption', 'option']);
/** Elements whose text is never content. */
const SKIP = new Set(['script', 'style', 'noscript', 'template', 'svg', 'math', 'iframe', 'object', 'embed', 'canvas', 'head',
  'title', 'button', 'select', 'input', 'textarea', 'video', 'audio', 'picture', 'map']);
/** Page furniture inside a main container. */
const FURNITURE = new Set(['nav', 'aside', 'footer', 'form', 'dialog', 'menu']);
/** Lists and tables mostly made of links are navigation, not content. */
const LINK_LIST = new Set(['ul', 'ol', 'dl', 'table']);
/**
 * Class or id of boilerplate (after Readability's `unlikelyCandidates`), unless it also says
 * it is content (`okMaybeItsACandidate`).
 */
const UNLIKELY = /-ad-|ad-break|agegate|banner|breadcrumb|combx|comment|cookie|disqus|gdpr|legends|newsletter|pager|pagination|popup|related|replies|rss|share|shoutbox|sidebar|skyscraper|social|sponsor|subscribe|supplemental|yom-remote/i;
const MAYBE_CONTENT = /and|article|body|column|content|main|shadow/i;

const MAX_NESTING = 512;
const READABILITY_MAX_ELEMENTS = 20_000;
/** Pages longer than this (characters of HTML) skip Readability: its cost grows faster than the page. */
const READABILITY_MAX_CHARS = 1_000_000;

/** Which elements a text walk leaves out. `none`: only non-text elements; `main`: furniture and boilerplate too; `body`: headers as well. */
type Cleaning = 'none' | 'main' | 'body';

/** The few operations the text walk needs, over htmlparser2's DOM or a DOM-API one (Readability's output). */
interface Tree<N> {
  children(node: N): Iterable<N>;
  /** Text of a text node, null for anything else. */
  text(node: N): string | null;
  /** Lower-case tag name of an element, null for anything else. */
  tag(node: N): string | null;
  attr(node: N, name: string): string | null;
}

const htmlparser2Tree: Tree<AnyNode> = {
  children: (n) => ('children' in n ? n.children : []),
  text: (n) => (n.type === 'text' ? n.data : null),
  tag: (n) => (n.type === 'tag' || n.type === 'script' || n.type === 'style' ? n.name : null),
  attr: (n, name) => ('attribs' in n ? n.attribs[name] ?? null : null),
};

const domTree: Tree<Node> = {
  *children(n) {
    for (let c = n.firstChild; c; c = c.nextSibling) yield c;
  },
  text: (n) => (n.nodeType === 3 ? (n as Text).data : null),
  tag: (n) => (n.nodeType === 1 ? (n as Element).localName : null),
  attr: (n, name) => (n.nodeType === 1 ? (n as Element).getAttribute(name) : null),
};

function isBoilerplate<N>(tree: Tree<N>, node: N): boolean {
  const marks = `${tree.attr(node, 'class') ?? ''} ${tree.attr(node, 'id') ?? ''}`;
  return marks.length > 1 && UNLIKELY.test(marks) && !MAYBE_CONTENT.test(marks);
}

function isHidden<N>(tree: Tree<N>, node: N): boolean {
  return tree.attr(node, 'hidden') !== null || tree.attr(node, 'aria-hidden') === 'true';
}

/** Characters of text under `node`, and how many of them are inside links. */
function linkDensity<N>(tree: Tree<N>, node: N): number {
  let all = 0;
  let linked = 0;
  const walk = (n: N, inLink: boolean, depth: number) => {
    if (depth > MAX_NESTING) return;
    for (const c of tree.children(n)) {
      const t = tree.text(c);
      if (t !== null) {
        const len = t.trim().length;
        all += len;
        if (inLink) linked += len;
      } else if (tree.tag(c) !== null) {
        walk(c, inLink || tree.tag(c) === 'a', depth + 1);
      }
    }
  };
  walk(node, false, 0);
  return all === 0 ? 0 : linked / all;
}

function skipped<N>(tree: Tree<N>, node: N, tag: string, cleaning: Cleaning): boolean {
  if (SKIP.has(tag) || isHidden(tree, node)) return true;
  if (cleaning === 'none') return false;
  if (FURNITURE.has(tag) || (cleaning === 'body' && tag === 'header')) return true;
  if (isBoilerplate(tree, node)) return true;
  return LINK_LIST.has(tag) && linkDensity(tree, node) > 0.5;
}

/**
 * Text of a subtree with its block structure: a blank line between blocks, a line break between
 * list items and rows. A heading is a line of its own marked `#` to `######` by level, so that
 * the chunker knows the section it opens; a table row is one line of labelled cells (`rowText`).
 */
function blockText<N>(tree: Tree<N>, root: N, cleaning: Cleaning): string {
  const parts: string[] = [];
  const walk = (node: N, depth: number) => {
    if (depth > MAX_NESTING) return;
    for (const child of tree.children(node)) {
      const text = tree.text(child);
      if (text !== null) {
        // Line breaks in the markup are white space like any other: only elements break lines. Most text nodes are
        // words with single spaces (kept as they are) or the markup's indentation (one space): neither is copied.
        parts.push(!FOLDABLE_SPACE.test(text) ? text : BLANK.test(text) ? ' ' : text.replace(/\s+/g, ' '));
        continue;
      }
      const tag = tree.tag(child);
      if (tag === null || skipped(tree, child, tag, cleaning)) continue;
      const level = HEADING.exec(tag)?.[1];
      if (level) {
        const heading = oneLine(blockText(tree, child, cleaning));
        if (heading) parts.push(`\n\n${'#'.repeat(Number(level))} ${heading}\n\n`);
        continue;
      }
      if (tag === 'table') {
        parts.push(`\n\n${tableText(tree, child, cleaning, depth)}\n\n`);
        continue;
      }
      const sep = BLOCK.has(tag) ? '\n\n' : LINE.has(tag) ? '\n' : '';
      if (sep) parts.push(sep);
      walk(child, depth + 1);
      if (sep) parts.push(sep);
    }
  };
  walk(root, 0);
  return tidy(parts.join(''));
}

const HEADING = /^h([1-6])$/;
/** White space that `replace(/\s+/g, ' ')` would change: anything but a plain space, or two in a row. */
const FOLDABLE_SPACE = /[^\S ]| {2}/;
const BLANK = /^\s+$/;
const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ').replace(/^#+ /, '').trim();

/** The rows of a table (not of tables nested in it), each as its cells' text. */
function tableRows<N>(tree: Tree<N>, table: N, cleaning: Cleaning, depth: number): { cells: string[]; header: boolean }[] {
  const rows: { cells: string[]; header: boolean }[] = [];
  const walk = (node: N, inHead: boolean, d: number) => {
    if (d > MAX_NESTING) return;
    for (const child of tree.children(node)) {
      const tag = tree.tag(child);
      if (tag === null || tag === 'table' || skipped(tree, child, tag, cleaning)) continue;
      if (tag === 'tr') {
        const cells: string[] = [];
        let allHeads = true;
        for (const cell of tree.children(child)) {
          const cellTag = tree.tag(cell);
          if (cellTag !== 'td' && cellTag !== 'th') continue;
          if (cellTag === 'td') allHeads = false;
          cells.push(oneLine(blockText(tree, cell, cleaning)));
        }
        if (cells.some(Boolean)) rows.push({ cells, header: inHead || allHeads });
      } else {
        walk(child, inHead || tag === 'thead', d + 1);
      }
    }
  };
  walk(table, false, depth);
  return rows;
}

/**
 * A table as lines a reader (and a retriever) can take one at a time: each row starts with its
 * first cell, then its other cells, labelled by their column heading when the table has one:
 * "Day pass: $22" (two columns), "Saturday — Riverside: 8 am – 9 pm; Eastside: 9 am – 8 pm".
 */
function tableText<N>(tree: Tree<N>, table: N, cleaning: Cleaning, depth: number): string {
  const rows = tableRows(tree, table, cleaning, depth);
  const head = rows[0]?.header ? rows[0].cells : null;
  const lines: string[] = [];
  for (const { cells, header } of rows) {
    if (header) continue;
    const [first = '', ...rest] = cells;
    const values = rest.map((v, i) => ({ v, h: head?.[i + 1] ?? '' })).filter((x) => x.v);
    if (!values.length) lines.push(first);
    else if (values.length === 1 && (!head || cells.length === 2)) lines.push(`${first}: ${values[0]!.v}`);
    else if (head) lines.push(`${first} — ${values.map((x) => (x.h ? `${x.h}: ${x.v}` : x.v)).join('; ')}`);
    else lines.push(`${first}: ${values.map((x) => x.v).join(', ')}`);
  }
  return lines.join('\n');
}

/** Collapses spaces, trims lines, keeps at most one blank line between paragraphs. */
export function tidy(text: string): string {
  // The same four replacements as `/\r\n?/ -> \n`, `/[^\S\n]+/ -> ' '`, `/ ?\n ?/ -> \n`, `/\n{3,}/ -> \n\n`, but
  // the 2nd and 3rd match only what they change (not every single space and every line break): a page's text is not
  // copied for nothing (issue 48, the crawl's allocations).
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/(?: [^\S\n]|[^\S\n ])[^\S\n]*/g, ' ')
    .replace(/ \n ?|\n /g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Everything one walk over the parsed page collects. */
interface Collected {
  title: HtmlElement | null;
  metas: HtmlElement[];
  canonicalHref: string | null;
  baseHref: string | null;
  hrefs: string[];
  articles: HtmlElement[];
  mains: HtmlElement[];
  body: HtmlElement | null;
  /** Hidden elements (`hidden`, `aria-hidden`, `display: none`), and the ids other elements say they open. */
  hidden: HtmlElement[];
  controlled: Set<string>;
  /** Buttons that say what they open (`aria-controls`, `data-(bs-)target`, `aria-expanded`), and the elements by id. */
  triggers: HtmlElement[];
  byId: Map<string, HtmlElement>;
}

function collect(root: AnyNode): Collected {
  const c: Collected = {
    title: null, metas: [], canonicalHref: null, baseHref: null, hrefs: [], articles: [], mains: [], body: null, hidden: [], controlled: new Set(),
    triggers: [], byId: new Map(),
  };
  const walk = (node: AnyNode, inArticle: boolean, inSvg: boolean, depth: number) => {
    if (depth > MAX_NESTING || !('children' in node)) return;
    for (const child of node.children) {
      if (child.type !== 'tag') continue;
      const { name, attribs } = child;
      if (name === 'a' || name === 'area') {
        if (attribs.href && attribs.download === undefined) c.hrefs.push(attribs.href);
      } else if (name === 'meta') c.metas.push(child);
      else if (name === 'link') {
        if (c.canonicalHref === null && attribs.href && attribs.rel?.toLowerCase().split(/\s+/).includes('canonical')) c.canonicalHref = attribs.href;
      } else if (name === 'title' && !c.title && !inSvg) c.title = child;
      else if (name === 'base' && c.baseHref === null && attribs.href) c.baseHref = attribs.href;
      else if (name === 'body' && !c.body) c.body = child;
      if (name === 'article' && !inArticle) c.articles.push(child);
      if (name === 'main' || attribs.role === 'main') c.mains.push(child);
      for (const id of controlledIds(attribs)) c.controlled.add(id);
      if (attribs.id && !c.byId.has(attribs.id)) c.byId.set(attribs.id, child);
      if (name === 'button' && isTrigger(attribs)) c.triggers.push(child);
      if (attribs.hidden !== undefined || attribs['aria-hidden'] === 'true' || DISPLAY_NONE.test(attribs.style ?? '')) c.hidden.push(child);
      walk(child, inArticle || name === 'article', inSvg || name === 'svg', depth + 1);
    }
  };
  walk(root, false, false, 0);
  return c;
}

const DISPLAY_NONE = /(^|;)\s*(display\s*:\s*none|visibility\s*:\s*hidden)\b/i;
/** Class or id words of a collapsed panel that a click opens: an accordion's answer, a tab's content, a "read more". */
const DISCLOSURE = /accordion|collaps|expand|toggle|disclos|reveal|faq|answer|panel|tab-?pane|tab-?content|read-?more|show-?more|more-?text/i;

/** The ids an element says it opens: `aria-controls`, a Bootstrap-style `data-(bs-)target`, an in-page `href="#…"`. */
function controlledIds(attribs: Record<string, string | undefined>): string[] {
  const ids = (attribs['aria-controls'] ?? '').split(/\s+/);
  for (const target of [attribs['data-target'], attribs['data-bs-target'], attribs.href]) if (target?.startsWith('#')) ids.push(target.slice(1));
  return ids.filter(Boolean);
}

/**
 * A hidden element that a click opens is content: the collapsed answer of an FAQ accordion, a tab's
 * panel. It is hidden until the visitor asks, not boilerplate (a cookie banner or a modal is left
 * hidden, and dropped as boilerplate anyway).
 */
function isDisclosure(attribs: Record<string, string | undefined>, controlled: Set<string>): boolean {
  if (attribs.id && controlled.has(attribs.id)) return true;
  return DISCLOSURE.test(`${attribs.class ?? ''} ${attribs.id ?? ''}`);
}

const visible = (attribs: Record<string, string | undefined>) => {
  delete attribs.hidden;
  if (attribs['aria-hidden'] === 'true') delete attribs['aria-hidden'];
  if (attribs.style) attribs.style = attribs.style.replace(new RegExp(DISPLAY_NONE.source, 'gi'), '$1');
};

/** A button that says it opens something: what it names is the label of what it opens. */
const isTrigger = (attribs: Record<string, string | undefined>) =>
  attribs['aria-expanded'] !== undefined || attribs['aria-controls'] !== undefined || attribs['data-target'] !== undefined || attribs['data-bs-target'] !== undefined;

/**
 * Whether a panel a button opens holds content: not a menu or a list of links (a site menu's "Menu" toggle), but an
 * accordion's answer or a tab's panel.
 */
function isContentPanel<N>(tree: Tree<N>, panel: N): boolean {
  const tag = tree.tag(panel);
  return tag !== null && !FURNITURE.has(tag) && !LINK_LIST.has(tag) && tag !== 'header' && linkDensity(tree, panel) <= 0.5;
}

/**
 * The panels a trigger opens: those its `aria-controls` or `data-(bs-)target` name, else (a script that opens what
 * follows the button) the element after it, or after the heading the button stands in.
 */
function panelsOf<N>(attribs: Record<string, string | undefined>, byId: (id: string) => N | null, next: () => N | null): N[] {
  const ids = controlledIds({ ...attribs, href: undefined });
  if (ids.length) return ids.map(byId).filter((n): n is N => n !== null);
  const after = next();
  return after ? [after] : [];
}

/**
 * An accordion's or a tab's trigger button as what it is to a reader, the label of the panel it opens ("Do you sell
 * gift cards?" above "Yes, in multiples of $25."): a `<summary>`, which the text walk keeps as a paragraph of its own
 * (buttons are left out, being controls). A button that opens a menu or nothing on the page stays a control.
 */
const LABEL = 'summary';

/** Shows the collapsed panels of the parsed page (htmlparser2), and labels them with their triggers' text, so that the text walk keeps both. */
function openDisclosures(c: Collected): void {
  for (const el of c.hidden) if (isDisclosure(el.attribs, c.controlled)) visible(el.attribs);
  for (const button of c.triggers) {
    const panels = panelsOf(button.attribs, (id) => c.byId.get(id) ?? null, () => nextElement(button));
    if (panels.length && panels.every((p) => isContentPanel(htmlparser2Tree, p))) button.name = LABEL;
  }
}

/** The element after `el`, or after its heading when it stands alone in one (`<h3><button>…</button></h3><div>…`). */
function nextElement(el: HtmlElement): HtmlElement | null {
  const parent = el.parent;
  const from = parent && parent.type === 'tag' && HEADING.test(parent.name) ? parent : el;
  for (let n = from.next; n; n = n.next) if (n.type === 'tag') return n;
  return null;
}

/** The same for a DOM (Readability's linkedom document). */
function openDomDisclosures(doc: Document): void {
  const controlled = new Set<string>();
  for (const el of doc.querySelectorAll('[aria-controls], [data-target], [data-bs-target], a[href^="#"]')) {
    for (const id of controlledIds(attributesOf(el))) controlled.add(id);
  }
  for (const el of doc.querySelectorAll('[hidden], [aria-hidden="true"], [style]')) {
    const attribs = attributesOf(el);
    if (attribs.hidden === undefined && attribs['aria-hidden'] !== 'true' && !DISPLAY_NONE.test(attribs.style ?? '')) continue;
    if (!isDisclosure(attribs, controlled)) continue;
    el.removeAttribute('hidden');
    if (attribs['aria-hidden'] === 'true') el.removeAttribute('aria-hidden');
    visible(attribs);
    if (attribs.style !== undefined) el.setAttribute('style', attribs.style);
  }
  for (const button of doc.querySelectorAll('button')) {
    const attribs = attributesOf(button);
    if (!isTrigger(attribs)) continue;
    const next = () => {
      const parent = button.parentElement;
      return (parent && HEADING.test(parent.localName) ? parent : button).nextElementSibling;
    };
    const panels = panelsOf<Node>(attribs, (id) => doc.getElementById(id), next);
    if (!panels.length || !panels.every((p) => isContentPanel(domTree, p))) continue;
    const label = doc.createElement(LABEL);
    while (button.firstChild) label.appendChild(button.firstChild);
    button.replaceWith(label);
  }
}

function attributesOf(el: Element): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const name of el.getAttributeNames()) out[name] = el.getAttribute(name) ?? undefined;
  return out;
}

function plainText(node: AnyNode): string {
  return htmlparser2Tree.text(node) ?? [...htmlparser2Tree.children(node)].map(plainText).join('');
}

function robotsDirectives(metas: HtmlElement[]): { noindex: boolean; nofollow: boolean } {
  let noindex = false;
  let nofollow = false;
  for (const meta of metas) {
    const name = meta.attribs.name?.toLowerCase();
    if (name !== 'robots' && name !== 'agentmanagementbot') continue;
    for (const token of (meta.attribs.content ?? '').toLowerCase().split(/[\s,]+/)) {
      if (token === 'noindex' || token === 'none') noindex = true;
      if (token === 'nofollow' || token === 'none') nofollow = true;
    }
  }
  return { noindex, nofollow };
}

function titleOf(c: Collected): string | null {
  const og = c.metas.find((m) => m.attribs.property === 'og:title' || m.attribs.name === 'og:title');
  const fromOg = og ? tidy(og.attribs.content ?? '') : '';
  if (fromOg) return fromOg;
  const text = c.title ? tidy(plainText(c.title)) : '';
  return text || null;
}

function baseOf(href: string | null, pageUrl: string): string {
  if (!href) return pageUrl;
  try {
    return new URL(href, pageUrl).href;
  } catch {
    return pageUrl;
  }
}

/** Text of the page's semantic main container (see the module comment), or null when it has none worth trusting. */
function semanticText(c: Collected): string | null {
  const candidates = [c.articles.length === 1 ? c.articles[0] : undefined, c.mains.length === 1 ? c.mains[0] : undefined];
  for (const container of candidates) {
    if (!container) continue;
    const text = blockText(htmlparser2Tree, container, 'main');
    if (text.length >= MIN_MAIN_CHARS) return text;
  }
  return null;
}

/** linkedom, loaded on the first page that needs it (its CommonJS build: about 10 MiB an idle worker does not need). */
let linkedom: typeof Linkedom | undefined;

/**
 * htmlparser2 (with its entities) and Readability, loaded on the first page too, through their CommonJS builds (the same
 * release's code as htmlparser2's ES module; Readability ships CommonJS only): an idle service loaded their 0.4 MB of
 * modules at start (issue 48, bench/README.md). linkedom requires the same htmlparser2 build, so a crawl loads one.
 */
let htmlparser2: typeof Htmlparser2 | undefined;
let readability: typeof ReadabilityLib | undefined;
const parseDocument = (html: string) => (htmlparser2 ??= createRequire(import.meta.url)('htmlparser2') as typeof Htmlparser2).parseDocument(html);

/**
 * linkedom builds its tree from what the markup says: a fragment without `<html>` would get
 * its first element as the document element, so such pages are wrapped first.
 */
function parseWithLinkedom(html: string): Document {
  const head = html.slice(0, 4096).toLowerCase();
  const whole = head.includes('<html') || head.includes('<body');
  linkedom ??= createRequire(import.meta.url)('linkedom') as typeof Linkedom;
  return linkedom.parseHTML(whole ? html : `<!doctype html><html><head></head><body>${html}</body></html>`).document;
}

/** Main content by Readability; null when it finds none or fails. */
function readabilityText(html: string): string | null {
  try {
    const doc = parseWithLinkedom(html);
    openDomDisclosures(doc);
    readability ??= createRequire(import.meta.url)('@mozilla/readability') as typeof ReadabilityLib;
    const reader = new readability.Readability<string>(doc, {
      disableJSONLD: true,
      // Past this, Readability throws and the body text is taken instead: it is slow on huge documents.
      maxElemsToParse: READABILITY_MAX_ELEMENTS,
      // Readability keeps what it judged content, link lists and page navigation included: drop those.
      serializer: (node) => blockText(domTree, node, 'main'),
    });
    return reader.parse()?.content || null;
  } catch {
    return null;
  }
}

function mainText(html: string, c: Collected, root: AnyNode): { text: string; method: ExtractedPage['method'] } {
  const semantic = semanticText(c);
  if (semantic) return { text: semantic, method: 'semantic' };
  const readable = html.length <= READABILITY_MAX_CHARS ? readabilityText(html) : null;
  if (readable) return { text: readable, method: 'readability' };
  const body = c.body ?? root;
  const text = blockText(htmlparser2Tree, body, 'body') || blockText(htmlparser2Tree, body, 'none');
  return { text, method: text ? 'body' : 'none' };
}

/** A copyright line ("© Cedar & Pine. Follow us on Instagram.", "Copyright 2024 …, all rights reserved"): no content. */
const NOTICE = /^(©|\(c\)\s|copyright\b|all rights reserved\b)/i;

/**
 * `text` without its copyright lines. A short page's footer can come through Readability (a blog index of a few links)
 * and is then no answer to anything ("Do you have a café?": "Yes, © Cedar & Pine Climbing.").
 */
function withoutNotices(text: string): string {
  return text.split(/\n{2,}/).filter((p) => !(p.length <= 200 && NOTICE.test(p.trim()))).join('\n\n');
}

/** Parses an HTML page and takes everything the crawler needs from it. */
export function extractHtml(html: string, pageUrl: string): ExtractedPage {
  const root = parseDocument(html);
  const c = collect(root);
  openDisclosures(c);
  const base = baseOf(c.baseHref, pageUrl);
  const { noindex, nofollow } = robotsDirectives(c.metas);
  const links = new Set<string>();
  for (const href of c.hrefs) {
    const url = normalizeUrl(href, base);
    if (url) links.add(url);
  }
  const canonical = c.canonicalHref ? normalizeUrl(c.canonicalHref, base) : null;
  const { text, method } = noindex ? { text: '', method: 'none' as const } : mainText(html, c, root);
  return { title: titleOf(c), canonical, links: [...links], text: withoutNotices(text), method, noindex, nofollow };
}

/** A text/plain page: its text, tidied. */
export function extractPlainText(text: string): ExtractedPage {
  const tidied = tidy(text.replace(/\r\n?/g, '\n'));
  return { title: null, canonical: null, links: [], text: tidied, method: tidied ? 'body' : 'none', noindex: false, nofollow: false };
}
