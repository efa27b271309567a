import { importModules } from '../src/modules.ts';
import type { RouteFamily } from './routing.ts';

const isRouteFamily = (value: unknown): value is RouteFamily => typeof value === 'object' && value !== null
  && typeof (value as RouteFamily).base === 'string' && typeof (value as RouteFamily).tag === 'string' && Array.isArray((value as RouteFamily).routes);

/**
 * The route table: every RouteFamily exported by a module of api/routes/, sorted by `order`
 * (then by file name). A new family is served, documented (OpenAPI) and offered as MCP tools by
 * exporting its RouteFamily from its own api/routes/<family>.ts.
 */
export async function loadFamilies(): Promise<RouteFamily[]> {
  const found = (await importModules(new URL('./routes/', import.meta.url)))
    .flatMap(({ exports }) => Object.values(exports).filter(isRouteFamily));
  const tags = new Set<string>();
  for (const family of found) {
    if (tags.has(family.tag)) throw new Error(`two route families are tagged ${family.tag}`);
    tags.add(family.tag);
  }
  // A stable sort: families of equal order keep the file-name order.
  return found.sort((a, b) => (a.order ?? Infinity) - (b.order ?? Infinity));
}
