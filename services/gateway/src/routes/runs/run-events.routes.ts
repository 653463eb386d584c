import { validationError } from '@hangar/platform';
import { z } from 'zod';
import { problemResponse } from '../../api.schemas.js';
import { defineRoute } from '../../http/route.js';
import { openEventStream } from '../../http/sse.js';
import { RunEventFrameSchema } from './run-frames.schemas.js';
import { RunIdParams } from './runs.schemas.js';

export const streamRunEvents = defineRoute({
  method: 'get',
  path: '/api/runs/{runId}/events',
  operationId: 'streamRunEvents',
  summary: 'Stream a run’s events',
  description:
    'Streams the run’s recorded events as server-sent events: the history first, then live ones, ending after the terminal event (run.completed, run.failed or run.canceled). Each frame’s id is the event’s seq; send the last one back as Last-Event-ID to resume after it.',
  tag: 'Runs',
  auth: { role: 'Reader', scope: 'RunsRead' },
  params: RunIdParams,
  runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
  documentedHeaders: z.object({
    'Last-Event-ID': z
      .string()
      .regex(/^\d{1,9}$/)
      .optional()
      .describe('The seq of the last event received: the stream resumes after it (a browser EventSource sends it when it reconnects)'),
  }),
  responses: {
    200: { description: 'Server-sent events of the run; each frame’s id is the event’s seq', eventStream: RunEventFrameSchema },
    404: problemResponse('Unknown run'),
  },
  async handler({ params, caller, request, response }, { runs, runEvents }) {
    const lastEventId = request.get('last-event-id');
    if (lastEventId !== undefined && !/^\d{1,9}$/.test(lastEventId)) {
      throw validationError('Last-Event-ID must be the sequence number of an event', [
        { path: 'Last-Event-ID', message: 'must be a non-negative integer' },
      ]);
    }
    await runs.getRun({ runId: params.runId }, { caller }); // 404 before the stream opens
    const abort = new AbortController();
    response.once('close', () => abort.abort());
    const stream = openEventStream(response);
    try {
      for await (const event of runEvents.follow(caller, params.runId, Number(lastEventId ?? 0), abort.signal)) {
        stream.send(event.type, { seq: event.seq, runId: event.runId, type: event.type, at: event.at, data: event.data ?? {} }, event.seq);
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    }
    stream.end();
    return { status: 200, sent: true };
  },
});
