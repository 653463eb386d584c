import { SkillServiceDefinition } from '@hangar/contracts';
import { grpcServiceModule } from '@hangar/platform';
import { skillMigrations } from './migrations/index.js';
import { skillGrpc } from './skill.grpc.js';
import { createSkillRepository, type SkillDatabase } from './skill.repository.js';
import { createSkillService } from './skill.service.js';

export const skillModule = grpcServiceModule({
  name: 'Skill',
  async setup({ engines }, grpc) {
    const database = await engines.storage.open<SkillDatabase>('skills', skillMigrations);
    grpc.server.add(SkillServiceDefinition, skillGrpc(createSkillService({ repository: createSkillRepository(database.db) })));
  },
});
