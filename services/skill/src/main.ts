// First: client libraries are patched for spans as they load (see instrumentation.ts).
import '@hangar/platform/instrumentation';
import { runMain } from '@hangar/platform';
import { skillModule } from './skill.module.js';

// No script runner: this process never runs a skill script. A host that wants them composes
// createSkillModule({ scriptRunner: createScriptRunner }) in its own main (README "Skills and their scripts").
await runMain('skill', () => [skillModule]);
