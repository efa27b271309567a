import { eraseCampaignCalls, exportCampaignCalls } from '../db/contact-data.ts';
import type { ContactDataStep } from '../governance/plugins.ts';

/** Calls of campaigns enrolling the person or dialing its number. */
export const contactDataSteps: Record<string, ContactDataStep> = {
  campaign_calls: { order: 20, export: exportCampaignCalls, erase: async (tx, c) => ({ deleted: await eraseCampaignCalls(tx, c) }) },
};
