import { AttachmentServiceDefinition, RetentionServiceDefinition, SessionServiceDefinition } from '@hangar/contracts';
import { contentCipherFrom, createChannel, createServiceClient, grpcServiceModule, HANGAR_VERSION, retentionGrpc } from '@hangar/platform';
import { SESSION_SCHEMA, sessionMigrations } from './migrations/index.js';
import { SESSION_RETENTION_TARGETS } from './retention-targets.js';
import { SESSION_SEALED_COLUMNS } from './sealed-columns.js';
import { sessionGrpc } from './session.grpc.js';
import { createSessionRepository, type SessionDatabase } from './session.repository.js';
import { createSessionService } from './session.service.js';

const RUNTIME_VERSION = `hangar/${HANGAR_VERSION}`;

export const sessionModule = grpcServiceModule({
  name: 'Session',
  dependsOn: ['Attachment'],
  async setup({ config, engines, addressOf }, grpc) {
    const database = await engines.storage.open<SessionDatabase>(SESSION_SCHEMA, sessionMigrations);
    const cipher = contentCipherFrom(config);
    const attachmentChannel = createChannel(addressOf('Attachment'));
    const attachments = createServiceClient(AttachmentServiceDefinition, attachmentChannel);
    const service = createSessionService({
      repository: createSessionRepository(database.db, cipher),
      settings: {
        ownershipEnabled: config.SessionOwnership.Enabled,
        managementRole: config.SessionOwnership.ManagementRole,
        runtimeVersion: RUNTIME_VERSION,
      },
      deleteAttachments: async (caller, sessionId) => (await attachments.deleteSessionAttachments({ sessionId }, { caller })).deleted,
    });
    grpc.server.add(SessionServiceDefinition, sessionGrpc(service));
    // As DELETE /api/sessions/{id} does: the attachments go first, then the sessions with their messages.
    const sessionsWithAttachments = {
      ...SESSION_RETENTION_TARGETS.Sessions,
      beforeDelete: async (keys: Array<Record<string, unknown>>) => {
        for (const { tenant_id, id } of keys) {
          await attachments.deleteSessionAttachments(
            { sessionId: String(id) },
            { caller: { tenantId: String(tenant_id), actor: 'retention' } },
          );
        }
      },
    };
    grpc.server.add(
      RetentionServiceDefinition,
      retentionGrpc(database, { Sessions: sessionsWithAttachments }, { columns: SESSION_SEALED_COLUMNS, cipher }),
    );
    return { close: async () => attachmentChannel.close() };
  },
});
