import { problemResponse } from '../../api.schemas.js';
import { defineRoute } from '../../http/route.js';
import { FeedbackRequestSchema, RunIdParams, ScoreParams, ScoreSchema, scoreJson } from './runs.schemas.js';

const TAG = 'Runs';

export const saveRunFeedback = defineRoute({
  method: 'post',
  path: '/api/runs/{runId}/feedback',
  operationId: 'saveRunFeedback',
  summary: 'Score a run',
  description:
    'Records a human score of a run or of one of its messages. The same author, name and target again updates the existing score instead of adding one.',
  tag: TAG,
  auth: { role: 'Operator', scope: 'RunsWrite' },
  params: RunIdParams,
  body: FeedbackRequestSchema,
  runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
  responses: { 200: { description: 'The score', schema: ScoreSchema }, 404: problemResponse('Unknown run (or another tenant’s)') },
  async handler({ params, body, caller }, { runs }) {
    const { score } = await runs.saveFeedback({ runId: params.runId, ...body }, { caller });
    return { status: 200, body: scoreJson(score) };
  },
});

export const listRunFeedback = defineRoute({
  method: 'get',
  path: '/api/runs/{runId}/feedback',
  operationId: 'listRunFeedback',
  summary: 'List a run’s scores',
  description: 'Returns the human and evaluator scores of a run. An unknown run, or one of another tenant, is 404.',
  tag: TAG,
  auth: { role: 'Reader', scope: 'RunsRead' },
  params: RunIdParams,
  runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
  responses: { 200: { description: 'Scores', schema: ScoreSchema.array() }, 404: problemResponse('Unknown run (or another tenant’s)') },
  async handler({ params, caller }, { runs }) {
    return { status: 200, body: (await runs.listFeedback({ runId: params.runId }, { caller })).scores.map(scoreJson) };
  },
});

export const deleteRunFeedback = defineRoute({
  method: 'delete',
  path: '/api/runs/{runId}/feedback/{scoreId}',
  operationId: 'deleteRunFeedback',
  summary: 'Delete a score',
  description: 'Deletes one score of a run. It is not idempotent: an unknown score is 404.',
  tag: TAG,
  auth: { role: 'Operator', scope: 'RunsWrite' },
  params: ScoreParams,
  runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
  responses: { 204: { description: 'Deleted' }, 404: problemResponse('Unknown run or score') },
  async handler({ params, caller }, { runs }) {
    await runs.deleteFeedback({ runId: params.runId, scoreId: params.scoreId }, { caller });
    return { status: 204 };
  },
});
