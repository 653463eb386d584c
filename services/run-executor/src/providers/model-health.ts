import type { HangarConfig } from '@hangar/platform';
import type { CircuitBreaker, CircuitState } from './circuit-breaker.js';

export type ModelHealthStatus = 'Healthy' | 'Degraded' | 'Unhealthy' | 'Unknown';

export interface ModelHealthEntry {
  provider: string;
  model: string;
  status: ModelHealthStatus;
  circuit: CircuitState;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  latencyMsP50: number | null;
  checkedAt: string;
}

/** A model call as the breaker keys it: a global provider's circuit is `provider/model`. */
export interface ModelCallTarget {
  provider: string;
  model: string;
  circuit: string;
}

/** Latencies kept per model for its median: recent enough to follow a change, enough to be steady. */
const LATENCY_SAMPLES = 50;

interface Observed {
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  consecutiveFailures: number;
  latenciesMs: number[];
}

/**
 * The health of each configured provider's models, from the calls runs (and background probes)
 * make: Unhealthy while the circuit is open (or, breaker off, after `FailureThreshold` failures in
 * a row); Degraded while it is half open or after a failure below that; Healthy after a success;
 * Unknown before any call. A tenant's own provider is not reported (its circuit is the tenant's).
 * The report is computed at most once per `Health:CacheTtl`.
 */
export function createModelHealth(deps: {
  breaker: CircuitBreaker;
  settings: Pick<HangarConfig, 'Providers' | 'Health' | 'CircuitBreaker'>;
  now?: () => number;
}) {
  const now = deps.now ?? (() => Date.now());
  const observed = new Map<string, Observed>();
  let cached: { at: number; entries: ModelHealthEntry[] } | undefined;

  function record(target: ModelCallTarget, outcome: 'success' | 'failure', durationMs: number) {
    if (target.circuit !== `${target.provider}/${target.model}`) return;
    const entry = observed.get(target.circuit) ?? { lastSuccessAt: null, lastFailureAt: null, consecutiveFailures: 0, latenciesMs: [] };
    if (outcome === 'success') {
      entry.lastSuccessAt = now();
      entry.consecutiveFailures = 0;
      entry.latenciesMs = [...entry.latenciesMs.slice(1 - LATENCY_SAMPLES), durationMs];
    } else {
      entry.lastFailureAt = now();
      entry.consecutiveFailures += 1;
    }
    observed.set(target.circuit, entry);
  }

  /** Every configured provider's default and listed models, and every model of one that runs called. */
  function models(): ModelCallTarget[] {
    const keys = new Set<string>();
    for (const [provider, settings] of Object.entries(deps.settings.Providers)) {
      for (const model of [settings.DefaultModel ?? settings.DefaultDeployment, ...Object.keys(settings.Models)]) {
        if (model) keys.add(`${provider}/${model}`);
      }
    }
    for (const key of observed.keys()) if (deps.settings.Providers[key.slice(0, key.indexOf('/'))]) keys.add(key);
    return [...keys].sort().map((circuit) => {
      const slash = circuit.indexOf('/');
      return { provider: circuit.slice(0, slash), model: circuit.slice(slash + 1), circuit };
    });
  }

  function statusOf(entry: Observed | undefined, circuit: CircuitState): ModelHealthStatus {
    if (circuit === 'Open') return 'Unhealthy';
    if (circuit === 'HalfOpen') return 'Degraded';
    if (!entry || (entry.lastSuccessAt === null && entry.lastFailureAt === null)) return 'Unknown';
    if (entry.consecutiveFailures === 0) return 'Healthy';
    return entry.consecutiveFailures >= deps.settings.CircuitBreaker.FailureThreshold ? 'Unhealthy' : 'Degraded';
  }

  function compute(at: number): ModelHealthEntry[] {
    return models().map(({ provider, model, circuit: key }) => {
      const entry = observed.get(key);
      const circuit = deps.breaker.state(key);
      const iso = (time: number | null | undefined) => (time == null ? null : new Date(time).toISOString());
      return {
        provider,
        model,
        status: statusOf(entry, circuit),
        circuit,
        lastSuccessAt: iso(entry?.lastSuccessAt),
        lastFailureAt: iso(entry?.lastFailureAt),
        latencyMsP50: entry?.latenciesMs.length ? median(entry.latenciesMs) : null,
        checkedAt: new Date(at).toISOString(),
      };
    });
  }

  return {
    record,
    models,
    report(): ModelHealthEntry[] {
      const at = now();
      if (!cached || at - cached.at >= deps.settings.Health.CacheTtl) cached = { at, entries: compute(at) };
      return cached.entries;
    },
  };
}

export type ModelHealth = ReturnType<typeof createModelHealth>;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return Math.round(sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2);
}
