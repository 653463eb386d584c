import { fileURLToPath } from 'node:url';

/**
 * Where the built console is (`npm run build:console`, run by `npm install` and `npm run build`):
 * libs/console/web beside these sources; in a build, `web/` beside the service bundles, since this
 * module is inlined into the gateway's bundle and tools/build.ts copies the console there.
 */
export const CONSOLE_DIRECTORY = fileURLToPath(new URL('../web/', import.meta.url));
