import { randomUUID } from 'node:crypto';
import type { Sql } from './index.ts';

/**
 * `sql.listen` that does not go deaf. postgres.js re-runs LISTEN when its listening connection
 * closes, but when that LISTEN fails (the database was still refusing sessions: the production
 * rehearsal terminates them for 5 s) it drops the listener without a word, and the process never
 * hears the channel again. So every `checkMs` this sends itself a ping on the channel; a ping that
 * has not come back by the next check means the subscription is gone, and it is made again
 * (`onListen` runs on every successful LISTEN, as with sql.listen: notifications sent meanwhile
 * were lost, so callers look at the state itself). Pings never reach `onNotify`.
 */
export async function listenDurably(sql: Sql, channel: string, onNotify: (payload: string) => void, onListen: () => void,
  opts: { checkMs?: number } = {}): Promise<{ unlisten(): Promise<void> }> {
  const ping = `ping:${randomUUID()}:`;
  let sent = 0;
  let echoed = 0;
  const handler = (payload: string): void => {
    if (payload.startsWith(ping)) echoed = Math.max(echoed, Number(payload.slice(ping.length)));
    else if (!payload.startsWith('ping:')) onNotify(payload);
  };
  let subscription = await sql.listen(channel, handler, onListen);
  let checking = false;
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    void (async () => {
      if (echoed < sent) {
        await subscription.unlisten().catch(() => undefined);
        subscription = await sql.listen(channel, handler, onListen);
      }
      sent += 1;
      await sql.notify(channel, `${ping}${sent}`);
    })().catch(() => undefined).finally(() => { checking = false; });
  }, opts.checkMs ?? 1000);
  timer.unref();
  return {
    async unlisten() {
      clearInterval(timer);
      await subscription.unlisten();
    },
  };
}
