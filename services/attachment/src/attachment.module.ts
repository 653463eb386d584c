import { grpcServiceModule } from '@hangar/platform';

/**
 * The Attachment process: a gRPC server with the standard health service and graceful shutdown.
 * Its rules, repository and RPCs arrive with the attachments issue (#4).
 */
export const attachmentModule = grpcServiceModule({
  name: 'Attachment',
  async setup() {},
});
