import type { attachmentPb as pb } from '@hangar/contracts';
import { splitStreamedUpload, type CallerContext } from '@hangar/platform';
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

export function attachmentGrpc(service: AttachmentService): pb.AttachmentServiceImplementation<CallerContext> {
  return {
    async uploadAttachment(requests, { caller, signal }) {
      const { header, chunks } = await splitStreamedUpload(requests);
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
