import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Registration by discovery: a family declares itself in its own module (its route family, its
 * activities, its workflow's kind, its agent hooks) and the code that lists families finds the
 * modules by folder, so a new family adds files and edits no central list.
 */

/** A source module of a folder: `.ts` or `.js`, not a test, a declaration or the folder's index. */
const isModule = (name: string) => /\.(ts|js)$/.test(name) && !/\.(test\.(ts|js)|d\.ts)$/.test(name) && !/^index\.(ts|js)$/.test(name);

/** The module files of `dir` (a file URL), by name: the order is the same on every machine. */
export function moduleFiles(dir: URL): string[] {
  return readdirSync(dir).filter(isModule).sort().map((name) => fileURLToPath(new URL(name, dir)));
}

/** Imports every module of `dir`, by file name. */
export async function importModules(dir: URL): Promise<{ path: string; exports: Record<string, unknown> }[]> {
  return Promise.all(moduleFiles(dir).map(async (path) => ({ path, exports: await import(pathToFileURL(path).href) as Record<string, unknown> })));
}

/** Imports `<dir>/<folder>/<file>` from every folder of `dir` that has one, by folder name. */
export async function importFromEachFolder(dir: URL, file: string): Promise<{ path: string; exports: Record<string, unknown> }[]> {
  const paths = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => fileURLToPath(new URL(`${entry.name}/${file}`, dir)))
    .filter((path) => existsSync(path))
    .sort();
  return Promise.all(paths.map(async (path) => ({ path, exports: await import(pathToFileURL(path).href) as Record<string, unknown> })));
}
