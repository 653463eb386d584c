import { agentRegistryModule } from '@hangar/agent-registry';
import { attachmentModule } from '@hangar/attachment';
import { gatewayModule } from '@hangar/gateway';
import { evaluationModule } from '@hangar/evaluation';
import { governanceModule } from '@hangar/governance';
import { knowledgeModule } from '@hangar/knowledge';
import type { HangarModule } from '@hangar/platform';
import { runExecutorModule } from '@hangar/run-executor';
import { sessionModule } from '@hangar/session';
import { createScriptRunner, createSkillModule } from '@hangar/skill';

/**
 * Every module; in one process their clients call each other directly (in-process.ts), with gRPC’s encodings and middleware; only the engines are embedded.
 * This host registers Hangar's script runner: skill scripts run here when Skills:Scripts allows.
 */
export const allInOneModules = (): HangarModule[] => [
  createSkillModule({ scriptRunner: createScriptRunner }),
  agentRegistryModule,
  runExecutorModule,
  sessionModule,
  attachmentModule,
  governanceModule,
  knowledgeModule,
  evaluationModule,
  gatewayModule,
];
