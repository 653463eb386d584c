import { AttachmentServiceDefinition, RetentionServiceDefinition } from '@hangar/contracts';
import { contentCipherFrom, grpcServiceModule, retentionGrpc } from '@hangar/platform';
import { attachmentGrpc } from './attachment.grpc.js';
import { createAttachmentRepository, type AttachmentDatabase } from './attachment.repository.js';
import { createAttachmentService } from './attachment.service.js';
import { ATTACHMENT_SCHEMA, attachmentMigrations } from './migrations/index.js';
import { ATTACHMENT_RETENTION_TARGETS } from './retention-targets.js';
import { ATTACHMENT_SEALED_COLUMNS } from './sealed-columns.js';

export const attachmentModule = grpcServiceModule({
  name: 'Attachment',
  async setup({ config, engines, logger }, grpc) {
    const database = await engines.storage.open<AttachmentDatabase>(ATTACHMENT_SCHEMA, attachmentMigrations);
    const cipher = contentCipherFrom(config);
    const service = createAttachmentService({
      repository: createAttachmentRepository(database.db, cipher),
      settings: { maxBytes: config.Attachments.MaxBytes, allowedMediaTypes: config.Attachments.AllowedMediaTypes },
    });
    const swept = await service.sweepUnfinishedUploads();
    if (swept > 0) logger.info({ swept }, 'removed uploads left unfinished by an earlier process');
    grpc.server.add(AttachmentServiceDefinition, attachmentGrpc(service));
    grpc.server.add(
      RetentionServiceDefinition,
      retentionGrpc(database, ATTACHMENT_RETENTION_TARGETS, { columns: ATTACHMENT_SEALED_COLUMNS, cipher }),
    );
  },
});
