import { z } from 'zod';

/** OpenAI's answer shapes as the `/v1` routes send them, for the OpenAPI document. */

export const OpenAIErrorSchema = z
  .object({
    error: z.object({
      message: z.string(),
      type: z.string().describe('invalid_request_error, authentication_error, permission_error, rate_limit_error or server_error'),
      code: z.string().describe('The Hangar errorType (model_not_found for an unknown agent)'),
      param: z.string().nullable(),
    }),
  })
  .meta({ id: 'OpenAIError' });

/** An error answer of a `/v1` route, in OpenAI's body. */
export const openAIErrorResponse = (description: string) => ({ description, schema: OpenAIErrorSchema });

const ChatUsageSchema = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  prompt_tokens_details: z.object({ cached_tokens: z.number().int() }),
  completion_tokens_details: z.object({ reasoning_tokens: z.number().int() }),
});

export const ChatCompletionSchema = z
  .object({
    id: z.string().describe('chatcmpl- followed by the run id'),
    object: z.literal('chat.completion'),
    created: z.number().int(),
    model: z.string(),
    system_fingerprint: z.null(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({ role: z.literal('assistant'), content: z.string(), refusal: z.null(), annotations: z.array(z.unknown()) }),
        logprobs: z.null(),
        finish_reason: z.enum(['stop', 'content_filter']),
      }),
    ),
    usage: ChatUsageSchema,
  })
  .meta({ id: 'ChatCompletion' });

export const ChatCompletionChunkSchema = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion.chunk'),
    created: z.number().int(),
    model: z.string(),
    system_fingerprint: z.null(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        delta: z.object({ role: z.literal('assistant').optional(), content: z.string().optional() }),
        logprobs: z.null(),
        finish_reason: z.enum(['stop', 'content_filter']).nullable(),
      }),
    ),
    usage: ChatUsageSchema.nullish().describe(
      'With stream_options.include_usage: null on each chunk, the counts on a last chunk with no choices',
    ),
  })
  .meta({ id: 'ChatCompletionChunk' });

export const ChatCompletionFrameSchema = z
  .object({ data: z.union([ChatCompletionChunkSchema, z.literal('[DONE]')]) })
  .meta({ id: 'ChatCompletionFrame', description: 'A data-only frame: a chunk, or [DONE] after the last one' });

const OutputTextSchema = z.object({
  type: z.literal('output_text'),
  text: z.string(),
  annotations: z.array(z.unknown()),
  logprobs: z.array(z.unknown()),
});

export const ResponseSchema = z
  .object({
    id: z.string().describe('resp_ followed by the run id’s 32 hex digits'),
    object: z.literal('response'),
    created_at: z.number().int(),
    status: z.enum(['in_progress', 'completed', 'failed', 'incomplete', 'cancelled']),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    incomplete_details: z.object({ reason: z.string() }).nullable(),
    instructions: z.string().nullable(),
    model: z.string(),
    output: z.array(
      z.object({
        type: z.literal('message'),
        id: z.string(),
        status: z.string(),
        role: z.literal('assistant'),
        content: z.array(OutputTextSchema),
      }),
    ),
    previous_response_id: z.string().nullable(),
    conversation: z.object({ id: z.string() }).nullable(),
    store: z.boolean(),
    usage: z
      .object({
        input_tokens: z.number().int(),
        input_tokens_details: z.object({ cached_tokens: z.number().int() }),
        output_tokens: z.number().int(),
        output_tokens_details: z.object({ reasoning_tokens: z.number().int() }),
        total_tokens: z.number().int(),
      })
      .nullable(),
    user: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
  })
  .loose()
  .meta({ id: 'Response' });

export const ResponseStreamFrameSchema = z
  .object({
    event: z.enum([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
      'response.incomplete',
      'response.failed',
      'error',
    ]),
    data: z
      .object({ type: z.string().describe('The event name again'), sequence_number: z.number().int() })
      .loose()
      .describe('OpenAI’s Responses streaming event of that type'),
  })
  .meta({ id: 'ResponseStreamFrame' });

export const ConversationSchema = z
  .object({ id: z.string(), object: z.literal('conversation'), created_at: z.number().int(), metadata: z.record(z.string(), z.string()) })
  .meta({ id: 'Conversation' });

export const ConversationDeletedSchema = z
  .object({ id: z.string(), object: z.literal('conversation.deleted'), deleted: z.literal(true) })
  .meta({ id: 'ConversationDeleted' });

export const ConversationItemListSchema = z
  .object({
    object: z.literal('list'),
    data: z.array(
      z.object({
        type: z.literal('message'),
        id: z.string(),
        status: z.literal('completed'),
        role: z.string(),
        content: z.array(z.object({ type: z.enum(['input_text', 'output_text']), text: z.string() }).loose()),
      }),
    ),
    first_id: z.string().nullable(),
    last_id: z.string().nullable(),
    has_more: z.boolean(),
  })
  .meta({ id: 'ConversationItemList' });

export const ModelSchema = z
  .object({
    id: z.string().describe('The agent name'),
    object: z.literal('model'),
    created: z.number().int(),
    owned_by: z.literal('hangar'),
  })
  .meta({ id: 'Model' });

export const ModelListSchema = z.object({ object: z.literal('list'), data: z.array(ModelSchema) }).meta({ id: 'ModelList' });
