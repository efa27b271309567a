import type Koa from 'koa';
import type { AppContext } from './context.ts';
import { compileFamily, type CompiledRoute, type RouteFamily } from './routing.ts';

/**
 * The methods an area answers at all: any other (TRACE, PROPFIND…) is 501 with the `Allow` of the routes matching
 * the path, as @koa/router's `allowedMethods` answers with its default `methods`, which the area's routers had.
 */
const IMPLEMENTED = new Set(['HEAD', 'OPTIONS', 'GET', 'PUT', 'PATCH', 'POST', 'DELETE']);

/** Characters a literal segment may hold: nothing path-to-regexp's syntax (which routers read paths in) gives a meaning. */
const LITERAL = /^[A-Za-z0-9._~-]+$/;
const PARAM = /^:([A-Za-z_$][A-Za-z0-9_$]*)$/;

/** A route of the table: its path read once into segments (the leading '' included), the methods it answers. */
interface TableRoute {
  readonly route: CompiledRoute;
  /** Each segment's literal text (compared case-sensitively), or null for a parameter (any non-empty segment). */
  readonly segments: readonly (string | null)[];
  /** Where each parameter is, by name, in the path's order. */
  readonly params: readonly { name: string; at: number }[];
  /** Its methods as `Allow` names them: a GET route answers HEAD too, named first. */
  readonly allows: readonly string[];
}

/** Reads a route's path into segments: fixed-segment paths only (a literal or `:name` each), or it throws. */
function tableRoute(route: CompiledRoute): TableRoute {
  const parts = route.path.split('/');
  if (parts[0] !== '' || parts.length < 2) throw new Error(`route ${route.method} ${route.path}: a path starts with /`);
  const segments: (string | null)[] = [''];
  const params: { name: string; at: number }[] = [];
  for (let at = 1; at < parts.length; at++) {
    const part = parts[at]!;
    const param = PARAM.exec(part)?.[1];
    if (param !== undefined) {
      if (params.some((p) => p.name === param)) throw new Error(`route ${route.method} ${route.path}: parameter ${param} twice`);
      segments.push(null);
      params.push({ name: param, at });
    } else if (LITERAL.test(part)) {
      segments.push(part);
    } else {
      // An empty segment, a wildcard, an optional or repeated part, a parameter with its own pattern or sharing its segment.
      throw new Error(`route ${route.method} ${route.path}: the route table takes fixed-segment paths only (a literal or :name each)`);
    }
  }
  return { route, segments, params, allows: route.method === 'GET' ? ['HEAD', 'GET'] : [route.method] };
}

/**
 * A request path's segments, the leading '' included. One trailing slash is not a segment: a route matches with or
 * without it, as the routers matched (non-strict).
 */
function segmentsOf(path: string): string[] {
  return (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).split('/');
}

function matches(route: TableRoute, segments: readonly string[]): boolean {
  const own = route.segments;
  if (own.length !== segments.length) return false;
  for (let i = own.length - 1; i >= 0; i--) {
    const literal = own[i];
    if (literal === null ? segments[i] === '' : literal !== segments[i]) return false;
  }
  return true;
}

