import { z } from 'zod';
import { problemResponse } from '../../api.schemas.js';
import { defineRoute } from '../../http/route.js';
import { RunIdParams } from './runs.schemas.js';

const RunTraceSchema = z
  .object({
    runId: z.uuid(),
    traceId: z.string().nullable().describe('The W3C trace id the run’s spans share; null when no span was kept'),
    spans: z.array(
      z.object({
        spanId: z.string(),
        parentSpanId: z.string().nullable(),
        name: z.string().describe('invoke_agent {agent} for the run, ai.streamText… for model calls, ai.toolCall for tools, approval.wait'),
        startTime: z.iso.datetime(),
        endTime: z.iso.datetime(),
        status: z.enum(['Unset', 'Ok', 'Error']),
        attributes: z
          .record(z.string(), z.unknown())
          .describe('GenAI semantic conventions (gen_ai.request.model, gen_ai.usage.*) and hangar.*'),
      }),
    ),
  })
  .meta({ id: 'RunTrace' });

export const getRunTrace = defineRoute({
  method: 'get',
  path: '/api/runs/{runId}/trace',
  operationId: 'getRunTrace',
  summary: 'Get a run trace',
  description:
    'Returns the spans kept for a run (Observability:PersistSpans): its run span, model calls, tool calls, approval waits and the calls it made, in start order. Every failed run is kept with AlwaysPersistFailures, a share SuccessSampleRatio of the others; a run not kept has no spans. An unknown run is 404.',
  tag: 'Runs',
  auth: { role: 'Reader', scope: 'RunsRead' },
  params: RunIdParams,
  runAuthorization: { operation: 'runs.read', denial: 'hide', resourceId: (params) => params.runId },
  responses: { 200: { description: 'The run’s trace', schema: RunTraceSchema }, 404: problemResponse('Unknown run') },
  async handler({ params, caller }, { runs }) {
    const { spans } = await runs.getRunTrace({ runId: params.runId }, { caller });
    return {
      status: 200,
      body: {
        runId: params.runId,
        traceId: spans[0]?.traceId ?? null,
        spans: spans.map((span) => ({
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? null,
          name: span.name,
          startTime: span.startTime,
          endTime: span.endTime,
          status: span.status,
          attributes: span.attributes ?? {},
        })),
      },
    };
  },
});
