import { runMain } from '@hangar/platform';
import { skillModule } from './skill.module.js';

await runMain('skill', () => [skillModule]);
