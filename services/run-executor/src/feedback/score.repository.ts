import { PLAIN_CONTENT, type ContentCipher } from '@hangar/platform';
import { sql, type Kysely } from '@hangar/storage';
import type { RunDatabase } from '../database.js';

export interface ScoreRow {
  id: string;
  runId: string;
  messageId: string | null;
  name: string;
  kind: string;
  value: number | null;
  textValue: string | null;
  source: string;
  author: string;
  comment: string | null;
  createdAt: string;
  updatedAt: string;
}

const toScore = (row: Omit<RunDatabase['run_scores'], 'created_at' | 'updated_at'> & { created_at: Date; updated_at: Date }): ScoreRow => ({
  id: row.id,
  runId: row.run_id,
  messageId: row.message_key || null,
  name: row.name,
  kind: row.kind,
  value: row.value === null ? null : Number(row.value),
  textValue: row.text_value,
  source: row.source,
  author: row.author,
  comment: row.comment,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

/** Feedback scores on runs (`run_scores`); a comment is sealed with `cipher` when content protection is on. */
export function createScoreRepository(db: Kysely<RunDatabase>, cipher: ContentCipher = PLAIN_CONTENT) {
  const opened = (tenantId: string) => (row: Parameters<typeof toScore>[0]) =>
    toScore({ ...row, comment: row.comment === null ? null : cipher.open(tenantId, 'RunScoreComments', row.comment) });
  return {
    /** One score per run, target, name, author and source: a second save updates it. */
    async saveScore(tenantId: string, score: Omit<ScoreRow, 'createdAt' | 'updatedAt'>): Promise<{ score: ScoreRow; created: boolean }> {
      const row = await db
        .insertInto('run_scores')
        .values({
          id: score.id,
          run_id: score.runId,
          message_key: score.messageId ?? '',
          name: score.name,
          kind: score.kind,
          value: score.value,
          text_value: score.textValue,
          source: score.source,
          author: score.author,
          comment: score.comment === null ? null : cipher.seal(tenantId, 'RunScoreComments', score.comment),
        })
        .onConflict((conflict) =>
          conflict.columns(['run_id', 'message_key', 'name', 'author', 'source']).doUpdateSet((eb) => ({
            kind: eb.ref('excluded.kind'),
            value: eb.ref('excluded.value'),
            text_value: eb.ref('excluded.text_value'),
            comment: eb.ref('excluded.comment'),
            updated_at: sql`now()`,
          })),
        )
        .returningAll()
        .executeTakeFirstOrThrow();
      return { score: opened(tenantId)(row), created: row.id === score.id };
    },

    async scores(tenantId: string, runId: string): Promise<ScoreRow[]> {
      const rows = await db.selectFrom('run_scores').selectAll().where('run_id', '=', runId).orderBy('created_at').orderBy('id').execute();
      return rows.map(opened(tenantId));
    },

    /** The deleted score, or undefined when there was none. */
    async deleteScore(tenantId: string, runId: string, scoreId: string): Promise<ScoreRow | undefined> {
      const row = await db.deleteFrom('run_scores').where('run_id', '=', runId).where('id', '=', scoreId).returningAll().executeTakeFirst();
      return row && opened(tenantId)(row);
    },
  };
}

export type ScoreRepository = ReturnType<typeof createScoreRepository>;
