#!/usr/bin/env node
// `npm run check`: every source folder has a README.md naming each of its files (by file name).
// The folders: src/ and each folder of it, api/ and each folder of it, workflows/, activities/,
// web/, scripts/, bench/, test/, test/support/ and fixtures/ (when present); not their sub-folders
// (migrations, recorded histories, sites). Tests (`*.test.ts`) are covered by the file name or, for
// all of a folder's tests at once, by the README writing the pattern `*.test.ts` itself.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const subfolders = (dir) => readdirSync(join(ROOT, dir), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => `${dir}/${e.name}`);
const folders = ['src', ...subfolders('src'), 'api', ...subfolders('api'), 'workflows', 'activities', 'web', 'scripts', 'bench', 'test', 'test/support', 'fixtures']
  .filter((dir) => existsSync(join(ROOT, dir)));

const problems = [];
for (const dir of folders) {
  const readme = join(ROOT, dir, 'README.md');
  if (!existsSync(readme)) { problems.push(`${dir}/ has no README.md`); continue; }
  const text = readFileSync(readme, 'utf8');
  const files = readdirSync(join(ROOT, dir), { withFileTypes: true }).filter((e) => e.isFile() && e.name !== 'README.md').map((e) => e.name);
  for (const name of files) {
    if (name.endsWith('.test.ts') && text.includes('*.test.ts')) continue;
    if (!text.includes(name)) problems.push(`${dir}/README.md does not name ${name}`);
  }
}
if (problems.length) {
  process.stderr.write(`check-readmes: ${problems.length} problem(s):\n  ${problems.join('\n  ')}\n`);
  process.exit(1);
}
process.stderr.write(`check-readmes: ${folders.length} folders, each README names each file\n`);
