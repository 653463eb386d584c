import type { HangarModule } from '@hangar/platform';

/**
 * `@hangar/all-in-one` as the split projects' test files import it (vitest.config.ts): there every
 * service runs in a process of its own from the run's build and `startHangar()` starts none of the
 * modules it is given, so loading every service into the test file's own process only cost its
 * collect (the whole of Hangar's sources through vitest's module runner, for each file).
 */
export const allInOneModules = (): HangarModule[] => [];
