import { loadConfig } from './config.ts';
import { createSql, migrate } from './db/index.ts';
import { createOrganization } from './auth/keys.ts';
import { findRunningEmbeddedPostgres, startEmbeddedPostgres } from './infra/embedded-postgres.ts';
import { join } from 'node:path';
import { createSecretBox, loadSecretsKey } from './crypto/secret-box.ts';
import { webhookSigningToken } from './telephony/webhook-urls.ts';

const USAGE = 'usage: npm run cli -- org create NAME\n       npm run cli -- sandbox signing-token';

/**
 * Administrative commands against the same database as the service (safe while it runs).
 * `org create NAME` prints one JSON line: {"org_id", "name", "token"}.
 * `sandbox signing-token` prints the key the sandbox carrier's webhooks are signed with (SANDBOX_SIGNING_TOKEN,
 * else the installation's own, derived from the secrets key); refused when TWILIO_AUTH_TOKEN signs them.
 */
async function main(args: string[]): Promise<number> {
  const [noun, verb, ...rest] = args;
  if (noun === 'sandbox' && verb === 'signing-token' && !rest.length) {
    const config = loadConfig();
    if (config.CARRIER !== 'sandbox' || config.TWILIO_AUTH_TOKEN) {
      process.stderr.write('carrier webhooks are verified with TWILIO_AUTH_TOKEN here: there is no sandbox signing token\n');
      return 1;
    }
    process.stdout.write(`${webhookSigningToken(config, createSecretBox(await loadSecretsKey(config)))}\n`);
    return 0;
  }
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
