import { problemResponse } from '../../api.schemas.js';
import { defineRoute } from '../../http/route.js';
import { ApprovalParams, ApprovalSchema, approvalJson, DecisionSchema, RunIdParams } from './runs.schemas.js';

const TAG = 'Runs';

export const listRunApprovals = defineRoute({
  method: 'get',
  path: '/api/runs/{runId}/approvals',
  operationId: 'listRunApprovals',
  summary: 'List a run’s approvals',
  description:
    'Returns the tool calls of a run that waited or wait for a human decision (Approvals:RequiredTools), oldest first, with their status and arguments.',
  tag: TAG,
  auth: { role: 'Reader', scope: 'RunsRead' },
  params: RunIdParams,
  runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
  responses: { 200: { description: 'Approvals, oldest first', schema: ApprovalSchema.array() }, 404: problemResponse('Unknown run') },
  async handler({ params, caller }, { runs }) {
    return { status: 200, body: (await runs.listApprovals({ runId: params.runId }, { caller })).approvals.map(approvalJson) };
  },
});

export const decideRunApproval = defineRoute({
  method: 'post',
  path: '/api/runs/{runId}/approvals/{approvalId}',
  operationId: 'decideRunApproval',
  summary: 'Approve or deny a tool call',
  description:
    'Decides a pending approval; the run goes on wherever it executes, running the tool call or telling the model a person denied it. An approval already decided or expired is 409.',
  tag: TAG,
  auth: { role: 'Operator', scope: 'RunsWrite' },
  params: ApprovalParams,
  body: DecisionSchema,
  runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
  responses: {
    200: { description: 'The decided approval', schema: ApprovalSchema },
    404: problemResponse('Unknown run or approval'),
    409: problemResponse('The approval was already decided or expired'),
  },
  async handler({ params, body, caller }, { runs }) {
    const { approval } = await runs.decideApproval(
      { runId: params.runId, approvalId: params.approvalId, approved: body.approved, comment: body.comment },
      { caller },
    );
    return { status: 200, body: approvalJson(approval!) };
  },
});
