import type { Db } from '../db/index.ts';
import { agentHasActiveCampaign as campaignsCheck } from '../db/campaigns.ts';

/**
 * Whether an agent has an active campaign (`running` or `paused`): reassigning, unassigning or
 * releasing its number is then refused with 409 `active_campaign`. The campaigns family, which
 * owns that state, registers its check here.
 */
export type ActiveCampaignCheck = (db: Db, agentId: string) => Promise<boolean>;

export const ACTIVE_CAMPAIGN_CHECKS: ActiveCampaignCheck[] = [campaignsCheck];

export async function agentHasActiveCampaign(db: Db, agentId: string): Promise<boolean> {
  for (const check of ACTIVE_CAMPAIGN_CHECKS) if (await check(db, agentId)) return true;
  return false;
}
