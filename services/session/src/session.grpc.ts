import type { sessionPb as pb } from '@hangar/contracts';
import type { CallerContext } from '@hangar/platform';
import type { MessageRow, SessionRow } from './session.repository.js';
import type { SessionService } from './session.service.js';

const sessionToProto = (row: SessionRow): pb.SessionRecord => ({
  id: row.id,
  tenantId: row.tenantId,
  agentName: row.agentName ?? undefined,
  ownerId: row.ownerId ?? undefined,
  parentSessionId: row.parentSessionId ?? undefined,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
  messageCount: row.messageCount,
  version: row.version,
  stateSchemaVersion: row.stateSchemaVersion,
  stateMafVersion: row.stateMafVersion,
  metadata: row.metadata,
});

const messageToProto = (row: MessageRow): pb.SessionMessage => ({
  id: row.id,
  sequence: row.sequence,
  role: row.role,
  content: row.content,
  runId: row.runId ?? undefined,
  createdAt: row.createdAt,
});

export function sessionGrpc(service: SessionService): pb.SessionServiceImplementation<CallerContext> {
  return {
    async listSessions({ agentName, skip, take }, { caller }) {
      return { sessions: (await service.list(caller, { agentName, skip, take })).map(sessionToProto) };
    },
    async getSession({ sessionId }, { caller }) {
      const { session, messages, state } = await service.get(caller, sessionId);
      return { session: sessionToProto(session), messages: messages.map(messageToProto), state };
    },
    async deleteSession({ sessionId }, { caller }) {
      return { deletedAttachments: await service.delete(caller, sessionId) };
    },
    async branchSession({ sessionId, upToSequence, newSessionId }, { caller }) {
      return service.branch(caller, sessionId, upToSequence, newSessionId);
    },
    async createSession({ sessionId, agentName, metadata, messages }, { caller }) {
      const session = await service.create(caller, {
        sessionId,
        agentName,
        metadata,
        messages: messages.map((message) => ({ role: message.role, content: message.content ?? null, runId: message.runId ?? null })),
      });
      return { session: sessionToProto(session) };
    },
    async updateSessionMetadata({ sessionId, metadata }, { caller }) {
      return { session: sessionToProto(await service.updateMetadata(caller, sessionId, metadata)) };
    },
    async openSession({ sessionId, agentName }, { caller }) {
      const opened = await service.open(caller, { sessionId, agentName });
      return {
        session: sessionToProto(opened.session),
        messages: opened.messages.map(messageToProto),
        state: opened.state,
        created: opened.created,
      };
    },
    async appendMessages({ sessionId, messages, state }, { caller }) {
      const appended = await service.append(
        caller,
        sessionId,
        messages.map((message) => ({ role: message.role, content: message.content ?? null, runId: message.runId ?? null })),
        state,
      );
      return { messages: appended.map(messageToProto) };
    },
  };
}
