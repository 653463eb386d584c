import type { Instrumentation } from '@opentelemetry/instrumentation';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ConfigError, loadConfig, type LoadConfigOptions } from '../config/load.js';
import type { HangarConfig } from '../config/schema.js';
import { createLogger, type Logger } from '../logging.js';
import { createProcessMetrics, type ProcessMetrics } from '../metrics/process-metrics.js';
import { initTelemetry, shutdownTelemetry } from '../telemetry.js';
import { createEngines, type Engines } from './engines.js';
import { startModules, type HangarModule, type StartedModules } from './modules.js';

export interface RunningProcess {
  config: HangarConfig;
  logger: Logger;
  engines: Engines;
  metrics: ProcessMetrics;
  modules: StartedModules;
  /** With `Drain:Enabled`: lets the work in progress finish, within `Drain:Timeout`. */
  drain(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts modules in one process on engines made from `config`; used by every main.ts and by tests. */
export async function startProcess(options: {
  name: string;
  config: HangarConfig;
  modules: HangarModule[];
  logger?: Logger;
  /** The image a `memory://` embedded store starts from (StorageSettings.embeddedSeed). */
  embeddedSeed?: string;
}): Promise<RunningProcess> {
  const { config } = options;
  const logger = options.logger ?? createLogger({ name: options.name, level: config.Logging.Level, format: config.Logging.Format });
  const tracerProvider = initTelemetry({
    serviceName: `hangar-${options.name}`,
    otlpEndpoint: config.Telemetry.OtlpEndpoint,
    recordRunSpans: config.Observability.Enabled && config.Observability.PersistSpans,
  });
  const engines = await createEngines(config, (error) => logger.warn({ err: error.message }, 'engine trouble'), options.embeddedSeed);
  const { OtlpMetricsEndpoint, MetricsExportInterval } = config.Telemetry;
  const metrics = createProcessMetrics(
    `hangar-${options.name}`,
    OtlpMetricsEndpoint ? { endpoint: OtlpMetricsEndpoint, intervalMs: MetricsExportInterval } : undefined,
  );
  announceClientInstrumentation(config, logger, metrics, tracerProvider);
  let modules: StartedModules;
  try {
    modules = await startModules(options.modules, { config, logger, engines, metrics });
  } catch (error) {
    await engines.close();
    await metrics.shutdown();
    throw error;
  }
  let stopping: Promise<void> | undefined;
  return {
    config,
    logger,
    engines,
    metrics,
    modules,
    drain: () => modules.drain(config.Drain.Timeout),
    stop: () =>
      (stopping ??= (async () => {
        await modules.stop();
        await engines.close();
        await metrics.shutdown();
      })()),
  };
}

/**
 * Client spans and metrics (pg, Redis, fetch) only when something leaves the process over OTLP:
 * run traces leave them out, so without an endpoint they would be made for nothing on every
 * statement. Their spans go to this process's tracer provider and their metrics to its meter
 * provider. Says when a process exporting spans has no instrumentations (it was not started
 * through a service's main.ts).
 */
function announceClientInstrumentation(
  config: HangarConfig,
  logger: Logger,
  metrics: ProcessMetrics,
  tracerProvider: NodeTracerProvider,
): void {
  const instrumentations = (globalThis as Record<symbol, Instrumentation[] | undefined>)[Symbol.for('hangar.clientInstrumentations')];
  const exporting = !!(config.Telemetry.OtlpEndpoint || config.Telemetry.OtlpMetricsEndpoint);
  for (const instrumentation of instrumentations ?? []) {
    if (!exporting) {
      instrumentation.disable();
      continue;
    }
    instrumentation.setMeterProvider(metrics.meterProvider);
    // Handed, not left to the global: a bundle inlines its own @opentelemetry/api, and the copy the
    // instrumentations load from node_modules never learns of the provider registered through it
    // (their tracer stayed a no-op: no pg, Redis or fetch spans from the built services).
    instrumentation.setTracerProvider(tracerProvider);
  }
  if (!instrumentations && exporting)
    logger.info('no pg, Redis or fetch client spans: @hangar/platform/instrumentation was not imported before them');
}

/**
 * Keeps a process serving through a promise rejection nobody handled (Node's default ends the
 * process, and every request in flight with it, for one forgotten `catch`): it is logged with its
 * error and counted, and the count is reported when the process stops (`hangar <name> stopped`,
 * `unhandledRejections`), so a test can require it to stay 0.
 */
export function guardProcess(logger: Logger): { unhandledRejections(): number } {
  let count = 0;
  process.on('unhandledRejection', (reason) => {
    count += 1;
    logger.error({ err: reason, unhandledRejections: count }, 'unhandled promise rejection (the process goes on)');
  });
  return { unhandledRejections: () => count };
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
  const logger = createLogger({ name, level: config.Logging.Level, format: config.Logging.Format });
  const guard = guardProcess(logger);
  let running: RunningProcess;
  try {
    running = await startProcess({ name, config, modules: modules(config), logger });
  } catch (error) {
    console.error(`hangar ${name} failed to start: ${(error as Error).message}`);
    process.exit(1);
  }
  logger.info({ startupMs: Date.now() - started }, `hangar ${name} started`);
  const drain = config.Drain;
  const shutdown = async (signal: string) => {
    logger.info({ signal, drain: drain.Enabled }, drain.Enabled ? 'draining, then shutting down' : 'shutting down');
    // A stop waits for queued runs up to Drain:Timeout whether or not a drain comes first.
    const force = setTimeout(() => process.exit(1), (drain.Enabled ? 2 : 1) * drain.Timeout + 15_000).unref();
    try {
      if (drain.Enabled) await running.drain();
      await running.stop();
      await shutdownTelemetry();
    } finally {
      clearTimeout(force);
      logger.info({ unhandledRejections: guard.unhandledRejections() }, `hangar ${name} stopped`);
      process.exit(0);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  return running;
}
