import type { sessionPb } from '@hangar/contracts';
import { z } from 'zod';
import { locationHeader, pageNumber, problemResponse } from '../api.schemas.js';
import { defineRoute } from '../http/route.js';

const TAG = 'Sessions';

const SessionRecordSchema = z
  .object({
    id: z.string(),
    tenantId: z.string(),
    agentName: z.string().nullable(),
    ownerId: z.string().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    messageCount: z.number().int(),
    Version: z.number().int(),
    StateSchemaVersion: z.number().int(),
    StateMafVersion: z.string(),
  })
  .meta({ id: 'SessionRecord' });

const SessionDetailSchema = SessionRecordSchema.extend({
  parentSessionId: z.string().nullable(),
  messages: z
    .array(z.object({ id: z.string(), role: z.string(), content: z.unknown(), runId: z.string().nullable(), createdAt: z.iso.datetime() }))
    .nullable()
    .describe('Chat history in sequence order; the array index is the sequence number used by branching'),
  state: z.record(z.string(), z.unknown()),
}).meta({ id: 'SessionDetail' });

const BranchRequestSchema = z
  .strictObject({
    upToSequence: z.number().int().min(-2147483648).max(2147483647),
    sessionId: z.string().optional().describe('Id of the new session; generated when absent'),
  })
  .meta({ id: 'SessionBranchRequest' });

const BranchResultSchema = z
  .object({ sessionId: z.string(), parentSessionId: z.string(), copiedMessages: z.number().int() })
  .meta({ id: 'SessionBranchResult' });
const SessionParams = z.object({ sessionId: z.string() });

const recordJson = (session: sessionPb.SessionRecord | undefined) => ({
  id: session!.id,
  tenantId: session!.tenantId,
  agentName: session!.agentName ?? null,
  ownerId: session!.ownerId ?? null,
  createdAt: session!.createdAt,
  updatedAt: session!.updatedAt,
  messageCount: session!.messageCount,
  Version: session!.version,
  StateSchemaVersion: session!.stateSchemaVersion,
  StateMafVersion: session!.stateMafVersion,
});

export const sessionRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/sessions',
    operationId: 'listSessions',
    summary: 'List sessions',
    description:
      'Returns session records, most recently updated first, without their messages. Paged with skip (default 0) and take (default 50, clamped to 1..200).',
    tag: TAG,
    auth: { role: 'Reader', scope: 'RunsRead' },
    query: z.object({ agentName: z.string().optional(), skip: pageNumber(0), take: pageNumber(50) }),
    runAuthorization: { operation: 'sessions.list', denial: 'forbid' },
    responses: { 200: { description: 'Session records', schema: SessionRecordSchema.array() } },
    async handler({ query, caller }, { sessions }) {
      const { sessions: found } = await sessions.listSessions(
        { agentName: query.agentName, skip: query.skip, take: query.take },
        { caller },
      );
      return { status: 200, body: found.map(recordJson) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/sessions/{sessionId}',
    operationId: 'getSession',
    summary: 'Get a session',
    description:
      'Returns a session with its chat history in sequence order and its state. An unknown session, one of another tenant, or one the run-authorization handler denies is 404.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'RunsRead' },
    params: SessionParams,
    runAuthorization: { operation: 'sessions.read', denial: 'hide', resourceId: (params) => params.sessionId },
    responses: {
      200: { description: 'Session detail', schema: SessionDetailSchema },
      404: problemResponse('Unknown, foreign or denied session'),
    },
    async handler({ params, caller }, { sessions }) {
      const { session, messages, state } = await sessions.getSession({ sessionId: params.sessionId }, { caller });
      return {
        status: 200,
        body: {
          ...recordJson(session),
          parentSessionId: session?.parentSessionId ?? null,
          messages: messages.map((message) => ({
            id: message.id,
            role: message.role,
            content: message.content ?? null,
            runId: message.runId ?? null,
            createdAt: message.createdAt,
          })),
          state: state ?? {},
        },
      };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/sessions/{sessionId}',
    operationId: 'deleteSession',
    summary: 'Delete a session',
    description: 'Deletes a session and its attachments; recorded runs are kept. An unknown, foreign or denied session is 404.',
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: SessionParams,
    runAuthorization: { operation: 'sessions.delete', denial: 'hide', resourceId: (params) => params.sessionId },
    responses: { 204: { description: 'Deleted' }, 404: problemResponse('Unknown, foreign or denied session') },
    async handler({ params, caller }, { sessions }) {
      await sessions.deleteSession({ sessionId: params.sessionId }, { caller });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/sessions/{sessionId}/branch',
    operationId: 'branchSession',
    summary: 'Branch a session',
    description:
      'Copies messages 0..upToSequence into a new session owned like its source and answers 201 with Location naming it. upToSequence past the last message is 400; a requested new session id that exists is 409.',
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: SessionParams,
    body: BranchRequestSchema,
    runAuthorization: { operation: 'sessions.branch', denial: 'hide', resourceId: (params) => params.sessionId },
    responses: {
      201: {
        description: 'The new session',
        schema: BranchResultSchema,
        headers: { Location: locationHeader('The new session, {prefix}/api/sessions/{sessionId}') },
      },
      404: problemResponse('Unknown, foreign or denied session'),
      409: problemResponse('The requested new session id exists'),
    },
    async handler({ params, body, caller }, { sessions, config }) {
      const result = await sessions.branchSession(
        { sessionId: params.sessionId, upToSequence: body.upToSequence, newSessionId: body.sessionId },
        { caller },
      );
      return {
        status: 201,
        body: result,
        headers: { Location: `${config.Hangar.Api.Prefix}/api/sessions/${encodeURIComponent(result.sessionId)}` },
      };
    },
  }),
];
