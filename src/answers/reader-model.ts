import type { ReaderModel } from './reader.ts';

/**
 * The reader's model. Written by `node scripts/run.mjs bench train-reader` (bench/train-reader.ts) from the
 * development sites of the answers corpus (legacy-gym, legacy-clinic, legacy-bakery, dev-fr-boulangerie, dev-plumbing, dev-salon, dev-storage, dev-trattoria-files, dev-vet); do not edit by hand.
 */
export const READER_MODEL: ReaderModel = {
  features: ["lexical","lexical_top","lexical_rank","fused_rank","passage_cosine","dense_rank","lexical_x_cosine","kind_held","kind_missing","yes_no","entity_asked","entity_other","post","missing","absent","asks","sentence_cosine","sentence_rank"],
  weights: [4.9098,-0.071,1.7057,1.3681,0.5021,1.2685,0.6701,0.605,-0.8374,-0.2219,0.5663,-0.0288,-2.3582,0.6702,-0.9235,-1.1399,2.3608,0.1866],
  bias: 6.2208,
  threshold: 0.87,
};
