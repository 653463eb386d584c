import { runStatusFromProto } from '@hangar/contracts';
import { z } from 'zod';
import { AgentNameParams, locationHeader, problemResponse } from '../../api.schemas.js';
import { defineRoute } from '../../http/route.js';
import { runResponseBody, startedRun, streamRunUpdates } from '../../http/run-stream.js';
import { streamUIMessages, UI_MESSAGE_STREAM_PROTOCOL } from '../../http/ui-message-stream.js';
import { RunStreamFrameSchema } from './run-frames.schemas.js';
import { RunRequestSchema, startRunRequest, RunResponseSchema } from './runs.schemas.js';

export const runAgent = defineRoute({
  method: 'post',
  path: '/api/agents/{name}/run',
  operationId: 'runAgent',
  summary: 'Run an agent',
  description:
    'Starts a run and streams it as server-sent events (frames run, update, approvals, done, error). With `?protocol=ui-message-stream` the stream speaks the Vercel AI SDK UI message stream protocol instead, and the body may be the one `useChat` sends. With Idempotency-Key the answer is one JSON run response instead; with `Prefer: respond-async` the run is queued and 202 names it in Location. Refusals (quota 429, unknown agent 404, a foreign session 403, context_window_exceeded 400) come before the stream opens, as problem+json.',
  tag: 'Agents',
  auth: { role: 'Operator', scope: 'RunsWrite' },
  params: AgentNameParams,
  query: z.object({
    protocol: z
      .literal(UI_MESSAGE_STREAM_PROTOCOL)
      .optional()
      .describe('ui-message-stream: stream in the Vercel AI SDK UI message stream protocol (v1), for useChat, instead of Hangar’s frames'),
  }),
  body: RunRequestSchema,
  runAuthorization: { operation: 'runs.start', denial: 'forbid', resourceId: (params) => params.name },
  documentedHeaders: z.object({
    Prefer: z
      .string()
      .optional()
      .describe(
        'respond-async queues the run and answers 202 at once (Preference-Applied: respond-async); the run executes in the background',
      ),
  }),
  responses: {
    200: {
      description:
        'Server-sent events of the run (the default); with Idempotency-Key, the JSON run response once the run ended (a replay carries Idempotent-Replayed: true)',
      eventStream: RunStreamFrameSchema,
      schema: RunResponseSchema,
      headers: {
        'x-vercel-ai-ui-message-stream': {
          description: 'v1, when protocol=ui-message-stream: data-only frames of UI message chunks ending with [DONE]',
        },
      },
    },
    202: {
      description: 'Queued (Prefer: respond-async): follow the run at statusUrl, its events at eventsUrl',
      schema: z
        .object({ runId: z.uuid(), status: z.literal('Queued'), statusUrl: z.string(), eventsUrl: z.string() })
        .meta({ id: 'AcceptedRun' }),
      headers: {
        Location: locationHeader('The queued run, {prefix}/api/runs/{runId}'),
        'Preference-Applied': { description: 'respond-async: the Prefer header was honoured', schema: z.literal('respond-async') },
      },
    },
    403: problemResponse('Denied, or another user’s session (session ownership)'),
    404: problemResponse('Unknown agent'),
    429: problemResponse('A quota rule is used up: quota, limit, used, resetsAt; Retry-After'),
    422: problemResponse('Content guard blocked the run (JSON mode)'),
    501: problemResponse('A factory agent (not runnable yet), or queued runs switched off'),
    503: problemResponse('No model provider could answer (JSON mode)'),
  },
  async handler({ params, query, body, caller, request, response, signal }, { runs, config, runNotices }) {
    if (/\brespond-async\b/i.test(request.get('prefer') ?? '')) {
      const { run: queued } = await runs.enqueueRun({ run: startRunRequest(params.name, body, false) }, { caller });
      const statusUrl = `${config.Hangar.Api.Prefix}/api/runs/${queued!.id}`;
      return {
        status: 202,
        body: { runId: queued!.id, status: runStatusFromProto(queued!.status), statusUrl, eventsUrl: `${statusUrl}/events` },
        headers: { Location: statusUrl, 'Preference-Applied': 'respond-async' },
      };
    }
    const oneResponse = request.get('idempotency-key') !== undefined;
    const updates = runs.startRun(startRunRequest(params.name, body, !oneResponse), { caller, signal })[Symbol.asyncIterator]();
    try {
      // Refusals arrive before the run starts: plain HTTP errors.
      const run = await startedRun(updates);
      if (oneResponse) return { status: 200, body: await runResponseBody(updates) };
      if (query.protocol === UI_MESSAGE_STREAM_PROTOCOL) await streamUIMessages(response, run, updates, signal, runNotices);
      else await streamRunUpdates(response, run, updates, signal, runNotices);
      return { status: 200, sent: true };
    } catch (error) {
      // The client left (before its run started, or while waiting for its one answer; the run ends Canceled): nobody to answer.
      if (signal.aborted) return { status: 200, sent: true };
      throw error;
    }
  },
});
