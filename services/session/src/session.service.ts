import { randomUUID } from 'node:crypto';
import {
  clampPage,
  conflict,
  forbidden,
  HangarError,
  notFound,
  roleIncludes,
  validationError,
  type Caller,
  type Role,
} from '@hangar/platform';
import type { MessageRow, NewMessage, SessionRepository, SessionRow } from './session.repository.js';

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const MESSAGE_ROLES = new Set(['system', 'user', 'assistant', 'tool']);
/** OpenAI's metadata bounds, which conversation metadata must keep to be read back by its clients. */
const METADATA_LIMITS = { pairs: 16, keyLength: 64, valueLength: 512 };

export interface SessionSettings {
  ownershipEnabled: boolean;
  /** Callers with this role (or a higher one) see and manage every session of the tenant. */
  managementRole: Role;
  /** Written to `StateMafVersion`: the agent runtime that wrote the state. */
  runtimeVersion: string;
}

export interface SessionDeps {
  repository: SessionRepository;
  settings: SessionSettings;
  /** Removes a session's attachments (the attachment service owns them). */
  deleteAttachments(caller: Caller, sessionId: string): Promise<number>;
}

export interface OpenedSession {
  session: SessionRow;
  state: Record<string, unknown>;
  messages: MessageRow[];
  created: boolean;
}

function requireSessionId(id: string, path: string) {
  if (!SESSION_ID.test(id)) {
    throw validationError(`${path} is not a valid session id`, [
      { path, message: 'must be 1-128 characters of letters, digits, ".", "_", ":" or "-", starting with a letter or digit' },
    ]);
  }
}

function requireMetadata(metadata: Record<string, string>) {
  const entries = Object.entries(metadata);
  const errors = entries.length > METADATA_LIMITS.pairs ? [{ path: 'metadata', message: `at most ${METADATA_LIMITS.pairs} pairs` }] : [];
  for (const [key, value] of entries) {
    if (key.length > METADATA_LIMITS.keyLength)
      errors.push({ path: `metadata.${key}`, message: `keys are at most ${METADATA_LIMITS.keyLength} characters` });
    if (value.length > METADATA_LIMITS.valueLength)
      errors.push({ path: `metadata.${key}`, message: `values are at most ${METADATA_LIMITS.valueLength} characters` });
  }
  if (errors.length) throw validationError('the session metadata is not valid', errors);
}

function requireRoles(messages: NewMessage[]) {
  messages.forEach((message, index) => {
    if (!MESSAGE_ROLES.has(message.role)) {
      throw validationError(`message ${index} has an unknown role`, [
        { path: `messages[${index}].role`, message: 'must be system, user, assistant or tool' },
      ]);
    }
  });
}

