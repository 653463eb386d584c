import { sql, type Kysely } from '@hangar/storage';
import type { RunDatabase } from '../../database.js';

/** How long an open conversation counts without a beat from its instance (it beats every third of this). */
export const CONVERSATION_LIVENESS_MS = 30_000;

/** The voice conversations table: admission per tenant, beats, turns and endings. */
export function createConversationRepository(db: Kysely<RunDatabase>) {
  return {
    /**
     * Opens a conversation unless the tenant already holds `limit` live ones, counted across every
     * instance under a lock per tenant (so two instances admitting at once cannot both pass).
     */
    async open(row: { id: string; tenantId: string; agentName: string; sessionId: string }, limit: number): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(hashtext(${`voice_conversations:${row.tenantId}`}))`.execute(trx);
        const { live } = await trx
          .selectFrom('voice_conversations')
          .select((eb) => eb.fn.countAll<string>().as('live'))
          .where('tenant_id', '=', row.tenantId)
          .where('ended_at', 'is', null)
          .where('last_seen_at', '>', sql<Date>`now() - ${`${CONVERSATION_LIVENESS_MS} milliseconds`}::interval`)
          .executeTakeFirstOrThrow();
        if (Number(live) >= limit) return false;
        await trx
          .insertInto('voice_conversations')
          .values({ id: row.id, tenant_id: row.tenantId, agent_name: row.agentName, session_id: row.sessionId })
          .execute();
        return true;
      });
    },

    /** The instance holding the conversation is alive. */
    async beat(id: string): Promise<void> {
      await db
        .updateTable('voice_conversations')
        .set({ last_seen_at: sql`now()` })
        .where('id', '=', id)
        .where('ended_at', 'is', null)
        .execute();
    },

    async countTurn(id: string): Promise<void> {
      await db
        .updateTable('voice_conversations')
        .set({ turns: sql`turns + 1`, last_seen_at: sql`now()` })
        .where('id', '=', id)
        .execute();
    },

    async end(id: string, closeCode: number): Promise<void> {
      await db
        .updateTable('voice_conversations')
        .set({ ended_at: sql`now()`, close_code: closeCode })
        .where('id', '=', id)
        .where('ended_at', 'is', null)
        .execute();
    },
  };
}

export type ConversationRepository = ReturnType<typeof createConversationRepository>;
