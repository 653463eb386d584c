import { GovernanceServiceDefinition, RetentionServiceDefinition, SkillServiceDefinition } from '@hangar/contracts';
import { auditOrLog, createChannel, createServiceClient, grpcServiceModule, retentionGrpc } from '@hangar/platform';
import { createGrantRepository } from './grants/grant.repository.js';
import { createGrantService } from './grants/grant.service.js';
import { SKILL_RETENTION_TARGETS } from './grants/retention-targets.js';
import { SKILL_SCHEMA, skillMigrations } from './migrations/index.js';
import { interpreterTable, type ScriptRunner, type ScriptRunnerSettings } from './scripts/script-runner.js';
import { createScriptService } from './scripts/script.service.js';
import { skillGrpc } from './skill.grpc.js';
import { createSkillRepository, type SkillDatabase } from './skills/skill.repository.js';
import { createSkillService } from './skills/skill.service.js';
import { loadSkillsOnDisk } from './skills/skills-on-disk.js';

/** How long a script call waits for a free slot (Skills:Scripts:MaxConcurrent*) before it is refused. */
const SCRIPT_SLOT_WAIT_MS = 10_000;

export interface SkillModuleOptions {
  /**
   * The script runner, registered in code by the host (SPEC: settings or grants alone never execute
   * a script). The all-in-one process registers `createScriptRunner`; without one no script runs,
   * whatever Skills:Scripts:Enabled says.
   */
  scriptRunner?: (settings: ScriptRunnerSettings) => ScriptRunner;
}

export const createSkillModule = (options: SkillModuleOptions = {}) =>
  grpcServiceModule({
    name: 'Skill',
    dependsOn: ['Governance'],
    async setup({ config, engines, addressOf, logger }, grpc) {
      const database = await engines.storage.open<SkillDatabase>(SKILL_SCHEMA, skillMigrations);
      const governanceChannel = createChannel(addressOf('Governance'));
      const governance = createServiceClient(GovernanceServiceDefinition, governanceChannel);
      const audit = auditOrLog(async (caller, entry) => void (await governance.recordAudit(entry, { caller })), logger);
      const { Skills } = config;
      const interpreters = interpreterTable(Skills.Scripts.Interpreters);
      const skills = createSkillService({
        repository: createSkillRepository(database.db),
        onDisk: await loadSkillsOnDisk(Skills.Scripts.SkillRoots, Skills.Scripts.SearchDepth, logger),
        limits: {
          MaxInstructionsLength: Skills.MaxInstructionsLength,
          MaxResourceContentLength: Skills.MaxResourceContentLength,
          MaxResourcesPerSkill: Skills.MaxResourcesPerSkill,
          Scripts: { MaxScriptContentLength: Skills.Scripts.MaxScriptContentLength, MaxScriptsPerSkill: Skills.Scripts.MaxScriptsPerSkill },
        },
        hasInterpreter: (extension) => interpreters.has(extension),
        audit,
      });
      const grants = createGrantService({ repository: createGrantRepository(database.db), scriptsEnabled: Skills.Scripts.Enabled, audit });
      const scriptSettings = Skills.Scripts;
      const executes = scriptSettings.Enabled && scriptSettings.PlatformIsolationAcknowledged && options.scriptRunner !== undefined;
      if (scriptSettings.Enabled && !options.scriptRunner)
        logger.warn('Skills:Scripts:Enabled is true but this host registered no script runner: no skill script will run');
      const runner = executes
        ? options.scriptRunner!({
            interpreters: scriptSettings.Interpreters,
            environmentAllowList: scriptSettings.EnvironmentAllowList,
            timeoutMs: scriptSettings.Timeout,
            maxOutputBytes: scriptSettings.MaxOutputBytes,
            maxArgumentBytes: scriptSettings.MaxArgumentBytes,
            maxConcurrentPerTenant: scriptSettings.MaxConcurrentPerTenant,
            maxConcurrentTotal: scriptSettings.MaxConcurrentTotal,
            concurrencyWaitMs: SCRIPT_SLOT_WAIT_MS,
          })
        : undefined;
      const scripts = createScriptService({ skills, grants, runner, allowStoredScripts: scriptSettings.AllowStoredScripts });
      grpc.server.add(SkillServiceDefinition, skillGrpc(skills, grants, scripts));
      grpc.server.add(RetentionServiceDefinition, retentionGrpc(database, SKILL_RETENTION_TARGETS));
      return { close: async () => governanceChannel.close() };
    },
  });

/** The skill service without a script runner: no script ever runs (a host registers one with createSkillModule). */
export const skillModule = createSkillModule();
