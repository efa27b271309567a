import { loadConfig } from './config.ts';
import { createSql, migrate } from './db/index.ts';
import { createOrganization } from './auth/keys.ts';
import { findRunningEmbeddedPostgres, startEmbeddedPostgres } from './infra/embedded-postgres.ts';
import { join } from 'node:path';

const USAGE = 'usage: npm run cli -- org create NAME';

/**
 * Administrative commands against the same database as the service (safe while it runs).
 * `org create NAME` prints one JSON line: {"org_id", "name", "token"}.
 */
async function main(args: string[]): Promise<number> {
  const [noun, verb, ...rest] = args;
  const name = rest.join(' ').trim();
  if (noun !== 'org' || verb !== 'create' || !name || name.length > 200) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const config = loadConfig();
  let url = config.DATABASE_URL;
  let embedded: { stop(): Promise<void> } | null = null;
  if (!url) {
    // The data folder of `npm start`: share its server while it runs, else start it for this command.
    const dataDir = join(config.DATA_DIR, 'postgres');
    url = (await findRunningEmbeddedPostgres(dataDir)) ?? undefined;
    if (!url) {
      const pg = await startEmbeddedPostgres({ dataDir, notice: (line) => process.stderr.write(`${line}\n`) });
      embedded = pg;
      url = pg.url;
    }
  }
  const sql = createSql(url, { max: 1 });
  try {
    await migrate(sql);
    const org = await sql.begin((tx) => createOrganization(tx, name));
    process.stdout.write(`${JSON.stringify(org)}\n`);
    return 0;
  } finally {
    await sql.end({ timeout: 5 });
    await embedded?.stop();
  }
}

main(process.argv.slice(2)).then((code) => process.exit(code), (err: unknown) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});
