import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RunAuthorizationHandler } from '@hangar/contracts';

/** Loads the host's handler from `Hangar:Api:RunAuthorizationModule` (its `authorizeRun` or default export). */
export async function loadRunAuthorization(
  modulePath: string | null,
  baseDir = process.cwd(),
): Promise<RunAuthorizationHandler | undefined> {
  if (!modulePath) return undefined;
  const exported = await import(pathToFileURL(resolve(baseDir, modulePath)).href);
  const handler = exported.authorizeRun ?? exported.default;
  if (typeof handler !== 'function') {
    throw new Error(`Hangar:Api:RunAuthorizationModule: ${modulePath} exports no authorizeRun function`);
  }
  return handler;
}
