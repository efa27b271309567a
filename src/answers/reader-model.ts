import type { ReaderModel } from './reader.ts';

/**
 * The reader's model. Written by `node scripts/run.mjs bench train-reader` (bench/train-reader.ts) from the
 * development sites of the answers corpus (legacy-gym, legacy-clinic, legacy-bakery, dev-fr-boulangerie, dev-plumbing, dev-salon, dev-storage, dev-vet); do not edit by hand.
 */
export const READER_MODEL: ReaderModel = {
  features: ["lexical","lexical_top","lexical_rank","fused_rank","passage_cosine","dense_rank","lexical_x_cosine","kind_held","kind_missing","yes_no","entity_asked","entity_other","post","missing","absent","asks","sentence_cosine","sentence_rank"],
  weights: [5.3534,-0.3132,2.0879,1.3088,-0.3664,1.3104,-0.3241,0.469,-0.908,-0.4356,0.5442,-0.0299,-1.93,0.7115,-0.2704,-1.1832,2.7233,0.0214],
  bias: 5.8316,
  threshold: 0.91,
};
