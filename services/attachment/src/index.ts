export { attachmentModule } from './attachment.module.js';
export { createAttachmentService, CHUNK_BYTES, type AttachmentService } from './attachment.service.js';
export { createAttachmentRepository, type AttachmentDatabase, type AttachmentRepository } from './attachment.repository.js';
export { ATTACHMENT_SCHEMA, attachmentMigrations } from './migrations/index.js';
export { detectMediaType, isAllowedMediaType } from './media-type.js';
