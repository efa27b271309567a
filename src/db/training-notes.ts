import { listPage, patchFields, type Db } from './index.ts';
import { newId } from '../ids.ts';
import { MAX_TRAINING_NOTES, TrainingNotePatchSchema, type TrainingNote, type TrainingNoteCreate } from '../schemas/training-notes.ts';

interface NoteRow { id: string; question: string; answer: string; created_at: Date; updated_at: Date }

const COLUMNS = ['id', 'question', 'answer', 'created_at', 'updated_at'];

const toNote = (row: NoteRow): TrainingNote => ({
  id: row.id, question: row.question, answer: row.answer, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
});

/**
 * A new note, or 'limit' when the agent already holds MAX_TRAINING_NOTES. The agent row is
 * locked, so two creates at once cannot both pass the count.
 */
export async function insertTrainingNote(db: Db, orgId: string, agentId: string, input: TrainingNoteCreate): Promise<TrainingNote | 'limit'> {
  await db`select id from agents where id = ${agentId} and org_id = ${orgId} for update`;
  const [count] = await db<{ n: number }[]>`select count(*)::int as n from training_notes where agent_id = ${agentId}`;
  if (count!.n >= MAX_TRAINING_NOTES) return 'limit';
  const [row] = await db<NoteRow[]>`
    insert into training_notes (id, org_id, agent_id, question, answer)
    values (${newId()}, ${orgId}, ${agentId}, ${input.question}, ${input.answer})
    returning ${db(COLUMNS)}`;
  return toNote(row!);
}

export async function findTrainingNote(db: Db, orgId: string, agentId: string, id: string): Promise<TrainingNote | null> {
  const [row] = await db<NoteRow[]>`select ${db(COLUMNS)} from training_notes where id = ${id} and agent_id = ${agentId} and org_id = ${orgId}`;
  return row ? toNote(row) : null;
}

export async function listTrainingNotesPage(db: Db, orgId: string, agentId: string, q: { limit: number; offset: number }): Promise<{ data: TrainingNote[]; total: number }> {
  return listPage(db, {
    ...q, columns: db(COLUMNS), from: db`from training_notes where agent_id = ${agentId} and org_id = ${orgId}`, order: db`created_at desc, id desc`,
  }, toNote);
}

/** Every note of the agent, oldest first: what the runtime matches questions against, and what export and clone copy. */
export async function listTrainingNotes(db: Db, agentId: string): Promise<TrainingNote[]> {
  const rows = await db<NoteRow[]>`select ${db(COLUMNS)} from training_notes where agent_id = ${agentId} order by created_at, id`;
  return rows.map(toNote);
}

export async function updateTrainingNote(db: Db, orgId: string, agentId: string, id: string, patch: Partial<TrainingNoteCreate>): Promise<TrainingNote | null> {
  const fields = patchFields(TrainingNotePatchSchema, patch);
  if (Object.keys(fields).length === 0) return findTrainingNote(db, orgId, agentId, id);
  const [row] = await db<NoteRow[]>`
    update training_notes set ${db(fields)}, updated_at = now()
    where id = ${id} and agent_id = ${agentId} and org_id = ${orgId} returning ${db(COLUMNS)}`;
  return row ? toNote(row) : null;
}

export async function deleteTrainingNote(db: Db, orgId: string, agentId: string, id: string): Promise<boolean> {
  const rows = await db`delete from training_notes where id = ${id} and agent_id = ${agentId} and org_id = ${orgId} returning id`;
  return rows.length > 0;
}

/** Copies notes onto an agent (clone, promote, import), keeping their order; at most MAX_TRAINING_NOTES. */
export async function insertTrainingNotes(db: Db, orgId: string, agentId: string, notes: { question: string; answer: string }[]): Promise<void> {
  const rows = notes.slice(0, MAX_TRAINING_NOTES).map((n, i) => ({
    id: newId(), org_id: orgId, agent_id: agentId, question: n.question, answer: n.answer,
    // Distinct creation times keep the order "oldest first" that listTrainingNotes reads.
    created_at: new Date(Date.now() + i), updated_at: new Date(Date.now() + i),
  }));
  if (rows.length) await db`insert into training_notes ${db(rows)}`;
}

export async function deleteTrainingNotesOfAgent(db: Db, agentId: string): Promise<void> {
  await db`delete from training_notes where agent_id = ${agentId}`;
}
