// Imported rather than read, so the built JavaScript carries the version with it.
import workspacePackage from '../../../package.json' with { type: 'json' };

/** Hangar's release version, from the workspace package.json. */
export const HANGAR_VERSION: string = workspacePackage.version;
