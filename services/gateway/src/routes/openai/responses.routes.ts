import type { runPb } from '@hangar/contracts';
import { HangarError, validationError } from '@hangar/platform';
import { z } from 'zod';
import { defineRoute } from '../../http/route.js';
import { runResponseBody } from '../../http/run-stream.js';
import { openEventStream } from '../../http/sse.js';
import { AGENT_SETTINGS, checkRequestFields, METADATA, turnsOfResponseInput } from './openai-requests.js';
import { authorizeStart, RUN_HEADERS, startCompatibilityRun } from './openai-runs.js';
import {
  answerOfRun,
  notFoundAsUndefined,
  placeOfTurn,
  readableRun,
  readableSession,
  resolveReferences,
  responseNotFound,
} from './response-sessions.js';
import { responseObject, responseStatusOf, runIdOfResponse, streamResponseEvents, type ResponseRequestEcho } from './response-objects.js';
import { ResponseSchema, ResponseStreamFrameSchema, OpenAIErrorSchema, openAIErrorResponse } from './openai.schemas.js';

const TAG = 'OpenAI compatible';

/** `POST /v1/responses` and `GET /v1/responses/{id}` on stored agents; a stored response lives in a session. */

const ResponseRequestSchema = z
  .object({
    model: z.string().min(1).describe('The agent to run'),
    input: z.union([z.string(), z.array(z.unknown())]).describe('A user message, or message items'),
    instructions: z.string().max(1_000_000).nullish().describe('Added after the agent’s own instructions, for this response only'),
    previous_response_id: z
      .string()
      .nullish()
      .describe('Continue from a stored response (its session; branched when it is not the latest turn)'),
    conversation: z
      .union([z.string(), z.object({ id: z.string() })])
      .nullish()
      .describe('Continue a conversation (a Hangar session)'),
    store: z.boolean().nullish().describe('Default true: keep the turn in a session so previous_response_id can continue it'),
    stream: z.boolean().nullish(),
    metadata: METADATA.nullable(),
    user: z.string().max(256).nullish(),
    text: z
      .object({ format: z.object({ type: z.string() }).loose().optional() })
      .loose()
      .nullish(),
  })
  .loose()
  .meta({ id: 'CreateResponseRequest' });

type ResponseRequest = z.infer<typeof ResponseRequestSchema>;

const FIELDS = {
  handled: ['model', 'input', 'instructions', 'previous_response_id', 'conversation', 'store', 'stream', 'metadata', 'user', 'text'],
  ignored: [...AGENT_SETTINGS, 'max_output_tokens', 'truncation', 'include', 'max_tool_calls', 'stream_options', 'prompt_cache_options'],
  refused: {
    tools: 'tools come from the agent',
    tool_choice: 'tools come from the agent',
    parallel_tool_calls: 'tools come from the agent',
    prompt: 'stored prompts are not supported: the agent holds the instructions',
    background: 'use Prefer: respond-async on POST /api/agents/{name}/run for queued runs',
  },
} as const;

/** What a response echoes of its request, recorded with its run's input for GET. */
const echoOf = (body: ResponseRequest): ResponseRequestEcho => ({
  model: body.model,
  instructions: body.instructions ?? null,
  previousResponseId: body.previous_response_id ?? null,
  conversationId: conversationIdOf(body) ?? null,
  store: body.store !== false,
  metadata: body.metadata ?? {},
  user: body.user ?? null,
});

const conversationIdOf = (body: ResponseRequest) =>
  body.conversation ? (typeof body.conversation === 'string' ? body.conversation : body.conversation.id) : undefined;

/** The recorded echo of a response (its run's input), or what the run record alone tells. */
function recordedEcho(run: runPb.RunRecord, input: Record<string, any> | undefined): ResponseRequestEcho {
  const client = input?.clientMetadata ?? {};
  return {
    model: run.agentName,
    instructions: input?.instructions ?? null,
    previousResponseId: client.previousResponseId ?? null,
    conversationId: client.conversationId ?? null,
    store: client.store !== false,
    metadata: client.metadata ?? {},
    user: client.user ?? null,
  };
}

/** `text` is handled for its format; its other settings (verbosity) are the agent's, and reported as ignored. */
const ignoredTextSettings = (body: ResponseRequest) =>
  Object.keys(body.text ?? {})
    .filter((key) => key !== 'format' && body.text![key] !== undefined && body.text![key] !== null)
    .map((key) => `text.${key}`);

