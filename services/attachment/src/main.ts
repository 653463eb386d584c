import { runMain } from '@hangar/platform';
import { attachmentModule } from './attachment.module.js';

await runMain('attachment', () => [attachmentModule]);
