import { ConfigError, loadConfig, type LoadConfigOptions } from '../config/load.js';
import type { HangarConfig } from '../config/schema.js';
import { createLogger, type Logger } from '../logging.js';
import { initTelemetry, shutdownTelemetry } from '../telemetry.js';
import { createEngines, type Engines } from './engines.js';
import { startModules, type HangarModule, type StartedModules } from './modules.js';

export interface RunningProcess {
  config: HangarConfig;
  logger: Logger;
  engines: Engines;
  modules: StartedModules;
  stop(): Promise<void>;
}

/** Starts modules in one process on engines made from `config`; used by every main.ts and by tests. */
export async function startProcess(options: {
  name: string;
  config: HangarConfig;
  modules: HangarModule[];
  logger?: Logger;
}): Promise<RunningProcess> {
  const { config } = options;
  const logger = options.logger ?? createLogger({ name: options.name, level: config.Logging.Level });
  initTelemetry({ serviceName: `hangar-${options.name}`, otlpEndpoint: config.Telemetry.OtlpEndpoint });
  const engines = await createEngines(config, (error) => logger.warn({ err: error.message }, 'messaging engine trouble'));
  let modules: StartedModules;
  try {
    modules = await startModules(options.modules, { config, logger, engines });
  } catch (error) {
    await engines.close();
    throw error;
  }
  let stopping: Promise<void> | undefined;
  return {
    config,
    logger,
    engines,
    modules,
    stop: () =>
      (stopping ??= (async () => {
        await modules.stop();
        await engines.close();
      })()),
  };
}

/**
 * The body of a process entry (`main.ts`): configuration from the environment, start, and a
 * graceful stop on SIGTERM/SIGINT. A configuration error ends the process with its message.
 */
export async function runMain(
  name: string,
  modules: (config: HangarConfig) => HangarModule[],
  options: LoadConfigOptions = {},
): Promise<RunningProcess> {
  let config: HangarConfig;
  try {
    config = loadConfig(options);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const started = Date.now();
  let running: RunningProcess;
  try {
    running = await startProcess({ name, config, modules: modules(config) });
  } catch (error) {
    console.error(`hangar ${name} failed to start: ${(error as Error).message}`);
    process.exit(1);
  }
  running.logger.info({ startupMs: Date.now() - started }, `hangar ${name} started`);
  const shutdown = async (signal: string) => {
    running.logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 15_000).unref();
    try {
      await running.stop();
      await shutdownTelemetry();
    } finally {
      clearTimeout(force);
      process.exit(0);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  return running;
}
