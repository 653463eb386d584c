import { runStatusToProto } from '@hangar/contracts';
import { z } from 'zod';
import { pageNumber, problemResponse } from '../../api.schemas.js';
import { defineRoute } from '../../http/route.js';
import { RunIdParams, RunKindSchema, runJson, RunRecordSchema, RunStatusSchema } from './runs.schemas.js';

const TAG = 'Runs';

const optionalUuid = z.uuid().optional();

export const listRuns = defineRoute({
  method: 'get',
  path: '/api/runs',
  operationId: 'listRuns',
  summary: 'List runs',
  description:
    'Returns run records, newest first: root runs only unless includeChildren, parentRunId or rootRunId is given. Paged with skip and take (default 50, clamped to 1..200); a record never holds the conversation.',
  tag: TAG,
  auth: { role: 'Reader', scope: 'RunsRead' },
  query: z.object({
    agentName: z.string().optional(),
    status: RunStatusSchema.optional(),
    kind: RunKindSchema.optional(),
    sessionId: z.string().optional(),
    errorType: z.string().optional(),
    userId: z.string().optional(),
    label: z.string().optional().describe('`key:value`, or a bare `key` matching any value'),
    startedAfter: z.iso.datetime({ offset: true }).optional(),
    includeChildren: z
      .enum(['true', 'false'])
      .optional()
      .transform((value) => value === 'true'),
    parentRunId: optionalUuid,
    rootRunId: optionalUuid,
    skip: pageNumber(0),
    take: pageNumber(50),
  }),
  runAuthorization: { operation: 'runs.list', denial: 'forbid' },
  responses: { 200: { description: 'Run records (never the conversation)', schema: RunRecordSchema.array() } },
  async handler({ query, caller }, { runs }) {
    const { runs: found } = await runs.listRuns(
      { ...query, status: query.status === undefined ? undefined : runStatusToProto(query.status) },
      { caller },
    );
    return { status: 200, body: found.map(runJson) };
  },
});

export const getRun = defineRoute({
  method: 'get',
  path: '/api/runs/{runId}',
  operationId: 'getRun',
  summary: 'Get a run',
  description:
    'Returns a run record: status, timings, token counts and cost when a price applies, without the conversation. An unknown run, or one of another tenant, is 404.',
  tag: TAG,
  auth: { role: 'Reader', scope: 'RunsRead' },
  params: RunIdParams,
  runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
  responses: { 200: { description: 'Run record', schema: RunRecordSchema }, 404: problemResponse('Unknown run') },
  async handler({ params, caller }, { runs }) {
    return { status: 200, body: runJson((await runs.getRun({ runId: params.runId }, { caller })).run) };
  },
});

export const getRunTree = defineRoute({
  method: 'get',
  path: '/api/runs/{runId}/tree',
  operationId: 'getRunTree',
  summary: 'Get a run tree',
  description:
    'Returns every run of the tree the named run belongs to (root first, at most 200), whichever member is named. An unknown run is 404.',
  tag: TAG,
  auth: { role: 'Reader', scope: 'RunsRead' },
  params: RunIdParams,
  runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
  responses: { 200: { description: 'Run records, root first', schema: RunRecordSchema.array() }, 404: problemResponse('Unknown run') },
  async handler({ params, caller }, { runs }) {
    return { status: 200, body: (await runs.getRunTree({ runId: params.runId }, { caller })).runs.map(runJson) };
  },
});

export const cancelRun = defineRoute({
  method: 'post',
  path: '/api/runs/{runId}/cancel',
  operationId: 'cancelRun',
  summary: 'Cancel a run',
  description:
    'Requests cancellation of a run wherever it executes; a root run takes its children with it. 202 says only that cancellation was requested: read the final status with GET. 409 when no live instance executes the run (finished or orphaned).',
  tag: TAG,
  auth: { role: 'Operator', scope: 'RunsWrite' },
  params: RunIdParams,
  runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
  responses: {
    202: { description: 'Cancellation requested; read the final status with GET', schema: RunRecordSchema },
    404: problemResponse('Unknown run'),
    409: problemResponse('The run is not executing on this instance'),
  },
  async handler({ params, caller }, { runs }) {
    return { status: 202, body: runJson((await runs.cancelRun({ runId: params.runId }, { caller })).run) };
  },
});

export const getRunInput = defineRoute({
  method: 'get',
  path: '/api/runs/{runId}/input',
  operationId: 'getRunInput',
  summary: 'Get a run’s input',
  description:
    'Returns the input of a run as the run received it, when RunRecording:RecordRunInput recorded it. An unknown run, or one with no recorded input, is 404.',
  tag: TAG,
  auth: { role: 'Reader', scope: 'RunsRead' },
  params: RunIdParams,
  runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
  responses: {
    200: {
      description: 'The input as the run received it',
      schema: z.object({ runId: z.uuid(), recordedAt: z.iso.datetime(), input: z.record(z.string(), z.unknown()) }),
    },
    404: problemResponse('Unknown run, or no input was recorded'),
  },
  async handler({ params, caller }, { runs }) {
    const { input, recordedAt } = await runs.getRunInput({ runId: params.runId }, { caller });
    return { status: 200, body: { runId: params.runId, recordedAt, input } };
  },
});
