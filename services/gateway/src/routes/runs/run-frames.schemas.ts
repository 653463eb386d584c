import { QuotaThresholdNoticeSchema } from '@hangar/contracts';
import { z } from 'zod';
import { eventFrame, SequenceFrameId } from '../../http/event-frames.js';
import { CostSchema, RunStatusSchema, UsageSchema } from './runs.schemas.js';

/** The frames of the two run streams (API.md "Runs"), as `http/run-stream.ts` and `run-events.routes.ts` write them. */

const UpdateSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('text-delta'), text: z.string() }).describe('A piece of the answer’s text'),
    z
      .object({ type: z.literal('tool-call'), toolCallId: z.string(), toolName: z.string(), args: z.unknown() })
      .describe('The model called a tool'),
    z.object({ type: z.literal('tool-result'), toolCallId: z.string(), result: z.unknown() }).describe('A tool call’s result'),
    z.object({ type: z.literal('child-run'), runId: z.uuid(), agentName: z.string() }).describe('A sub-agent’s run started'),
    QuotaThresholdNoticeSchema.extend({ type: z.literal('quota-threshold') }).describe(
      'The run tree’s usage crossed one of Quotas:ThresholdPercents (with Quotas:PublishThresholdToRunStream)',
    ),
  ])
  .meta({ id: 'RunStreamUpdate' });

/** One frame of `POST /api/agents/{name}/run` answered as server-sent events. */
export const RunStreamFrameSchema = z
  .discriminatedUnion('event', [
    eventFrame(
      'RunStreamRunFrame',
      'run',
      z.object({ runId: z.uuid(), sessionId: z.string().nullable(), agentName: z.string(), status: RunStatusSchema }),
      'Always the first frame: the run that started',
    ),
    eventFrame('RunStreamUpdateFrame', 'update', UpdateSchema, 'Progress, told apart by `type`'),
    eventFrame(
      'RunStreamApprovalsFrame',
      'approvals',
      z.object({ approvals: z.array(z.object({ id: z.uuid(), toolName: z.string(), args: z.unknown() })) }),
      'Tool calls waiting for a human decision (POST /api/runs/{runId}/approvals/{approvalId}); the stream stays open',
    ),
    eventFrame(
      'RunStreamDoneFrame',
      'done',
      z.object({ runId: z.uuid(), status: RunStatusSchema, usage: UsageSchema, cost: CostSchema, output: z.object({ text: z.string() }) }),
      'The last frame of a run that completed or was canceled',
    ),
    eventFrame(
      'RunStreamErrorFrame',
      'error',
      z.object({ errorType: z.string(), message: z.string() }),
      'The last frame of a run that failed (content_blocked included) or whose stream broke off',
    ),
  ])
  .meta({
    id: 'RunStreamFrame',
    description: 'A frame of the run stream: `run` first, then `update` and `approvals`, and `done` or `error` last',
  });

/** What each run event type carries in its `data` (written by the run executor). */
const RUN_EVENT_DATA = {
  'run.started': z.object({ agentName: z.string(), agentVersion: z.number().int().nullable(), sessionId: z.string().nullable() }),
  'message.delta': z.object({ text: z.string() }),
  'message.completed': z.object({ text: z.string() }),
  'tool.invoking': z.object({ toolCallId: z.string(), toolName: z.string(), args: z.unknown() }),
  'tool.completed': z.object({ toolCallId: z.string(), toolName: z.string(), result: z.unknown() }),
  'tool.failed': z.object({ toolCallId: z.string(), toolName: z.string(), error: z.string() }),
  'child.started': z.object({ runId: z.uuid(), agentName: z.string() }),
  'child.completed': z.object({ runId: z.uuid(), status: RunStatusSchema }),
  'approval.requested': z.object({
    approvalId: z.uuid(),
    toolCallId: z.string(),
    toolName: z.string(),
    args: z.unknown(),
    expiresAt: z.iso.datetime(),
  }),
  'approval.decided': z.object({
    approvalId: z.uuid(),
    status: z.enum(['Approved', 'Denied', 'Expired']),
    decidedBy: z.string().nullable(),
    comment: z.string().nullable(),
  }),
  'run.completed': z.object({ usage: UsageSchema, cost: CostSchema }),
  'run.failed': z.object({
    errorType: z.string().nullable(),
    message: z.string().nullable(),
    usage: UsageSchema.optional(),
    cost: CostSchema.optional(),
  }),
  'run.canceled': z.object({ usage: UsageSchema, cost: CostSchema }),
};

/** `run.started` → `RunStartedEventFrame` */
const frameSchemaId = (type: string) => `${type.replace(/(^|\.)(\w)/g, (_match, _dot, letter: string) => letter.toUpperCase())}EventFrame`;

const runEventFrame = <T extends keyof typeof RUN_EVENT_DATA>(type: T) =>
  eventFrame(
    frameSchemaId(type),
    type,
    z.object({ seq: z.number().int().min(1), runId: z.uuid(), type: z.literal(type), at: z.iso.datetime(), data: RUN_EVENT_DATA[type] }),
    `A ${type} event of the run’s log`,
    { id: SequenceFrameId },
  );

/** One frame of `GET /api/runs/{runId}/events`: the event type is the frame name, its seq the frame id. */
export const RunEventFrameSchema = z
  .discriminatedUnion(
    'event',
    (Object.keys(RUN_EVENT_DATA) as (keyof typeof RUN_EVENT_DATA)[]).map(runEventFrame) as unknown as [
      ReturnType<typeof runEventFrame>,
      ...ReturnType<typeof runEventFrame>[],
    ],
  )
  .meta({
    id: 'RunEventFrame',
    description: 'A recorded event of the run: history first, then live, ending after run.completed, run.failed or run.canceled',
  });
