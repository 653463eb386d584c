import { randomUUID } from 'node:crypto';
import { jsonb, sql, type Generated, type Kysely } from '@hangar/storage';
import { PLAIN_CONTENT, type ContentCipher } from '@hangar/platform';

export interface SessionDatabase {
  sessions: {
    tenant_id: string;
    id: string;
    agent_name: string | null;
    owner_id: string | null;
    parent_session_id: string | null;
    version: Generated<number>;
    state_schema_version: Generated<number>;
    state_maf_version: string;
    state: Generated<Record<string, unknown>>;
    message_count: Generated<number>;
    metadata: Generated<Record<string, string>>;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
  };
  session_messages: {
    tenant_id: string;
    session_id: string;
    sequence: number;
    id: string;
    role: string;
    content: unknown;
    run_id: string | null;
    created_at: Generated<Date>;
  };
}

export interface SessionRow {
  id: string;
  tenantId: string;
  agentName: string | null;
  ownerId: string | null;
  parentSessionId: string | null;
  version: number;
  stateSchemaVersion: number;
  stateMafVersion: string;
  messageCount: number;
  metadata: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

export interface MessageRow {
  id: string;
  sequence: number;
  role: string;
  content: unknown;
  runId: string | null;
  createdAt: string;
}

export interface NewMessage {
  role: string;
  content: unknown;
  runId: string | null;
}

const SESSION_COLUMNS = [
  'id',
  'tenant_id',
  'agent_name',
  'owner_id',
  'parent_session_id',
  'version',
  'state_schema_version',
  'state_maf_version',
  'message_count',
  'metadata',
  'created_at',
  'updated_at',
] as const;
const MESSAGE_COLUMNS = ['id', 'sequence', 'role', 'content', 'run_id', 'created_at'] as const;

type SessionSelect = Pick<
  SessionDatabase['sessions'],
  'id' | 'tenant_id' | 'agent_name' | 'owner_id' | 'parent_session_id' | 'state_maf_version'
> & {
  version: number;
  state_schema_version: number;
  message_count: number;
  metadata: Record<string, string>;
  created_at: Date;
  updated_at: Date;
};
const toSession = (row: SessionSelect): SessionRow => ({
  id: row.id,
  tenantId: row.tenant_id,
  agentName: row.agent_name,
  ownerId: row.owner_id,
  parentSessionId: row.parent_session_id,
  version: row.version,
  stateSchemaVersion: row.state_schema_version,
  stateMafVersion: row.state_maf_version,
  messageCount: row.message_count,
  metadata: row.metadata,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});
const toMessage = (row: {
  id: string;
  sequence: number;
  role: string;
  content: unknown;
  run_id: string | null;
  created_at: Date;
}): MessageRow => ({
  id: row.id,
  sequence: row.sequence,
  role: row.role,
  content: row.content,
  runId: row.run_id,
  createdAt: row.created_at.toISOString(),
});

/**
 * Every SQL statement of the session service. Messages and state are sealed with `cipher` when
 * content protection is on (API.md "Content protection"), per tenant.
 */
export function createSessionRepository(db: Kysely<SessionDatabase>, cipher: ContentCipher = PLAIN_CONTENT) {
  const messageRows = (tenantId: string, sessionId: string, firstSequence: number, messages: NewMessage[]) =>
    messages.map((message, index) => ({
      tenant_id: tenantId,
      session_id: sessionId,
      sequence: firstSequence + index,
      id: randomUUID(),
      role: message.role,
      content: jsonb(cipher.sealJson(tenantId, 'SessionMessages', message.content)),
      run_id: message.runId,
    }));
  const opened = (tenantId: string) => (row: Parameters<typeof toMessage>[0]) =>
    toMessage({ ...row, content: cipher.openJson(tenantId, 'SessionMessages', row.content) });
  return {
    /** `ownerId` undefined: any owner; a string: only that owner's sessions (ownerless ones never match). */
    async list(tenantId: string, filter: { agentName?: string; ownerId?: string; skip: number; take: number }): Promise<SessionRow[]> {
      let query = db.selectFrom('sessions').select(SESSION_COLUMNS).where('tenant_id', '=', tenantId);
      if (filter.agentName !== undefined) query = query.where('agent_name', '=', filter.agentName);
      if (filter.ownerId !== undefined) query = query.where('owner_id', '=', filter.ownerId);
      const rows = await query.orderBy('updated_at', 'desc').orderBy('id').offset(filter.skip).limit(filter.take).execute();
      return rows.map(toSession);
    },

    async get(tenantId: string, id: string): Promise<SessionRow | undefined> {
      const row = await db
        .selectFrom('sessions')
        .select(SESSION_COLUMNS)
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row && toSession(row);
    },

    async detail(tenantId: string, id: string) {
      const row = await db
        .selectFrom('sessions')
        .select([...SESSION_COLUMNS, 'state'])
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .executeTakeFirst();
      if (!row) return undefined;
      const messages = await db
        .selectFrom('session_messages')
        .select(MESSAGE_COLUMNS)
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', id)
        .orderBy('sequence')
        .execute();
      return {
        session: toSession(row),
        state: cipher.openJson(tenantId, 'SessionState', row.state) as Record<string, unknown>,
        messages: messages.map(opened(tenantId)),
      };
    },

    /** Undefined when the id is taken. First messages are written with the row, in one transaction. */
    async create(
      tenantId: string,
      session: {
        id: string;
        agentName: string | null;
        ownerId: string | null;
        stateMafVersion: string;
        metadata?: Record<string, string>;
        messages?: NewMessage[];
      },
    ): Promise<SessionRow | undefined> {
      const messages = session.messages ?? [];
      return db.transaction().execute(async (trx) => {
        const row = await trx
          .insertInto('sessions')
          .values({
            tenant_id: tenantId,
            id: session.id,
            agent_name: session.agentName,
            owner_id: session.ownerId,
            state_maf_version: session.stateMafVersion,
            metadata: jsonb(session.metadata ?? {}),
            message_count: messages.length,
          })
          .onConflict((conflict) => conflict.columns(['tenant_id', 'id']).doNothing())
          .returning(SESSION_COLUMNS)
          .executeTakeFirst();
        if (row && messages.length)
          await trx
            .insertInto('session_messages')
            .values(messageRows(tenantId, session.id, 0, messages))
            .execute();
        return row && toSession(row);
      });
    },

    /** Replaces the metadata; undefined when no session. */
    async updateMetadata(tenantId: string, id: string, metadata: Record<string, string>): Promise<SessionRow | undefined> {
      const row = await db
        .updateTable('sessions')
        .set({ metadata: jsonb(metadata), updated_at: sql`now()` })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .returning(SESSION_COLUMNS)
        .executeTakeFirst();
      return row && toSession(row);
    },

    async delete(tenantId: string, id: string): Promise<boolean> {
      const result = await db.deleteFrom('sessions').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /** Appends after the last message (sequences allocated under the session's row lock); undefined when no session. */
    async append(
      tenantId: string,
      id: string,
      messages: NewMessage[],
      state: { value: Record<string, unknown>; mafVersion: string } | undefined,
    ) {
      return db.transaction().execute(async (trx) => {
        const session = await trx
          .selectFrom('sessions')
          .select('message_count')
          .where('tenant_id', '=', tenantId)
          .where('id', '=', id)
          .forUpdate()
          .executeTakeFirst();
        if (!session) return undefined;
        const inserted = messages.length
          ? await trx
              .insertInto('session_messages')
              .values(messageRows(tenantId, id, session.message_count, messages))
              .returning(MESSAGE_COLUMNS)
              .execute()
          : [];
        await trx
          .updateTable('sessions')
          .set({
            message_count: session.message_count + messages.length,
            updated_at: sql`now()`,
            ...(state
              ? {
                  state: jsonb(cipher.sealJson(tenantId, 'SessionState', state.value) as Record<string, unknown>),
                  state_maf_version: state.mafVersion,
                }
              : {}),
          })
          .where('tenant_id', '=', tenantId)
          .where('id', '=', id)
          .execute();
        return inserted.map(opened(tenantId));
      });
    },

    /** Copies messages 0..upToSequence into a new session; undefined when `newId` is taken. */
    async branch(tenantId: string, source: SessionRow, upToSequence: number, newId: string) {
      return db.transaction().execute(async (trx) => {
        const created = await trx
          .insertInto('sessions')
          .values({
            tenant_id: tenantId,
            id: newId,
            agent_name: source.agentName,
            owner_id: source.ownerId,
            parent_session_id: source.id,
            state_maf_version: source.stateMafVersion,
            metadata: jsonb(source.metadata),
            message_count: upToSequence + 1,
          })
          .onConflict((conflict) => conflict.columns(['tenant_id', 'id']).doNothing())
          .returning('id')
          .executeTakeFirst();
        if (!created) return undefined;
        const copied = await trx
          .insertInto('session_messages')
          .columns(['tenant_id', 'session_id', 'sequence', 'id', 'role', 'content', 'run_id', 'created_at'])
          .expression((eb) =>
            eb
              .selectFrom('session_messages')
              .select([
                'tenant_id',
                sql<string>`${newId}::text`.as('session_id'),
                'sequence',
                sql<string>`gen_random_uuid()`.as('id'),
                'role',
                'content',
                'run_id',
                'created_at',
              ])
              .where('tenant_id', '=', tenantId)
              .where('session_id', '=', source.id)
              .where('sequence', '<=', upToSequence),
          )
          .executeTakeFirst();
        return Number(copied.numInsertedOrUpdatedRows ?? 0n);
      });
    },
  };
}

export type SessionRepository = ReturnType<typeof createSessionRepository>;
