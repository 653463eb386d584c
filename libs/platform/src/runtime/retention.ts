import { retentionPb } from '@hangar/contracts';
import { purgeInBatches, type Kysely, type PurgeTarget } from '@hangar/storage';
import { validationError } from '../errors.js';
import type { CallerContext } from '../grpc/server.js';
import { PLAIN_CONTENT, type ContentCipher } from '../content/content-cipher.js';
import { resealInBatches, type SealedColumn } from '../content/reseal.js';

/**
 * RetentionService for the targets and protected columns one service owns (its `PurgeTarget`s, by SPEC target name):
 * governance asks, this service deletes from its own schema. A target may span several tables, purged one after another.
 */
export function retentionGrpc(
  database: { db: Kysely<any>; schema: string },
  owned: Partial<Record<string, PurgeTarget | PurgeTarget[]>>,
  sealed: { columns: SealedColumn[]; cipher: ContentCipher } = { columns: [], cipher: PLAIN_CONTENT },
): retentionPb.RetentionServiceImplementation<CallerContext> {
  return {
    async reseal(request) {
      let resealed = 0;
      for (const column of sealed.columns)
        resealed += await resealInBatches(database.db, database.schema, column, sealed.cipher, Math.max(1, request.batchSize || 500));
      return { resealed };
    },
    async purge(request) {
      const target = owned[request.target];
      if (!target)
        throw validationError(`this service holds no retention target "${request.target}"`, [
          { path: 'target', message: 'is not owned here' },
        ]);
      if (!request.cutoff) throw validationError('a cutoff is required', [{ path: 'cutoff', message: 'is required' }]);
      const options = {
        cutoff: new Date(request.cutoff),
        archive: request.archive,
        batchSize: Math.max(1, request.batchSize),
        batchDelayMs: Math.max(0, request.batchDelayMs),
      };
      const total = { deleted: 0, archived: 0 };
      for (const table of [target].flat()) {
        const result = await purgeInBatches(database.db, database.schema, table, options);
        total.deleted += result.deleted;
        total.archived += result.archived;
      }
      return total;
    },
  };
}