/** A parameter's value: percent-decoded, or the text as it came when that fails (a malformed escape is not refused here). */
function decodeParam(text: string): string {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function paramsOf(route: TableRoute, segments: readonly string[]): Record<string, string> {
  const params: Record<string, string> = {};
  for (const { name, at } of route.params) params[name] = decodeParam(segments[at]!);
  return params;
}

/** Whether a route answers this method (HEAD is a GET without its body; Koa leaves the body out). */
const answers = (route: TableRoute, method: string): boolean => route.route.method === method || (method === 'HEAD' && route.route.method === 'GET');

/** The methods of the routes matching the path, each once, in the routes' order (HEAD before GET): the `Allow` header's text. */
function allowOf(candidates: readonly TableRoute[], segments: readonly string[]): string {
  const allowed: string[] = [];
  for (const route of candidates) if (matches(route, segments)) for (const m of route.allows) if (!allowed.includes(m)) allowed.push(m);
  return allowed.join(', ');
}

/**
 * A request no route takes, though routes match its path (`allow` names their methods): 501 for a method no area
 * answers, the methods for OPTIONS, else 405; each with `Allow`, set after the status and body, as the router set
 * them. Only a request nothing answered yet (404): the router's condition.
 */
function refuseMethod(ctx: AppContext, allow: string): void {
  if (ctx.status !== 404) return;
  const method = ctx.method;
  if (!IMPLEMENTED.has(method)) ctx.status = 501;
  else if (method === 'OPTIONS') {
    ctx.status = 200;
    ctx.body = '';
  } else ctx.status = 405;
  ctx.set('Allow', allow);
}

/**
 * A request whose path no route matches: what follows in the area's chain (the public area's routers) is asked; if
 * nothing answered, a method no area answers is 501 with an empty `Allow` (the front frame makes that a 404), as the
 * router answered.
 */
async function passOn(ctx: AppContext, next: Koa.Next): Promise<void> {
  await next();
  if (ctx.status === 404 && !IMPLEMENTED.has(ctx.method)) {
    ctx.status = 501;
    ctx.set('Allow', '');
  }
}

/** The routes that can match a path of some number of segments, by its first two below the area's prefix. */
interface Group {
  /** Routes whose two segments there are literal, by those two, each list holding the `others` too, in order. */
  byKey: Map<string, Map<string, TableRoute[]>>;
  /** Routes with a parameter in either of those two segments: they could match any path of the count. */
  others: TableRoute[];
}

/**
 * The routes of an area's families, dispatched by method and path by the table itself (issue 48): @koa/router's
 * dispatch cost about 10 µs of a GET beyond a bare route (a chain composed per request, a closure per matched
 * layer, `ctx.host`, debug calls). Each route's path is read once into segments (`tableRoute`); a request's path is
 * split once and compared with the routes that can match it: those of its number of segments whose first two below
 * `prefix` equal its own, or are parameters. The first route (in the families' order) that matches the path and
 * answers the method takes the request: its parameters, percent-decoded (`decodeParam`), are `ctx.params` and its
 * handler's. Routes matching the path, none of the method: 405 (501 for a method no area answers; the methods for
 * OPTIONS), with `Allow` naming their methods. No route matching the path: what follows in the chain is asked
 * (`passOn`). These are the answers the area's @koa/router routers gave (api/route-table.test.ts holds them to it).
 *
 * What follows the table in an area's chain must serve no path a route of the table matches (the public area's card
 * and artifact routers: `passesOn` names their prefixes, checked here), as a 405 or OPTIONS answer here does not ask it.
 */
export function routeTable(families: RouteFamily[], prefix: string, passesOn: string[] = []): Koa.Middleware {
  const routes: TableRoute[] = [];
  for (const family of families) {
    if (!family.base.startsWith(prefix)) throw new Error(`family ${family.tag} (${family.base}) lies outside its area ${prefix}`);
    for (const r of compileFamily(family)) routes.push(tableRoute(r));
  }
  for (const other of passesOn) {
    const own = segmentsOf(other);
    const clash = routes.find((r) => r.segments.length > own.length && own.every((s, i) => (r.segments[i] === null ? s !== '' : r.segments[i] === s)));
    if (clash) throw new Error(`route ${clash.route.method} ${clash.route.path} could serve a path under ${other}, which the chain serves after the table`);
  }
  const first = segmentsOf(prefix).length;
  const groups = new Map<number, Group>();
  for (const r of routes) {
    let group = groups.get(r.segments.length);
    if (!group) groups.set(r.segments.length, (group = { byKey: new Map(), others: [] }));
    const a = r.segments[first] ?? null;
    const b = r.segments[first + 1] ?? null;
    if (a === null || b === null) {
      // In the others, and in every keyed list of its count already made (those made later start from the others).
      group.others.push(r);
      for (const byB of group.byKey.values()) for (const list of byB.values()) list.push(r);
      continue;
    }
    let byB = group.byKey.get(a);
    if (!byB) group.byKey.set(a, (byB = new Map()));
    let list = byB.get(b);
    if (!list) byB.set(b, (list = [...group.others]));
    list.push(r);
  }
  const none: TableRoute[] = [];
  const candidatesOf = (segments: string[]): readonly TableRoute[] => {
    const group = groups.get(segments.length);
    if (!group) return none;
    return group.byKey.get(segments[first]!)?.get(segments[first + 1]!) ?? group.others;
  };

  return (koaCtx, next) => {
    const ctx = koaCtx as unknown as AppContext;
    const segments = segmentsOf(ctx.path);
    const candidates = candidatesOf(segments);
    const method = ctx.method;
    let pathMatched = false;
    for (let i = 0; i < candidates.length; i++) {
      const route = candidates[i]!;
      if (!matches(route, segments)) continue;
      if (answers(route, method)) {
        const params = paramsOf(route, segments);
        ctx.params = params;
        return route.route.handler(ctx, params);
      }
      pathMatched = true;
    }
    if (!pathMatched) return passOn(ctx, next);
    refuseMethod(ctx, allowOf(candidates, segments));
    return Promise.resolve();
  };
}
