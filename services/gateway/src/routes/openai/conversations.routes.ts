import { randomBytes } from 'node:crypto';
import type { sessionPb } from '@hangar/contracts';
import { notFound, validationError } from '@hangar/platform';
import { z } from 'zod';
import type { GatewayContext } from '../../gateway.context.js';
import { defineRoute } from '../../http/route.js';
import { METADATA, turnsOfResponseInput } from './openai-requests.js';
import { epochSeconds } from './openai-runs.js';
import { messageIdOf } from './response-objects.js';
import { resolveReferences, storedMessageText } from './response-sessions.js';
import {
  ConversationDeletedSchema,
  ConversationItemListSchema,
  ConversationSchema,
  OpenAIErrorSchema,
  openAIErrorResponse,
} from './openai.schemas.js';

/**
 * OpenAI conversations: a conversation IS a Hangar session (its id works on /api/sessions), so
 * a response run in it appends to its history. `Hangar:Api:MapOpenAIConversations` false → 404.
 */

const TAG = 'OpenAI compatible';
const ConversationParams = z.object({ conversationId: z.string().describe('A session id (conv_… when made here)') });

const CreateConversationSchema = z
  .strictObject({
    items: z.array(z.unknown()).max(20).nullish().describe('First message items of the conversation'),
    metadata: METADATA.nullable(),
  })
  .meta({ id: 'CreateConversationRequest' });

const UpdateConversationSchema = z.strictObject({ metadata: METADATA.unwrap() }).meta({ id: 'UpdateConversationRequest' });

const ItemsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(['asc', 'desc']).default('desc'),
  after: z.string().optional().describe('An item id: list the items after it in the chosen order'),
});

function requireMapped(context: GatewayContext, id?: string) {
  if (!context.config.Hangar.Api.MapOpenAIConversations)
    throw notFound(id ? `Conversation with id '${id}' not found.` : 'the conversation routes are not mapped (MapOpenAIConversations)');
}

const conversationJson = (session: sessionPb.SessionRecord | undefined) => ({
  id: session!.id,
  object: 'conversation',
  created_at: epochSeconds(session!.createdAt),
  metadata: session!.metadata,
});

/** A run's answer has the id its response gave it (`msg_` + the run id), so an `item_reference` to it works; other messages their own. */
const itemJson = (message: sessionPb.SessionMessage) => ({
  type: 'message',
  id: message.role === 'assistant' && message.runId ? messageIdOf(message.runId) : `msg_${message.id.replaceAll('-', '')}`,
  status: 'completed',
  role: message.role,
  content: [
    {
      type: message.role === 'assistant' ? 'output_text' : 'input_text',
      text: storedMessageText(message.content),
      ...(message.role === 'assistant' && { annotations: [] }),
    },
  ],
});

