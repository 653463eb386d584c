import { PLAIN_CONTENT, type ContentCipher } from '@hangar/platform';
import { sql, type Generated, type Kysely } from '@hangar/storage';

export interface AttachmentDatabase {
  attachments: {
    id: string;
    tenant_id: string;
    file_name: string;
    media_type: string;
    size: Generated<number>;
    sha256: Generated<string>;
    session_id: string | null;
    status: 'uploading' | 'ready';
    created_at: Generated<Date>;
  };
  attachment_chunks: {
    attachment_id: string;
    seq: number;
    data: Uint8Array;
  };
}

export interface AttachmentRow {
  id: string;
  fileName: string;
  mediaType: string;
  size: number;
  sha256: string;
  sessionId: string | null;
  createdAt: string;
}

const COLUMNS = ['id', 'file_name', 'media_type', 'size', 'sha256', 'session_id', 'created_at'] as const;

type Selected = {
  id: string;
  file_name: string;
  media_type: string;
  size: number;
  sha256: string;
  session_id: string | null;
  created_at: Date;
};
const toRow = (row: Selected): AttachmentRow => ({
  id: row.id,
  fileName: row.file_name,
  mediaType: row.media_type,
  size: row.size,
  sha256: row.sha256,
  sessionId: row.session_id,
  createdAt: row.created_at.toISOString(),
});

/**
 * Every SQL statement of the attachment service. Only `ready` rows are ever read back. File names
 * are sealed with `cipher` when content protection is on.
 */
export function createAttachmentRepository(db: Kysely<AttachmentDatabase>, cipher: ContentCipher = PLAIN_CONTENT) {
  const opened = (tenantId: string) => (row: Selected) =>
    toRow({ ...row, file_name: cipher.open(tenantId, 'AttachmentFileNames', row.file_name) });
  return {
    async begin(tenantId: string, attachment: { id: string; fileName: string; mediaType: string; sessionId: string | null }) {
      await db
        .insertInto('attachments')
        .values({
          id: attachment.id,
          tenant_id: tenantId,
          file_name: cipher.seal(tenantId, 'AttachmentFileNames', attachment.fileName),
          media_type: attachment.mediaType,
          session_id: attachment.sessionId,
          status: 'uploading',
        })
        .execute();
    },

    async writeChunk(attachmentId: string, seq: number, data: Uint8Array) {
      await db.insertInto('attachment_chunks').values({ attachment_id: attachmentId, seq, data }).execute();
    },

    async complete(attachmentId: string, size: number, sha256: string): Promise<AttachmentRow> {
      const row = await db
        .updateTable('attachments')
        .set({ status: 'ready', size, sha256 })
        .where('id', '=', attachmentId)
        .returning([...COLUMNS, 'tenant_id'])
        .executeTakeFirstOrThrow();
      return opened(row.tenant_id)(row);
    },

    /** Removes an unfinished upload and its bytes. */
    async discard(attachmentId: string) {
      await db.deleteFrom('attachments').where('id', '=', attachmentId).execute();
    },

    /** Removes uploads a crashed process left unfinished. */
    async sweepUnfinished(olderThan: Date): Promise<number> {
      const result = await db
        .deleteFrom('attachments')
        .where('status', '=', 'uploading')
        .where('created_at', '<', olderThan)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async list(tenantId: string, filter: { sessionId?: string; skip: number; take: number }): Promise<AttachmentRow[]> {
      let query = db.selectFrom('attachments').select(COLUMNS).where('tenant_id', '=', tenantId).where('status', '=', 'ready');
      if (filter.sessionId !== undefined) query = query.where('session_id', '=', filter.sessionId);
      const rows = await query.orderBy('created_at', 'desc').orderBy('id').offset(filter.skip).limit(filter.take).execute();
      return rows.map(opened(tenantId));
    },

    async get(tenantId: string, id: string): Promise<AttachmentRow | undefined> {
      const row = await db
        .selectFrom('attachments')
        .select(COLUMNS)
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .where('status', '=', 'ready')
        .executeTakeFirst();
      return row && opened(tenantId)(row);
    },

    /** Chunks `fromSeq` up to (not including) `fromSeq + count`, in order. */
    async readChunks(attachmentId: string, fromSeq: number, count: number): Promise<Uint8Array[]> {
      const rows = await db
        .selectFrom('attachment_chunks')
        .select('data')
        .where('attachment_id', '=', attachmentId)
        .where('seq', '>=', fromSeq)
        .where('seq', '<', fromSeq + count)
        .orderBy('seq')
        .execute();
      return rows.map((row) => row.data);
    },

    async delete(tenantId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom('attachments')
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .where('status', '=', 'ready')
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async deleteBySession(tenantId: string, sessionId: string): Promise<number> {
      const result = await db
        .deleteFrom('attachments')
        .where('tenant_id', '=', tenantId)
        .where('session_id', '=', sessionId)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

export type AttachmentRepository = ReturnType<typeof createAttachmentRepository>;
export { sql };
