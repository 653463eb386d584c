import type { attachmentPb as pb } from '@hangar/contracts';
import { validationError, type CallerContext } from '@hangar/platform';
import type { AttachmentRow } from './attachment.repository.js';
import type { AttachmentService } from './attachment.service.js';

const descriptorToProto = (row: AttachmentRow): pb.AttachmentDescriptor => ({
  id: row.id,
  fileName: row.fileName,
  mediaType: row.mediaType,
  size: row.size,
  sha256: row.sha256,
  sessionId: row.sessionId ?? undefined,
  createdAt: row.createdAt,
});

/** The header message, then the file's bytes as one stream. */
async function splitUpload(requests: AsyncIterable<pb.UploadAttachmentRequest>) {
  const iterator = requests[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done || first.value.part?.$case !== 'header') {
    throw validationError('an upload starts with its header', [{ path: 'header', message: 'is required first' }]);
  }
  async function* chunks() {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      if (next.value.part?.$case !== 'chunk') throw validationError('only chunks may follow the header');
      yield next.value.part.value;
    }
  }
  return { header: first.value.part.value, chunks: chunks() };
}

export function attachmentGrpc(service: AttachmentService): pb.AttachmentServiceImplementation<CallerContext> {
  return {
    async uploadAttachment(requests, { caller, signal }) {
      const { header, chunks } = await splitUpload(requests);
      const attachment = await service.upload(caller, { fileName: header.fileName, sessionId: header.sessionId }, chunks, signal);
      return { attachment: descriptorToProto(attachment) };
    },
    async listAttachments({ sessionId, skip, take }, { caller }) {
      return { attachments: (await service.list(caller, { sessionId, skip, take })).map(descriptorToProto) };
    },
    async getAttachment({ id }, { caller }) {
      return { attachment: descriptorToProto(await service.get(caller, id)) };
    },
    async *downloadAttachment({ id }, { caller }) {
      const { attachment, chunks } = await service.download(caller, id);
      yield { part: { $case: 'descriptor', value: descriptorToProto(attachment) } };
      for await (const chunk of chunks)
        yield { part: { $case: 'chunk', value: Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) } };
    },
    async deleteAttachment({ id }, { caller }) {
      await service.delete(caller, id);
      return {};
    },
    async deleteSessionAttachments({ sessionId }, { caller }) {
      return { deleted: await service.deleteSessionAttachments(caller, sessionId) };
    },
  };
}
