import type { TranscriptMessage } from './types.ts';
import { fold } from '../answers/text.ts';

/** Recognising what the visitor said (all on folded text), and who said it. */

export const HANDOFF_REQUEST = /\b(human|real person|a person|live agent|real agent|an agent|representative|operator|(talk|speak|chat) (to|with) (a|an|someone|somebody|your|the|sales|support|staff|team)|humain|conseiller|conseillere|quelqu'un|une personne|un agent|parler a)\b/;
/** An agent's reply offering to put the visitor in touch with a person. */
export const HANDOFF_OFFER = /(connect(ing)? you|transfer(ring)? you|put you in touch|someone from our team|member of our team|mettre en relation|mets en relation|membre de notre equipe)/;
export const GREETING_ONLY = /^(hi|hello|hey|hiya|good (morning|afternoon|evening)|bonjour|bonsoir|salut|coucou)( there)?[\s!.,]*$/;
export const THANKS = /^(thanks?|thank you|thx|ty|cheers|merci)\b/;
export const GOODBYE = /^(bye|goodbye|good bye|see you|that'?s all|au revoir|a bientot|bonne journee)\b/;
export const QUESTION_START = /^(what|whats|how|when|where|why|who|which|can|could|do|does|did|is|are|will|would|should|may|tell me|explain|quel|quelle|quels|quelles|comment|combien|ou|quand|pourquoi|qui|est-ce|est ce|pouvez|puis-je|avez|faites|y a-t-il)\b/;
export const BOOKING = /\b(book|booking|demo|demos|demonstration|schedule|appointment|meeting|call ?back|trial|reserve|reservation|rendez-vous|rdv|demonstration|reserver|planifier|essai)\b/;
export const AFFIRMATIVE = /^(yes|yeah|yep|yup|sure|ok|okay|please|of course|absolutely|definitely|correct|right|indeed|oui|ouais|bien sur|d'accord|absolument|volontiers|exact|tout a fait|avec plaisir)\b/;
export const NEGATIVE = /^(no|nope|nah|not really|never|no thanks|non|pas vraiment|jamais|non merci)\b/;
export const DECLINE_FIELD = /^(no|nope|nah|i'?d rather not|rather not|i prefer not|prefer not|skip|pass|no thanks|non|je prefere pas|je prefere ne pas|pas question|non merci)\b/;

export function isQuestion(text: string): boolean {
  const f = fold(text).trim();
  return f.includes('?') || QUESTION_START.test(f) || /\b(i (want|need|would like) to know|i'?m looking for|i am looking for|je cherche|je voudrais savoir|j'aimerais savoir)\b/.test(f);
}

export const agentSide = (m: TranscriptMessage) => m.role === 'agent' || m.role === 'human_agent';
export const visitorSide = (m: TranscriptMessage) => m.role === 'visitor' || m.role === 'caller';

