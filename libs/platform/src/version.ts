import { readFileSync } from 'node:fs';

/** Hangar's release version, from the workspace package.json. */
export const HANGAR_VERSION: string = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')).version;
