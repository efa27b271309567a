import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, freshDatabase } from './helpers.ts';
import { createSql, migrate, type Sql } from '../src/db/index.ts';
import { createSecretBox } from '../src/crypto/secret-box.ts';
import { deleteEndpoint, fanOutEvents, insertEndpoint } from '../src/db/webhooks.ts';
import { newId } from '../src/ids.ts';

/**
 * Deleting a webhook endpoint while its deliveries are being claimed or recorded. The dispatcher
 * (claimDeliveries) and the attempt recorder lock a delivery, then update its endpoint; a delete
 * that removed the endpoint first and reached its deliveries through the cascade took the same
 * two locks the other way round, and PostgreSQL broke the deadlock by aborting one side: the
 * DELETE answered 500 (seen once in the route fuzz test).
 */
let db: Awaited<ReturnType<typeof freshDatabase>>;
let sql: Sql;
const secrets = createSecretBox(Buffer.alloc(32, 7));

beforeAll(async () => {
  db = await freshDatabase();
  sql = createSql(db.url, { max: 4 });
  await migrate(sql);
});
afterAll(async () => {
  await sql?.end({ timeout: 5 });
  await db?.drop();
});

/** An organization with one endpoint subscribed to everything and one delivery waiting for it. */
async function endpointWithDelivery() {
  const orgId = newId();
  await sql`insert into organizations (id, name) values (${orgId}, 'Locks')`;
  const endpoint = await insertEndpoint(sql, secrets, orgId, { url: 'https://example.com/hook', events: ['*'], secret: 'whsec_' + 'a'.repeat(32) });
  await sql`insert into events (id, org_id, type, data) values (${'evt_' + newId()}, ${orgId}, 'widget.paused', '{}')`;
  await fanOutEvents(sql, 100);
  const [delivery] = await sql<{ id: string }[]>`select id from webhook_deliveries where endpoint_id = ${endpoint.id}`;
  return { orgId, endpointId: endpoint.id, deliveryId: delivery!.id };
}

/** Whether some session waits for a lock in a statement holding `text`. */
async function waitsForLock(text: string): Promise<boolean> {
  const rows = await sql`select 1 from pg_stat_activity
    where datname = current_database() and wait_event_type = 'Lock' and query like ${'%' + text + '%'}`;
  return rows.length > 0;
}

it('a delete waits for a claim holding the endpoint\'s delivery, then deletes: neither side is aborted', async () => {
  const { orgId, endpointId, deliveryId } = await endpointWithDelivery();
  // The claim's order, one step at a time: the delivery first, the endpoint after.
  const claim = sql.begin(async (tx) => {
    await tx`select id from webhook_deliveries where id = ${deliveryId} for update skip locked`;
    const deleting = deleteEndpoint(sql, orgId, endpointId);
    deleting.catch(() => {}); // awaited below
    await eventually(() => waitsForLock('webhook_'), 10_000, 20);
    await tx`update webhook_endpoints set last_claimed_at = now() where id = ${endpointId}`;
    // Returned in an object: a promise returned would be awaited before the commit it waits for.
    return { deleting };
  });
  const { deleting } = await claim;
  expect(await deleting).toBe(true);
  expect(await sql`select 1 from webhook_endpoints where id = ${endpointId}`).toHaveLength(0);
  expect(await sql`select 1 from webhook_deliveries where id = ${deliveryId}`).toHaveLength(0);
});

it('a delete PostgreSQL aborts to break a deadlock (a delivery fanned out after its locks) is tried again and succeeds', async () => {
  const { orgId, endpointId, deliveryId } = await endpointWithDelivery();
  const other = sql.begin(async (tx) => {
    // This side waits long before looking for a deadlock: the delete's side finds it and is the one aborted.
    await tx`set local deadlock_timeout = '10s'`;
    // A new delivery, not yet committed: it holds the endpoint (as a foreign key does) where the delete cannot see it.
    await tx`insert into events (id, org_id, type, data) values (${'evt_' + newId()}, ${orgId}, 'widget.paused', '{}')`;
    expect((await fanOutEvents(tx, 100)).deliveries).toBe(1);
    const deleting = deleteEndpoint(sql, orgId, endpointId);
    deleting.catch(() => {}); // awaited below
    await eventually(() => waitsForLock('delete from webhook_endpoints'), 10_000, 20);
    // Then this side claims the delivery the delete holds: a circle.
    await tx`update webhook_deliveries set claimed_at = now() where id = ${deliveryId}`;
    return { deleting };
  });
  const { deleting } = await other;
  expect(await deleting).toBe(true);
  expect(await sql`select 1 from webhook_deliveries where endpoint_id = ${endpointId}`).toHaveLength(0);
});

it('deletes only the organization\'s own endpoint', async () => {
  const { endpointId } = await endpointWithDelivery();
  expect(await deleteEndpoint(sql, newId(), endpointId)).toBe(false);
  expect(await sql`select 1 from webhook_endpoints where id = ${endpointId}`).toHaveLength(1);
});
