import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { codeAgentName, isCodeAgent, type CodeAgent } from '@hangar/contracts';

/**
 * Imports every module of `CodeAgents:Modules` and collects the agents it exports (as named
 * exports, the default export, or arrays of them). Two code agents with one name stop the start.
 */
export async function loadCodeAgents(modules: readonly string[], baseDir = process.cwd()): Promise<Map<string, CodeAgent>> {
  const agents = new Map<string, CodeAgent>();
  for (const modulePath of modules) {
    const exported: Record<string, unknown> = await import(pathToFileURL(resolve(baseDir, modulePath)).href);
    for (const value of Object.values(exported).flatMap((entry) => (Array.isArray(entry) ? entry : [entry]))) {
      if (!isCodeAgent(value)) continue;
      const name = codeAgentName(value);
      if (agents.has(name)) throw new Error(`code agent "${name}" is defined twice (in ${modulePath})`);
      agents.set(name, value);
    }
  }
  return agents;
}
