import type { Db } from './index.ts';

/**
 * The carrier_webhook_receipts table: one row per carrier webhook played (a text by MessageSid, a
 * call's request by CallSid and turn), holding the sealed answer it got for a day.
 */

export type ReceiptChannel = 'voice' | 'sms';

/** How long an answer is kept for a retry; the key itself stays, so a later replay still plays nothing. */
export const RECEIPT_ANSWER_HOURS = 24;
/** Answers past their time pruned by each new claim: bounded work per request, and the table keeps up with its traffic. */
const PRUNE_PER_CLAIM = 20;

/**
 * Claims a webhook's receipt for playing: true when this request is the first with the key.
 * False when it was played (or is being played) already: then read its answer with findReceiptAnswer.
 */
export async function claimCarrierReceipt(db: Db, input: { channel: ReceiptChannel; key: string; orgId: string }): Promise<boolean> {
  const [row] = await db<{ claimed: boolean }[]>`
    with pruned as (
      update carrier_webhook_receipts set answer = null
      where (channel, receipt_key) in (
        select channel, receipt_key from carrier_webhook_receipts
        where answer is not null and created_at < now() - make_interval(hours => ${RECEIPT_ANSWER_HOURS})
        order by created_at limit ${PRUNE_PER_CLAIM} for update skip locked)
    ), claimed as (
      insert into carrier_webhook_receipts (channel, receipt_key, org_id) values (${input.channel}, ${input.key}, ${input.orgId})
      on conflict (channel, receipt_key) do nothing returning 1
    )
    select exists (select 1 from claimed) as claimed`;
  return row!.claimed;
}

/** The sealed answer a played webhook got; null while it is still being played, once pruned, or when never played. */
export async function findReceiptAnswer(db: Db, channel: ReceiptChannel, key: string): Promise<{ found: boolean; answer: string | null }> {
  const [row] = await db<{ answer: string | null }[]>`
    select answer from carrier_webhook_receipts where channel = ${channel} and receipt_key = ${key}`;
  return { found: Boolean(row), answer: row?.answer ?? null };
}

export async function completeCarrierReceipt(db: Db, channel: ReceiptChannel, key: string, sealedAnswer: string): Promise<void> {
  await db`update carrier_webhook_receipts set answer = ${sealedAnswer} where channel = ${channel} and receipt_key = ${key}`;
}

/** Frees a claim whose playing failed, so the carrier's retry plays it. */
export async function releaseCarrierReceipt(db: Db, channel: ReceiptChannel, key: string): Promise<void> {
  await db`delete from carrier_webhook_receipts where channel = ${channel} and receipt_key = ${key} and answer is null`;
}
