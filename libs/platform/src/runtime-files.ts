import { fileURLToPath } from 'node:url';

/** Defined (as true) only in the built JavaScript, by `npm run build` (tools/build.ts). */
declare const HANGAR_BUILT: boolean | undefined;

/**
 * A file Hangar reads at run time (the .proto files, the trial configuration), by its path in the
 * repository. Running the TypeScript sources, that is the repository's own file; running the built
 * JavaScript, it is the copy the build put in its output directory, the parent of each bundle's
 * directory (`dist/<service>/main.js`).
 */
export function runtimeFile(pathInRepository: string): string {
  const root = typeof HANGAR_BUILT === 'undefined' ? new URL('../../../', import.meta.url) : new URL('../', import.meta.url);
  return fileURLToPath(new URL(pathInRepository, root));
}
