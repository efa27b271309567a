import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from './common.ts';

/** A tracking rule the agent's evaluated conversations suggest: a recurring intent or an extracted field no rule covers yet. */
export const TrackingSuggestionSchema = Type.Object({
  name: Type.String({ description: 'The rule name `accept` adds' }),
  condition: Type.String({ description: 'The natural-language condition `accept` adds' }),
  reason: Type.String({ description: 'Why it is suggested, with its count' }),
  conversation_ids: Type.Array(Uuid, { description: 'The evaluated conversations it was drawn from (evidence), newest first, at most 20' }),
}, { $id: 'TrackingSuggestion', additionalProperties: false });
export type TrackingSuggestion = Static<typeof TrackingSuggestionSchema>;

export const TrackingSuggestionListSchema = Type.Object({
  data: Type.Array(TrackingSuggestionSchema),
}, { $id: 'TrackingSuggestionList', additionalProperties: false });

export const TrackingSuggestionAcceptSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, description: 'The name of a current suggestion' }),
}, { $id: 'TrackingSuggestionAccept', additionalProperties: false });



/** An integration the agent's conversations and configuration say would pay off, by a stated rule (README). */
export const IntegrationRecommendationSchema = Type.Object({
  integration: Type.String({ description: '`calendar`, `phone_transfer` or `crm_webhook`' }),
  reason: Type.String({ description: 'The rule that fired and its threshold' }),
  evidence_count: Type.Integer({ minimum: 1, description: 'How many conversations the rule counted' }),
}, { $id: 'IntegrationRecommendation', additionalProperties: false });
export type IntegrationRecommendation = Static<typeof IntegrationRecommendationSchema>;

export const IntegrationRecommendationListSchema = Type.Object({
  data: Type.Array(IntegrationRecommendationSchema),
}, { $id: 'IntegrationRecommendationList', additionalProperties: false });
