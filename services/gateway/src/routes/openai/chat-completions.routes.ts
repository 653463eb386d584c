import { classifyError } from '@hangar/platform';
import { z } from 'zod';
import { defineRoute } from '../../http/route.js';
import { openEventStream } from '../../http/sse.js';
import { runResponseBody } from '../../http/run-stream.js';
import { AGENT_SETTINGS, checkRequestFields, METADATA, turnsOfChatMessages } from './openai-requests.js';
import { authorizeStart, chatUsage, epochSeconds, RUN_HEADERS, startCompatibilityRun, type StartedRun } from './openai-runs.js';
import { openAIError } from '../../http/openai-error.js';
import { ChatCompletionFrameSchema, ChatCompletionSchema, OpenAIErrorSchema, openAIErrorResponse } from './openai.schemas.js';

const TAG = 'OpenAI compatible';

/** `POST /v1/chat/completions` on a stored agent (API.md "OpenAI-compatible surface"). */

const ChatCompletionRequestSchema = z
  .object({
    model: z.string().min(1).describe('The agent to run'),
    messages: z.array(z.unknown()).describe('The conversation: system/developer, user and assistant text turns'),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_usage: z.boolean().nullish() }).loose().nullish(),
    user: z.string().max(256).nullish(),
    metadata: METADATA.nullable(),
    store: z.boolean().nullish(),
    n: z.literal(1).nullish().describe('Only one choice is produced'),
  })
  .loose()
  .meta({ id: 'ChatCompletionRequest' });

const FIELDS = {
  handled: ['model', 'messages', 'stream', 'stream_options', 'user', 'metadata', 'n'],
  ignored: [
    ...AGENT_SETTINGS,
    'store',
    'max_tokens',
    'max_completion_tokens',
    'stop',
    'presence_penalty',
    'frequency_penalty',
    'logit_bias',
    'logprobs',
    'seed',
    'prediction',
  ],
  refused: {
    tools: 'tools come from the agent',
    tool_choice: 'tools come from the agent',
    functions: 'tools come from the agent',
    function_call: 'tools come from the agent',
    parallel_tool_calls: 'tools come from the agent',
    response_format: 'the output format comes from the agent',
    modalities: 'only text output is produced',
    audio: 'only text output is produced',
    web_search_options: 'tools come from the agent',
  },
} as const;

const completionId = (runId: string) => `chatcmpl-${runId}`;

/** Chunks in OpenAI's wire format until the run ends; the caller's connection decides when it stops. */
async function streamChunks(started: StartedRun, model: string, includeUsage: boolean, stream: ReturnType<typeof openEventStream>) {
  const base = { id: completionId(started.run.id), object: 'chat.completion.chunk', created: epochSeconds(started.run.startedAt), model };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    ...base,
    system_fingerprint: null,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...(includeUsage && { usage: null }),
  });
  stream.data(chunk({ role: 'assistant', content: '' }));
  try {
    for (let next = await started.updates.next(); !next.done; next = await started.updates.next()) {
      const update = next.value.update;
      if (update?.$case === 'textDelta') stream.data(chunk({ content: update.value.text }));
      else if (update?.$case === 'failed' && update.value.errorType !== 'content_blocked') {
        stream.data(openAIError(503, update.value.errorType, update.value.message));
        return;
      } else if (update?.$case === 'failed' || update?.$case === 'finished') {
        // A guard that stops the answer is OpenAI's content_filter finish, with usage and [DONE] like any other.
        stream.data(chunk({}, update.$case === 'failed' ? 'content_filter' : 'stop'));
        if (includeUsage) stream.data({ ...base, system_fingerprint: null, choices: [], usage: chatUsage(update.value.run?.usage) });
        stream.data('[DONE]');
        return;
      }
    }
  } catch (error) {
    if (!started.signal.aborted)
      stream.data(openAIError(503, classifyError(error)?.errorType ?? 'internal_error', 'the run stream broke off'));
  }
}

export const chatCompletionRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/chat/completions',
    operationId: 'createChatCompletion',
    summary: 'OpenAI Chat Completions on a stored agent (`model` names the agent); a recorded run of kind Compatibility',
    description:
      "Runs the agent named by `model` on `messages` (text turns; tools come from the agent) and answers in OpenAI's chat.completion shape, or with `stream: true` as chat.completion.chunk frames ending with `[DONE]` (usage last with `stream_options.include_usage`). Each call is a recorded run of kind Compatibility with the native run route's governance; X-Hangar-Run-Id names it, X-Hangar-Ignored-Parameters the sampling settings left to the agent.",
    errorBody: OpenAIErrorSchema,
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    body: ChatCompletionRequestSchema,
    responses: {
      200: {
        description: 'A chat.completion; with stream: true, chat.completion.chunk frames ending with data: [DONE]',
        schema: ChatCompletionSchema,
        eventStream: ChatCompletionFrameSchema,
        headers: RUN_HEADERS,
      },
      404: openAIErrorResponse('Unknown agent: code model_not_found'),
      429: openAIErrorResponse('A quota rule is used up (rate_limit_error)'),
      422: openAIErrorResponse('Content guard blocked the run'),
      503: openAIErrorResponse('No model provider could answer'),
    },
    async handler({ body, caller, response, signal }, context) {
      const ignored = checkRequestFields(body, FIELDS);
      const messages = turnsOfChatMessages(body.messages);
      const stream = body.stream === true;
      await authorizeStart(context, caller, body.model);
      const clientMetadata = {
        api: 'chat.completions',
        ...(body.user && { user: body.user }),
        ...(body.metadata && { metadata: body.metadata }),
      };
      try {
        const started = await startCompatibilityRun(
          { agentName: body.model, messages, isStreaming: stream, clientMetadata },
          caller,
          signal,
          context,
        );
        const headers: Record<string, string> = { 'X-Hangar-Run-Id': started.run.id };
        if (ignored.length) headers['X-Hangar-Ignored-Parameters'] = ignored.join(', ');
        if (stream) {
          const events = openEventStream(response, headers);
          await streamChunks(started, body.model, body.stream_options?.include_usage === true, events);
          events.end();
          return { status: 200, sent: true };
        }
        const outcome = await runResponseBody(started.updates);
        return {
          status: 200,
          headers,
          body: {
            id: completionId(started.run.id),
            object: 'chat.completion',
            created: epochSeconds(started.run.startedAt),
            model: body.model,
            system_fingerprint: null,
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: outcome.output.text, refusal: null, annotations: [] },
                logprobs: null,
                finish_reason: 'stop',
              },
            ],
            usage: chatUsage(outcome.usage),
          },
        };
      } catch (error) {
        // The client left (before its run started, or while waiting for its one answer; the run ends Canceled): nobody to answer.
        if (signal.aborted) return { status: 200, sent: true };
        throw error;
      }
    },
  }),
];
