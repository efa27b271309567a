import type { ReaderModel } from './reader.ts';

/**
 * The reader's model. Written by `node scripts/run.mjs bench train-reader` (bench/train-reader.ts) from the
 * development sites of the answers corpus (legacy-gym, legacy-clinic, legacy-bakery, dev-fr-boulangerie, dev-plumbing, dev-salon, dev-storage, dev-trattoria-files, dev-vet); do not edit by hand.
 */
export const READER_MODEL: ReaderModel = {
  features: ["lexical","lexical_top","lexical_rank","fused_rank","passage_cosine","dense_rank","lexical_x_cosine","kind_held","kind_missing","yes_no","entity_asked","entity_other","post","missing","absent","asks","sentence_cosine","sentence_rank"],
  weights: [5.1463,-0.1975,1.8386,1.2468,0.6166,1.3826,0.4891,0.5897,-0.8436,-0.2087,0.8001,-0.0233,-2.3759,0.7079,-0.9231,-1.2026,2.4236,0.1438],
  bias: 6.3326,
  threshold: 0.9,
};