/** Session rules: history, branching, ownership (SPEC Sessions 1–4, Agents 14). */
export function createSessionService(deps: SessionDeps) {
  const { repository, settings } = deps;

  const isManager = (caller: Caller) => roleIncludes(caller.role, settings.managementRole);

  /** With ownership on, a caller sees its own sessions; a manager sees every one, ownerless ones included. */
  const canSee = (caller: Caller, session: SessionRow) =>
    !settings.ownershipEnabled || isManager(caller) || (!!session.ownerId && session.ownerId === caller.userId);

  /** A session the caller may see; any other (foreign, unknown) is the same 404. */
  async function visibleSession(caller: Caller, id: string): Promise<SessionRow> {
    const session = SESSION_ID.test(id) ? await repository.get(caller.tenantId, id) : undefined;
    if (!session || !canSee(caller, session)) throw notFound(`session ${id} not found`);
    return session;
  }

  function requireOwner(caller: Caller) {
    if (settings.ownershipEnabled && !caller.userId) {
      throw forbidden('a new session needs an authenticated user to own it', 'session_owner_required');
    }
  }

  /**
   * The session a run works in. An existing one must be the caller's when ownership is on
   * (403 otherwise); a new one is owned by the calling user, and needs one when ownership is on.
   */
  async function open(caller: Caller, request: { sessionId?: string; agentName: string }): Promise<OpenedSession> {
    if (request.sessionId !== undefined) requireSessionId(request.sessionId, 'sessionId');
    const id = request.sessionId ?? randomUUID();
    const existing = await repository.get(caller.tenantId, id);
    if (existing) {
      if (!canSee(caller, existing)) throw forbidden(`session ${id} belongs to another user`);
      return { ...(await repository.detail(caller.tenantId, id))!, created: false };
    }
    requireOwner(caller);
    const created = await repository.create(caller.tenantId, {
      id,
      agentName: request.agentName || null,
      ownerId: caller.userId ?? null,
      stateMafVersion: settings.runtimeVersion,
    });
    // A concurrent run may have opened the same new id first: read what is there now.
    if (!created) return open(caller, { ...request, sessionId: id });
    return { session: created, state: {}, messages: [], created: true };
  }

  return {
    async list(caller: Caller, filter: { agentName?: string; skip: number; take: number }): Promise<SessionRow[]> {
      const narrowed = settings.ownershipEnabled && !isManager(caller);
      if (narrowed && !caller.userId) return [];
      return repository.list(caller.tenantId, {
        agentName: filter.agentName,
        ownerId: narrowed ? caller.userId : undefined,
        ...clampPage(filter.skip, filter.take),
      });
    },

    async get(caller: Caller, id: string) {
      await visibleSession(caller, id);
      const detail = await repository.detail(caller.tenantId, id);
      if (!detail) throw notFound(`session ${id} not found`);
      return detail;
    },

    /** Deletes the session's attachments, then the session (messages go with it); runs are kept. */
    async delete(caller: Caller, id: string): Promise<number> {
      await visibleSession(caller, id);
      const deletedAttachments = await deps.deleteAttachments(caller, id);
      if (!(await repository.delete(caller.tenantId, id))) throw notFound(`session ${id} not found`);
      return deletedAttachments;
    },

    async branch(caller: Caller, id: string, upToSequence: number, newSessionId?: string) {
      const source = await visibleSession(caller, id);
      if (!Number.isInteger(upToSequence) || upToSequence < 0 || upToSequence >= source.messageCount) {
        throw validationError(
          source.messageCount === 0
            ? `session ${id} has no messages to branch from`
            : `upToSequence must be between 0 and ${source.messageCount - 1}, the last message of session ${id}`,
          [{ path: 'upToSequence', message: `must be between 0 and ${source.messageCount - 1}` }],
        );
      }
      if (newSessionId !== undefined) requireSessionId(newSessionId, 'sessionId');
      const branchId = newSessionId ?? randomUUID();
      const copied = await repository.branch(caller.tenantId, source, upToSequence, branchId);
      if (copied === undefined) throw conflict(`a session with id ${branchId} already exists`);
      return { sessionId: branchId, parentSessionId: id, copiedMessages: copied };
    },

    open,

    /** A session before any run (an OpenAI conversation): 409 when the id is taken. */
    async create(
      caller: Caller,
      request: { sessionId?: string; agentName?: string; metadata: Record<string, string>; messages: NewMessage[] },
    ): Promise<SessionRow> {
      if (request.sessionId !== undefined) requireSessionId(request.sessionId, 'sessionId');
      requireMetadata(request.metadata);
      requireRoles(request.messages);
      requireOwner(caller);
      const id = request.sessionId ?? randomUUID();
      const created = await repository.create(caller.tenantId, {
        id,
        agentName: request.agentName || null,
        ownerId: caller.userId ?? null,
        stateMafVersion: settings.runtimeVersion,
        metadata: request.metadata,
        messages: request.messages,
      });
      if (!created) throw conflict(`a session with id ${id} already exists`);
      return created;
    },

    async updateMetadata(caller: Caller, id: string, metadata: Record<string, string>): Promise<SessionRow> {
      await visibleSession(caller, id);
      requireMetadata(metadata);
      const updated = await repository.updateMetadata(caller.tenantId, id, metadata);
      if (!updated) throw notFound(`session ${id} not found`);
      return updated;
    },

    async append(caller: Caller, id: string, messages: NewMessage[], state?: Record<string, unknown>) {
      requireRoles(messages);
      const appended = await repository.append(
        caller.tenantId,
        id,
        messages,
        state && { value: state, mafVersion: settings.runtimeVersion },
      );
      if (!appended) throw new HangarError('notFound', `session ${id} not found`);
      return appended;
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
