import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the project's own files are, whether this module runs from its TypeScript source (tsx:
 * tests, benches, the CLI) or compiled into `dist/` (`npm start`, see scripts/run.mjs). Files that
 * are not code (migrations, web assets) are read from the source tree in both cases; code that is
 * loaded by path (the workflow bundle's entry, the bundler child) is taken in the form now running.
 */
const here = fileURLToPath(import.meta.url);

function findRoot(from: string): string {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'src'))) return dir;
    if (dirname(dir) === dir) throw new Error(`cannot find the project root above ${from}`);
  }
}

/** The project root: the folder with package.json and src/. */
export const PROJECT_ROOT = findRoot(here);

/** The root the running code was loaded from: PROJECT_ROOT, or PROJECT_ROOT/dist when compiled. */
const CODE_ROOT = dirname(dirname(dirname(here)));
const CODE_EXT = here.endsWith('.ts') ? '.ts' : '.js';

/** A file of the source tree that is not code: `sourceFile('web', 'embed.js')`. */
export const sourceFile = (...parts: string[]): string => join(PROJECT_ROOT, ...parts);

/** A module of the running code by its path without extension: `codeFile('workflows', 'index')`. */
export const codeFile = (...parts: string[]): string => join(CODE_ROOT, ...parts) + CODE_EXT;
