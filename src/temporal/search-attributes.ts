import { defineSearchAttributeKey } from '@temporalio/common';

/**
 * Custom search attributes every workflow of ours carries, so an operator can find the runs of
 * one organization, one agent or one campaign in the Temporal Web UI (`OrganizationId = "..."`).
 */
export const SEARCH_ATTRIBUTES = {
  OrganizationId: defineSearchAttributeKey('OrganizationId', 'KEYWORD'),
  AgentId: defineSearchAttributeKey('AgentId', 'KEYWORD'),
  CampaignId: defineSearchAttributeKey('CampaignId', 'KEYWORD'),
  /** Simulations: the agent playing the caller, or `builtin` for the built-in scripted caller. */
  CallerAgentId: defineSearchAttributeKey('CallerAgentId', 'KEYWORD'),
} as const;
