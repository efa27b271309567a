import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Serving a made-up business's website for the answers evaluation: every page with a header
 * (the brand and navigation) and a footer listing every other page, as real small-business sites
 * have, and a robots.txt that allows everything.
 */

export interface Page { title: string; body: string }

export interface Site { brand: string; nav: readonly (readonly [string, string])[]; pages: Record<string, Page> }

export interface AnswersSite { url: string; pages: number; close(): Promise<void> }

/** An HTML table with a header row. */
export const table = (head: string[], rows: string[][]) =>
  `<table><thead><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>${
    rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('')}</tbody></table>`;

function render(site: Site, path: string, page: Page): string {
  const nav = site.nav.map(([href, label]) => `<a href="${href}">${label}</a>`).join(' ');
  const more = Object.keys(site.pages).filter((p) => p !== path).map((p) => `<a href="${p}">${site.pages[p]!.title}</a>`).join(' · ');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${page.title} | ${site.brand}</title></head>
<body><header><a href="/">${site.brand}</a><nav>${nav}</nav></header>
<main><article>${page.body}</article></main>
<footer><p>© ${site.brand}. Follow us on Instagram.</p><nav>${more}</nav></footer></body></html>`;
}

/** Serves the site on 127.0.0.1 (random port). */
export async function serveSite(site: Site): Promise<AnswersSite> {
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      return;
    }
    const page = site.pages[path];
    if (!page) {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(render(site, path, page));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    pages: Object.keys(site.pages).length,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
