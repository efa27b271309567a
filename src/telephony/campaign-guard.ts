import type { Db } from '../db/index.ts';

/**
 * Whether an agent has an active campaign (`running` or `paused`): reassigning, unassigning or
 * releasing its number is then refused with 409 `active_campaign`. The campaigns family, which
 * owns that state, registers its check here; without one no agent has an active campaign.
 */
export type ActiveCampaignCheck = (db: Db, agentId: string) => Promise<boolean>;

export const ACTIVE_CAMPAIGN_CHECKS: ActiveCampaignCheck[] = [];

export async function agentHasActiveCampaign(db: Db, agentId: string): Promise<boolean> {
  for (const check of ACTIVE_CAMPAIGN_CHECKS) if (await check(db, agentId)) return true;
  return false;
}
