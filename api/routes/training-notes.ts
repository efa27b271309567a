import { AppError, notFound } from '../../src/errors.ts';
import { agentIsLive } from '../../src/db/transfer-rules.ts';
import {
  deleteTrainingNote, findTrainingNote, insertTrainingNote, listTrainingNotesPage, updateTrainingNote,
} from '../../src/db/training-notes.ts';
import { IdParams, PageQuery } from '../../src/schemas/common.ts';
import {
  MAX_TRAINING_NOTES, TrainingNoteCreateSchema, TrainingNoteListSchema, TrainingNoteParams, TrainingNotePatchSchema, TrainingNoteSchema,
} from '../../src/schemas/training-notes.ts';
import type { AppDeps } from '../context.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

async function assertAgent(deps: AppDeps, orgId: string, agentId: string): Promise<void> {
  if (!(await agentIsLive(deps.sql, orgId, agentId))) throw notFound('agent');
}

export const trainingNotesFamily: RouteFamily = {
  base: BASE,
  order: 140,
  tag: 'Training notes',
  description: 'Corrections the agent must always give: when a visitor asks what a note asks (in other words too), the agent answers with the note, ahead of anything from its site, citing no source.',
  routes: [
    route({
      method: 'GET', path: '/agents/:id/training-notes', operationId: 'list_training_notes', summary: 'List an agent\'s training notes, newest first',
      permissions: ['agents.read'], params: IdParams, query: PageQuery,
      responses: { 200: { description: 'A page of notes', schema: TrainingNoteListSchema } },
      async handler({ params, query, principal, deps }) {
        await assertAgent(deps, principal.orgId, params.id);
        return pageReply(await listTrainingNotesPage(deps.sql, principal.orgId, params.id, query), query);
      },
    }),
    route({
      method: 'GET', path: '/agents/:id/training-notes/:noteId', operationId: 'get_training_note', summary: 'Get a training note',
      permissions: ['agents.read'], params: TrainingNoteParams,
      responses: { 200: { description: 'The note', schema: TrainingNoteSchema } },
      async handler({ params, principal, deps }) {
        await assertAgent(deps, principal.orgId, params.id);
        const note = await findTrainingNote(deps.sql, principal.orgId, params.id, params.noteId);
        if (!note) throw notFound('training note');
        return { status: 200, body: note };
      },
    }),
    route({
      method: 'POST', path: '/agents/:id/training-notes', operationId: 'create_training_note', summary: 'Add a training note',
      description: `question up to 500 characters, answer up to 2,000. At most ${MAX_TRAINING_NOTES} notes per agent: one more is 409 \`invalid_state\`.`,
      permissions: ['agents.write'], params: IdParams, body: TrainingNoteCreateSchema,
      responses: { 201: { description: 'The new note', schema: TrainingNoteSchema }, 409: { description: '`invalid_state`: the agent holds the most notes already' } },
      async handler({ params, body, principal, deps }) {
        await assertAgent(deps, principal.orgId, params.id);
        const note = await deps.sql.begin((tx) => insertTrainingNote(tx, principal.orgId, params.id, body));
        if (note === 'limit') throw new AppError(409, 'invalid_state', `this agent already has ${MAX_TRAINING_NOTES} training notes, the most it may have: delete one first`);
        return { status: 201, body: note, headers: { Location: `${BASE}/agents/${params.id}/training-notes/${note.id}` } };
      },
    }),
    route({
      method: 'PATCH', path: '/agents/:id/training-notes/:noteId', operationId: 'update_training_note', summary: 'Change a training note',
      permissions: ['agents.write'], params: TrainingNoteParams, body: TrainingNotePatchSchema,
      responses: { 200: { description: 'The updated note', schema: TrainingNoteSchema } },
      async handler({ params, body, principal, deps }) {
        await assertAgent(deps, principal.orgId, params.id);
        const note = await updateTrainingNote(deps.sql, principal.orgId, params.id, params.noteId, body);
        if (!note) throw notFound('training note');
        return { status: 200, body: note };
      },
    }),
    route({
      method: 'DELETE', path: '/agents/:id/training-notes/:noteId', operationId: 'delete_training_note', summary: 'Delete a training note',
      permissions: ['agents.write'], params: TrainingNoteParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        await assertAgent(deps, principal.orgId, params.id);
        if (!(await deleteTrainingNote(deps.sql, principal.orgId, params.id, params.noteId))) throw notFound('training note');
        return { status: 204 };
      },
    }),
  ],
};
