import type { ReaderModel } from './reader.ts';

/**
 * The reader's model. Written by `node scripts/run.mjs bench train-reader` (bench/train-reader.ts) from the
 * development sites of the answers corpus (legacy-gym, legacy-clinic, legacy-bakery, dev-fr-boulangerie, dev-plumbing, dev-salon, dev-storage, dev-trattoria-files, dev-vet); do not edit by hand.
 */
export const READER_MODEL: ReaderModel = {
  features: ["lexical","lexical_top","lexical_rank","fused_rank","passage_cosine","dense_rank","lexical_x_cosine","kind_held","kind_missing","yes_no","entity_asked","entity_other","post","missing","absent","asks","sentence_cosine","sentence_rank"],
  weights: [5.0519,-0.1747,1.8228,1.1747,0.4932,1.3862,0.593,0.5848,-0.8609,-0.2068,0.8289,-0.0237,-2.4039,0.7003,-0.9257,-1.197,2.6773,0.137],
  bias: 6.2962,
  threshold: 0.9,
};