export const responseRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/responses',
    operationId: 'createResponse',
    summary: 'OpenAI Responses on a stored agent: a recorded run of kind Compatibility, continued by previous_response_id or conversation',
    description:
      "Runs the agent named by `model` on `input` and answers in OpenAI's Responses shape, or with `stream: true` as Responses streaming events. A stored response (the default) keeps its turn in a session that `previous_response_id` continues (branching when it is not the latest turn); `conversation` runs in an existing conversation.",
    errorBody: OpenAIErrorSchema,
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    body: ResponseRequestSchema,
    responses: {
      200: {
        description: 'A response object; with stream: true, Responses streaming events',
        schema: ResponseSchema,
        eventStream: ResponseStreamFrameSchema,
        headers: RUN_HEADERS,
      },
      404: openAIErrorResponse('Unknown agent (model_not_found), previous response or conversation'),
      429: openAIErrorResponse('A quota rule is used up (rate_limit_error)'),
      422: openAIErrorResponse('Content guard blocked the run'),
      503: openAIErrorResponse('No model provider could answer'),
    },
    async handler({ body, caller, response, signal }, context) {
      const ignored = [...checkRequestFields(body, FIELDS), ...ignoredTextSettings(body)];
      if (body.previous_response_id && body.conversation)
        throw validationError('give previous_response_id or conversation, not both', [
          { path: 'conversation', message: 'conflicts with previous_response_id' },
        ]);
      if (body.text?.format && body.text.format.type !== 'text')
        throw validationError('the output format comes from the agent', [{ path: 'text.format', message: 'only type text is supported' }]);
      const conversationId = conversationIdOf(body);
      if (conversationId !== undefined && !context.config.Hangar.Api.MapOpenAIConversations)
        throw new HangarError('notFound', `Conversation with id '${conversationId}' not found.`, {
          errors: [{ path: 'conversation', message: 'conversations are not mapped (MapOpenAIConversations)' }],
        });
      const input = turnsOfResponseInput(body.input);
      const echo = echoOf(body);
      // Asked first: a refused start must leave nothing behind (no branched session).
      await authorizeStart(context, caller, body.model);
      const turns = await resolveReferences(input, caller, context);
      const place = await placeOfTurn(
        { conversationId, previousResponseId: body.previous_response_id ?? undefined, store: echo.store },
        caller,
        context,
      );
      const clientMetadata = {
        api: 'responses',
        store: echo.store,
        ...(echo.previousResponseId && { previousResponseId: echo.previousResponseId }),
        ...(echo.conversationId && { conversationId: echo.conversationId }),
        ...(body.metadata && { metadata: body.metadata }),
        ...(body.user && { user: body.user }),
      };
      try {
        const started = await startCompatibilityRun(
          {
            agentName: body.model,
            messages: [...place.history, ...turns],
            sessionId: place.sessionId,
            instructions: body.instructions ?? undefined,
            isStreaming: body.stream === true,
            clientMetadata,
          },
          caller,
          signal,
          context,
        );
        const headers: Record<string, string> = { 'X-Hangar-Run-Id': started.run.id };
        if (ignored.length) headers['X-Hangar-Ignored-Parameters'] = ignored.join(', ');
        if (body.stream) {
          const events = openEventStream(response, headers);
          await streamResponseEvents(started, echo, events);
          events.end();
          return { status: 200, sent: true };
        }
        const outcome = await runResponseBody(started.updates);
        return {
          status: 200,
          headers,
          body: responseObject(started.run, echo, {
            status: outcome.status === 'Canceled' ? 'cancelled' : 'completed',
            text: outcome.output.text,
            usage: outcome.usage,
          }),
        };
      } catch (error) {
        // The client left (before its run started, or while waiting for its one answer; the run ends Canceled): nobody to answer.
        if (signal.aborted) return { status: 200, sent: true };
        throw error;
      }
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/responses/{responseId}',
    operationId: 'getResponse',
    summary: 'A response made by POST /v1/responses (stored ones only), with its output once its run has ended',
    description:
      'A stored response made by POST /v1/responses, with its output once its run has ended; a chat completion or a `store: false` response is 404.',
    errorBody: OpenAIErrorSchema,
    tag: TAG,
    auth: { role: 'Reader', scope: 'RunsRead' },
    params: z.object({ responseId: z.string().describe('resp_ followed by the run id’s 32 hex digits') }),
    runAuthorization: {
      operation: 'runs.read',
      denial: 'hide',
      resourceId: (params) => runIdOfResponse(params.responseId) ?? params.responseId,
    },
    responses: {
      200: { description: 'The response object', schema: ResponseSchema },
      404: openAIErrorResponse('No stored response has this id'),
    },
    async handler({ params, caller }, context) {
      const runId = runIdOfResponse(params.responseId);
      const run = runId ? await readableRun(context, caller, runId) : undefined;
      // A stored response always has a session (a chat completion and a store: false response have none), one the caller may read.
      const stored = run?.kind === 'Compatibility' && run.sessionId && (await readableSession(context, caller, run.sessionId));
      if (!run || !stored) throw responseNotFound(params.responseId);
      const input = await context.runs.getRunInput({ runId: run.id }, { caller }).then(({ input }) => input, notFoundAsUndefined);
      if (input && input.clientMetadata?.api !== 'responses') throw responseNotFound(params.responseId);
      const status = responseStatusOf(run, run.errorType);
      const text = status !== 'in_progress' ? await answerOfRun(context, caller, run) : null;
      const error = run.errorType ? { code: run.errorType, message: run.errorMessage ?? '' } : undefined;
      return { status: 200, body: responseObject(run, recordedEcho(run, input), { status, text, usage: run.usage, error }) };
    },
  }),
];
