export { attachmentModule } from './attachment.module.js';
