import { agentIsLive } from '../db/transfer-rules.ts';
import { deleteTrainingNote, findTrainingNote, insertTrainingNote, listTrainingNotesPage, updateTrainingNote } from '../db/training-notes.ts';
import type { FamilyDeps } from '../deps.ts';
import { AppError, notFound } from '../errors.ts';
import { MAX_TRAINING_NOTES, type TrainingNote, type TrainingNoteCreate } from '../schemas/training-notes.ts';

/**
 * The training notes family's use cases: an agent's notes, each read and change first checking the
 * agent is the organization's and not deleted (404 `agent`), then the note (404 `training note`).
 */
type Deps = Pick<FamilyDeps, 'sql'>;

async function assertAgent(deps: Deps, orgId: string, agentId: string): Promise<void> {
  if (!(await agentIsLive(deps.sql, orgId, agentId))) throw notFound('agent');
}

/** A page of an agent's notes, newest first. */
export async function listTrainingNotes(deps: Deps, orgId: string, agentId: string, page: { limit: number; offset: number }) {
  await assertAgent(deps, orgId, agentId);
  return listTrainingNotesPage(deps.sql, orgId, agentId, page);
}

/** One note of an agent. */
export async function getTrainingNote(deps: Deps, orgId: string, agentId: string, noteId: string): Promise<TrainingNote> {
  await assertAgent(deps, orgId, agentId);
  const note = await findTrainingNote(deps.sql, orgId, agentId, noteId);
  if (!note) throw notFound('training note');
  return note;
}

/** Adds a note; 409 `invalid_state` when the agent holds `MAX_TRAINING_NOTES` already (counted in the insert's transaction). */
export async function createTrainingNote(deps: Deps, orgId: string, agentId: string, input: TrainingNoteCreate): Promise<TrainingNote> {
  await assertAgent(deps, orgId, agentId);
  const note = await deps.sql.begin((tx) => insertTrainingNote(tx, orgId, agentId, input));
  if (note === 'limit') throw new AppError(409, 'invalid_state', `this agent already has ${MAX_TRAINING_NOTES} training notes, the most it may have: delete one first`);
  return note;
}

/** Changes a note's question and/or answer. */
export async function patchTrainingNote(deps: Deps, orgId: string, agentId: string, noteId: string, patch: Partial<TrainingNoteCreate>): Promise<TrainingNote> {
  await assertAgent(deps, orgId, agentId);
  const note = await updateTrainingNote(deps.sql, orgId, agentId, noteId, patch);
  if (!note) throw notFound('training note');
  return note;
}

/** Deletes a note. */
export async function removeTrainingNote(deps: Deps, orgId: string, agentId: string, noteId: string): Promise<void> {
  await assertAgent(deps, orgId, agentId);
  if (!(await deleteTrainingNote(deps.sql, orgId, agentId, noteId))) throw notFound('training note');
}
