import { GovernanceServiceDefinition, SkillServiceDefinition } from '@hangar/contracts';
import { auditOrLog, createChannel, createServiceClient, grpcServiceModule } from '@hangar/platform';
import { createGrantRepository } from './grants/grant.repository.js';
import { createGrantService } from './grants/grant.service.js';
import { skillMigrations } from './migrations/index.js';
import { skillGrpc } from './skill.grpc.js';
import { createSkillRepository, type SkillDatabase } from './skills/skill.repository.js';
import { createSkillService } from './skills/skill.service.js';
import { loadSkillsOnDisk } from './skills/skills-on-disk.js';

/** Whether Skills:Scripts:Interpreters names a command line for the extension (keys with or without the dot). */
export const interpreterKnown = (interpreters: Record<string, string>) => (extension: string) =>
  Boolean(interpreters[extension] ?? interpreters[`.${extension}`]);

export const skillModule = grpcServiceModule({
  name: 'Skill',
  dependsOn: ['Governance'],
  async setup({ config, engines, addressOf, logger }, grpc) {
    const database = await engines.storage.open<SkillDatabase>('skills', skillMigrations);
    const governanceChannel = createChannel(addressOf('Governance'));
    const governance = createServiceClient(GovernanceServiceDefinition, governanceChannel);
    const audit = auditOrLog(async (caller, entry) => void (await governance.recordAudit(entry, { caller })), logger);
    const { Skills } = config;
    const skills = createSkillService({
      repository: createSkillRepository(database.db),
      onDisk: await loadSkillsOnDisk(Skills.Scripts.SkillRoots, Skills.Scripts.SearchDepth, logger),
      limits: {
        MaxInstructionsLength: Skills.MaxInstructionsLength,
        MaxResourceContentLength: Skills.MaxResourceContentLength,
        MaxResourcesPerSkill: Skills.MaxResourcesPerSkill,
        Scripts: { MaxScriptContentLength: Skills.Scripts.MaxScriptContentLength, MaxScriptsPerSkill: Skills.Scripts.MaxScriptsPerSkill },
      },
      hasInterpreter: interpreterKnown(Skills.Scripts.Interpreters),
      audit,
    });
    const grants = createGrantService({ repository: createGrantRepository(database.db), scriptsEnabled: Skills.Scripts.Enabled, audit });
    grpc.server.add(SkillServiceDefinition, skillGrpc(skills, grants));
    return { close: async () => governanceChannel.close() };
  },
});
