/**
 * URL rules of the crawler: one spelling per page (so each page is fetched once), what counts
 * as the same site, and which links are worth a request at all.
 */

/** Query parameters that only track where a visitor came from: dropped, so duplicates collapse. */
const TRACKING_PARAMS = new Set([
  'gclid', 'dclid', 'gbraid', 'wbraid', 'gclsrc', 'fbclid', 'msclkid', 'yclid', 'twclid', 'ttclid', 'li_fat_id',
  'mc_cid', 'mc_eid', 'ref', 'ref_src', 'ref_url', '_ga', '_gl', '_hsenc', '_hsmi', '__hssc', '__hstc', '__hsfp',
  'hsctatracking', 'igshid', 'mkt_tok', 'oly_anon_id', 'oly_enc_id', 'vero_id', 'vero_conv', 'srsltid', 'wickedid', 's_cid',
]);
const TRACKING_PREFIXES = ['utm_', 'pk_', 'mtm_', 'hsa_', 'matomo_'];

/** Extensions of files that are never HTML: not requested at all. */
const BINARY_EXTENSIONS = new Set([
  'pdf', 'zip', 'gz', 'tgz', 'bz2', 'xz', 'rar', '7z', 'tar', 'jpg', 'jpeg', 'png', 'gif', 'webp', 'svg', 'ico', 'bmp',
  'tif', 'tiff', 'avif', 'heic', 'mp3', 'mp4', 'm4a', 'm4v', 'wav', 'ogg', 'oga', 'webm', 'mov', 'avi', 'mkv', 'flv', 'wmv',
  'exe', 'dmg', 'msi', 'pkg', 'deb', 'rpm', 'apk', 'iso', 'bin', 'woff', 'woff2', 'ttf', 'otf', 'eot', 'css', 'js', 'mjs',
  'map', 'json', 'xml', 'rss', 'atom', 'csv', 'doc', 'docx', 'xls', 'xlsx', 'ppt', 'pptx', 'odt', 'ods', 'odp', 'psd', 'eps',
  'ai', 'swf', 'jar', 'wasm', 'epub', 'mobi',
]);

function isTrackingParam(name: string): boolean {
  const lower = name.toLowerCase();
  return TRACKING_PARAMS.has(lower) || TRACKING_PREFIXES.some((p) => lower.startsWith(p));
}

/**
 * The canonical spelling of a link, or null when it is not worth a request: resolved against
 * `base`, http(s) only (mailto:, javascript:, tel:, data: ... give null), no credentials, no
 * fragment, scheme and host in lower case without a trailing dot, no default port (WHATWG URL
 * parsing does that and removes dot segments), tracking parameters dropped and the remaining
 * ones sorted by name.
 */
export function normalizeUrl(raw: string, base?: string | URL): string | null {
  const trimmed = raw.trim();
  if (!trimmed) return null;
  let url: URL;
  try {
    url = new URL(trimmed, base);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username || url.password || !url.hostname) return null;
  url.hash = '';
  if (url.hostname.endsWith('.')) url.hostname = url.hostname.slice(0, -1);
  if (url.search) {
    const params = url.searchParams;
    for (const name of [...params.keys()]) if (isTrackingParam(name)) params.delete(name);
    params.sort();
    url.search = params.size ? params.toString() : '';
  }
  return url.href;
}

/**
 * What makes two hosts one site: the host name without a leading `www.` (a site and its
 * `www.` twin are one site: most sites redirect one to the other), plus the port when it is not
 * the scheme's default (http and https count as one site, so an upgrade redirect stays inside).
 */
export function siteKey(url: URL): string {
  const host = url.hostname.startsWith('www.') ? url.hostname.slice(4) : url.hostname;
  return url.port ? `${host}:${url.port}` : host;
}

/** Directory index files a server answers for the directory itself (`/docs/index.html` is `/docs/`). */
const INDEX_FILE = /\/(?:index|default|home)\.(?:html?|shtml|xhtml|php[345]?|aspx?|jsp|cfm|cgi)$/i;

/**
 * The identity of a page, for telling duplicates apart (issue 42: `/` and `/index.html` were two
 * pages): a normalized URL's site (`siteKey`: `www.` and http/https alike), its path without a
 * directory index file (`index.html`, `index.htm`, `index.php`, `default.aspx`...) and without a
 * trailing slash (`/docs/` is `/docs`), and its query. Two links with one key are fetched once, under
 * the first spelling met (never a spelling made up here, which the server might not answer).
 */
export function pageKey(normalized: string): string {
  const url = new URL(normalized);
  let path = url.pathname.replace(INDEX_FILE, '/');
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return `${siteKey(url)}${path}${url.search}`;
}

/** True when the path names a file type that is never a page (by its extension). */
export function hasBinaryExtension(url: URL): boolean {
  const path = url.pathname;
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  if (dot <= slash) return false;
  return BINARY_EXTENSIONS.has(path.slice(dot + 1).toLowerCase());
}

