/**
 * The floor of bench:api, run in a process of its own: Koa 3 + @koa/router, one route reading the
 * agent row by id with postgres.js from the same database, with the service's default pool size,
 * and answering it as JSON. No auth, no validation, no error mapping: what any server must do for
 * this request. `node --import tsx bench/bare-agent-app.ts` with DATABASE_URL and PORT.
 */
import { createServer } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import postgres from 'postgres';

const sql = postgres(process.env.DATABASE_URL!, { max: Number(process.env.DATABASE_POOL_SIZE ?? 10), onnotice: () => undefined });
const app = new Koa();
const router = new Router();
router.get('/healthz', (ctx) => { ctx.body = { status: 'ok' }; });
router.get('/api/v1/rest/agents/:id', async (ctx) => {
  const [row] = await sql`
    select id, public_key, name, status, voice, persona, site_url, config, draft, created_at, updated_at
    from agents where id = ${ctx.params.id!}`;
  if (!row) ctx.status = 404;
  else ctx.body = row;
});
app.use(router.routes());
const server = createServer(app.callback());
server.keepAliveTimeout = 65_000; // as the service's server
server.listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGINT', () => {
  server.close();
  server.closeAllConnections();
  void sql.end({ timeout: 5 }).then(() => process.exit(0));
});
