import { randomUUID } from 'node:crypto';
import { openEngine, SQL_ENGINES, type EngineFixture } from '@hangar/testing';
import { purgeInBatches, sql, type Kysely } from '@hangar/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunDatabase } from '../src/database.js';
import { runMigrations } from '../src/migrations/index.js';
import { RUN_RETENTION_TARGETS } from '../src/retention/retention-targets.js';
import { createConversationRepository, CONVERSATION_LIVENESS_MS } from '../src/voice/conversations/conversation.repository.js';

/** Voice conversations on both engines: admission per tenant under concurrency, stale rows, retention (VoiceSessions). */
describe.each(SQL_ENGINES)('voice conversation repository on %s', (engine) => {
  let fixture: EngineFixture;
  let db: Kysely<RunDatabase>;
  let schema: string;
  let conversations: ReturnType<typeof createConversationRepository>;
  const newConversation = (tenantId: string) => ({
    id: randomUUID(),
    tenantId,
    agentName: 'concierge',
    sessionId: `voice-${randomUUID()}`,
  });

  beforeAll(async () => {
    fixture = await openEngine(engine);
    ({ db, schema } = await fixture.storage.open<RunDatabase>('runs', runMigrations));
    conversations = createConversationRepository(db);
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it('admits exactly the limit of one tenant’s conversations when eight open at once, and counts each tenant apart', async () => {
    const admitted = await Promise.all(Array.from({ length: 8 }, () => conversations.open(newConversation('crowd'), 3)));
    expect(admitted.filter(Boolean)).toHaveLength(3);
    expect(await conversations.open(newConversation('quiet'), 3)).toBe(true);
  });

  // PGlite has one connection and runs one transaction at a time: the lock is PostgreSQL's to show.
  it.skipIf(engine === 'pglite')('admits a tenant’s conversation only under the tenant’s lock', async () => {
    let admitting: Promise<boolean> | undefined;
    await db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${'voice_conversations:locked'}))`.execute(trx);
      admitting = conversations.open(newConversation('locked'), 5);
      const outcome = await Promise.race([
        admitting.then(() => 'opened'),
        new Promise((resolve) => setTimeout(() => resolve('waiting'), 300)),
      ]);
      expect(outcome).toBe('waiting');
    });
    expect(await admitting).toBe(true);
  });

  it('frees a place when a conversation ends, and when its instance stopped beating', async () => {
    const first = newConversation('ends');
    const second = newConversation('ends');
    expect(await conversations.open(first, 2)).toBe(true);
    expect(await conversations.open(second, 2)).toBe(true);
    expect(await conversations.open(newConversation('ends'), 2)).toBe(false);
    await conversations.end(first.id, 1000);
    expect(await conversations.open(newConversation('ends'), 2)).toBe(true);
    // The second one's instance died: its last beat is older than the liveness window.
    await db
      .updateTable('voice_conversations')
      .set({ last_seen_at: sql`now() - ${`${CONVERSATION_LIVENESS_MS + 1000} milliseconds`}::interval` })
      .where('id', '=', second.id)
      .execute();
    expect(await conversations.open(newConversation('ends'), 2)).toBe(true);
    await conversations.beat(second.id);
    expect(await conversations.open(newConversation('ends'), 2)).toBe(false);
  });

  it('counts turns and keeps the first close code', async () => {
    const talk = newConversation('turns');
    await conversations.open(talk, 5);
    await conversations.countTurn(talk.id);
    await conversations.countTurn(talk.id);
    await conversations.end(talk.id, 4408);
    await conversations.end(talk.id, 1001);
    const row = await db.selectFrom('voice_conversations').selectAll().where('id', '=', talk.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ turns: 2, close_code: 4408 });
    expect(row.ended_at).toBeInstanceOf(Date);
  });

  it('purges conversations by the age of their end, or of their last beat when their instance died, never open ones (VoiceSessions)', async () => {
    const [ended, dead, open] = [newConversation('old'), newConversation('old'), newConversation('old')];
    for (const talk of [ended, dead, open]) await conversations.open(talk, 10);
    await conversations.end(ended.id, 1000);
    const old = sql<Date>`now() - interval '40 days'`;
    await db.updateTable('voice_conversations').set({ ended_at: old }).where('id', '=', ended.id).execute();
    await db.updateTable('voice_conversations').set({ last_seen_at: old }).where('id', '=', dead.id).execute();
    const cutoff = new Date(Date.now() - 30 * 86_400_000);
    const result = await purgeInBatches(db, schema, RUN_RETENTION_TARGETS.VoiceSessions, {
      cutoff,
      archive: false,
      batchSize: 10,
      batchDelayMs: 0,
    });
    expect(result.deleted).toBe(2);
    const left = await db.selectFrom('voice_conversations').select('id').where('tenant_id', '=', 'old').execute();
    expect(left.map((row) => row.id)).toEqual([open.id]);
  });
});
