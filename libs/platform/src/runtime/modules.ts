import { warnNotYetEffective } from '../config/not-yet-effective.js';
import type { HangarConfig, ServiceName } from '../config/schema.js';
import type { Logger } from '../logging.js';
import type { ProcessMetrics } from '../metrics/process-metrics.js';
import type { Engines } from './engines.js';

export type ModuleName = ServiceName | 'Gateway';

export interface ModuleContext {
  config: HangarConfig;
  logger: Logger;
  engines: Engines;
  /** The process's metrics: what its modules record, what its `/metrics` shows. */
  metrics: ProcessMetrics;
  /** `host:port` of a service: the one started in this process, else `Services:{name}:Address`. */
  addressOf(service: ServiceName): string;
}

export interface RunningModule {
  /** `host:port` where its gRPC server listens (absent for the gateway). */
  address?: string;
  /** Port of the module's HTTP listener, when it has one. */
  httpPort?: number;
  /**
   * Drain (`Drain:Enabled`): reports not ready and takes no new work at once, lets the work in
   * progress finish, and ends what is left when `deadline` aborts; resolves once nothing runs.
   */
  drain?(deadline: AbortSignal): Promise<void>;
  stop(): Promise<void>;
}

/** A named component with the services it calls; the same module runs alone or beside others. */
export interface HangarModule {
  name: ModuleName;
  dependsOn: ServiceName[];
  start(context: ModuleContext): Promise<RunningModule>;
}

/** Dependencies first; a cycle is refused. Dependencies not in the set are expected to be remote. */
export function startOrder(modules: HangarModule[]): HangarModule[] {
  const byName = new Map(modules.map((module) => [module.name, module]));
  const ordered: HangarModule[] = [];
  const state = new Map<ModuleName, 'visiting' | 'done'>();
  const visit = (module: HangarModule, path: ModuleName[]) => {
    if (state.get(module.name) === 'done') return;
    if (state.get(module.name) === 'visiting') {
      throw new Error(`module dependency cycle: ${[...path, module.name].join(' -> ')}`);
    }
    state.set(module.name, 'visiting');
    for (const dependency of module.dependsOn) {
      const target = byName.get(dependency);
      if (target) visit(target, [...path, module.name]);
    }
    state.set(module.name, 'done');
    ordered.push(module);
  };
  for (const module of modules) visit(module, []);
  return ordered;
}

export interface StartedModules {
  running: Map<ModuleName, RunningModule>;
  /** Every module drains at once, under one deadline `timeoutMs` away. */
  drain(timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startModules(modules: HangarModule[], base: Omit<ModuleContext, 'addressOf'>): Promise<StartedModules> {
  warnNotYetEffective(base.config, base.logger);
  const running = new Map<ModuleName, RunningModule>();
  const stopAll = async () => {
    for (const name of [...running.keys()].reverse()) {
      try {
        await running.get(name)!.stop();
      } catch (error) {
        base.logger.error({ err: error, module: name }, 'module failed to stop cleanly');
      }
      running.delete(name);
    }
  };
  const addressOf = (service: ServiceName) => {
    const address = running.get(service)?.address ?? base.config.Services[service].Address;
    if (!address) throw new Error(`Services:${service}:Address is not set and ${service} does not run in this process`);
    return address;
  };
  try {
    for (const module of startOrder(modules)) {
      const started = await module.start({ ...base, logger: base.logger.child({ module: module.name }), addressOf });
      running.set(module.name, started);
      base.logger.info({ module: module.name, address: started.address, httpPort: started.httpPort }, 'module started');
    }
  } catch (error) {
    await stopAll();
    throw error;
  }
  const drainAll = async (timeoutMs: number) => {
    const deadline = AbortSignal.timeout(timeoutMs);
    await Promise.all(
      [...running].map(([name, module]) =>
        module.drain?.(deadline).catch((error) => base.logger.error({ err: error, module: name }, 'module failed to drain')),
      ),
    );
  };
  return { running, drain: drainAll, stop: stopAll };
}
