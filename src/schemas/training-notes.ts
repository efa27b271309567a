import { Type, type Static } from '@sinclair/typebox';
import { ListEnvelope, Timestamp, Uuid } from './common.ts';

/** At most this many notes per agent (contract: Agent sub-resources). */
export const MAX_TRAINING_NOTES = 500;

const Question = Type.String({ minLength: 1, maxLength: 500, pattern: '\\S', description: 'What a visitor asks, in any wording: 1 to 500 characters' });
const Answer = Type.String({ minLength: 1, maxLength: 2000, pattern: '\\S', description: 'The answer the agent gives, ahead of anything from the site: 1 to 2,000 characters' });

/** A correction the agent must always give: when a visitor asks what `question` asks (in other words too), it answers `answer`. */
export const TrainingNoteSchema = Type.Object({
  id: Uuid,
  question: Type.String(),
  answer: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'TrainingNote', additionalProperties: false, description: 'A question and the answer the agent gives to it, ahead of its site' });
export type TrainingNote = Static<typeof TrainingNoteSchema>;

export const TrainingNoteCreateSchema = Type.Object({ question: Question, answer: Answer }, { $id: 'TrainingNoteCreate', additionalProperties: false });
export type TrainingNoteCreate = Static<typeof TrainingNoteCreateSchema>;

export const TrainingNotePatchSchema = Type.Object({
  question: Type.Optional(Question),
  answer: Type.Optional(Answer),
}, { $id: 'TrainingNotePatch', additionalProperties: false, description: 'Any subset of the fields; `{}` changes nothing' });

export const TrainingNoteListSchema = ListEnvelope(TrainingNoteSchema, 'TrainingNoteList');

export const TrainingNoteParams = Type.Object({ id: Uuid, noteId: Uuid }, { additionalProperties: false });