export const conversationRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/conversations',
    operationId: 'createConversation',
    summary: 'Create a conversation (a Hangar session) with optional first items and metadata',
    description:
      'Creates a conversation, which is a Hangar session (`conv_…` id, visible under /api/sessions), with optional first message items and metadata (at most 16 pairs).',
    errorBody: OpenAIErrorSchema,
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    body: CreateConversationSchema,
    responses: { 200: { description: 'The conversation', schema: ConversationSchema } },
    async handler({ body, caller }, context) {
      requireMapped(context);
      const messages = body.items?.length ? await resolveReferences(turnsOfResponseInput(body.items), caller, context) : [];
      const { session } = await context.sessions.createSession(
        {
          sessionId: `conv_${randomBytes(24).toString('hex')}`,
          metadata: body.metadata ?? {},
          messages: messages.map((message) => ({ role: message.role, content: message.content })),
        },
        { caller },
      );
      return { status: 200, body: conversationJson(session) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/conversations/{conversationId}',
    operationId: 'getConversation',
    summary: 'A conversation',
    description: "A conversation's id, creation time and metadata.",
    errorBody: OpenAIErrorSchema,
    tag: TAG,
    auth: { role: 'Reader', scope: 'RunsRead' },
    params: ConversationParams,
    runAuthorization: { operation: 'sessions.read', denial: 'hide', resourceId: (params) => params.conversationId },
    responses: { 200: { description: 'The conversation', schema: ConversationSchema }, 404: openAIErrorResponse('Unknown conversation') },
    async handler({ params, caller }, context) {
      requireMapped(context, params.conversationId);
      const { session } = await context.sessions.getSession({ sessionId: params.conversationId }, { caller });
      return { status: 200, body: conversationJson(session) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/v1/conversations/{conversationId}',
    operationId: 'updateConversation',
    summary: 'Replace a conversation’s metadata',
    description: "Replaces a conversation's metadata.",
    errorBody: OpenAIErrorSchema,
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: ConversationParams,
    body: UpdateConversationSchema,
    runAuthorization: { operation: 'sessions.update', denial: 'hide', resourceId: (params) => params.conversationId },
    responses: { 200: { description: 'The conversation', schema: ConversationSchema }, 404: openAIErrorResponse('Unknown conversation') },
    async handler({ params, body, caller }, context) {
      requireMapped(context, params.conversationId);
      const { session } = await context.sessions.updateSessionMetadata(
        { sessionId: params.conversationId, metadata: body.metadata },
        { caller },
      );
      return { status: 200, body: conversationJson(session) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/conversations/{conversationId}',
    operationId: 'deleteConversation',
    summary: 'Delete a conversation: the session, its messages and attachments (runs are kept)',
    description:
      "Deletes the conversation's session with its messages and attachments (its runs are kept) and answers OpenAI's deletion object rather than 204, which the OpenAI clients read.",
    errorBody: OpenAIErrorSchema,
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: ConversationParams,
    runAuthorization: { operation: 'sessions.delete', denial: 'hide', resourceId: (params) => params.conversationId },
    responses: {
      200: { description: 'OpenAI’s deletion object (the OpenAI clients read it; not 204)', schema: ConversationDeletedSchema },
      404: openAIErrorResponse('Unknown conversation'),
    },
    async handler({ params, caller }, context) {
      requireMapped(context, params.conversationId);
      await context.sessions.deleteSession({ sessionId: params.conversationId }, { caller });
      return { status: 200, body: { id: params.conversationId, object: 'conversation.deleted', deleted: true } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/conversations/{conversationId}/items',
    operationId: 'listConversationItems',
    summary: 'The items (messages) of a conversation, newest first by default',
    description:
      "The conversation's messages as OpenAI message items, newest first unless `order=asc`, paged by `limit` and `after` (an item id).",
    errorBody: OpenAIErrorSchema,
    tag: TAG,
    auth: { role: 'Reader', scope: 'RunsRead' },
    params: ConversationParams,
    query: ItemsQuery,
    runAuthorization: { operation: 'sessions.read', denial: 'hide', resourceId: (params) => params.conversationId },
    responses: {
      200: { description: 'A list of message items', schema: ConversationItemListSchema },
      404: openAIErrorResponse('Unknown conversation'),
    },
    async handler({ params, query, caller }, context) {
      requireMapped(context, params.conversationId);
      const { messages } = await context.sessions.getSession({ sessionId: params.conversationId }, { caller });
      const ordered = (query.order === 'asc' ? messages : [...messages].reverse()).map(itemJson);
      const start = query.after === undefined ? 0 : ordered.findIndex((item) => item.id === query.after) + 1;
      if (query.after !== undefined && start === 0)
        throw validationError(`no item ${query.after} in conversation ${params.conversationId}`, [
          { path: 'after', message: 'is not an item of this conversation' },
        ]);
      const page = ordered.slice(start, start + query.limit);
      return {
        status: 200,
        body: {
          object: 'list',
          data: page,
          first_id: page[0]?.id ?? null,
          last_id: page.at(-1)?.id ?? null,
          has_more: start + query.limit < ordered.length,
        },
      };
    },
  }),
];
