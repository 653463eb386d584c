import { validationError } from '@hangar/platform';
import { z } from 'zod';
import { problemResponse } from '../../api.schemas.js';
import { defineRoute } from '../../http/route.js';
import { openEventStream } from '../../http/sse.js';
import { RunIdParams } from './runs.schemas.js';

export const streamRunEvents = defineRoute({
  method: 'get',
  path: '/api/runs/{runId}/events',
  operationId: 'streamRunEvents',
  summary: 'The run’s events as SSE: history, then live, ending after the terminal event; resumes after Last-Event-ID',
  tag: 'Runs',
  auth: { role: 'Reader', scope: 'RunsRead' },
  params: RunIdParams,
  runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
  responses: {
    200: { description: 'text/event-stream; each frame has id = seq', schema: z.string() },
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
