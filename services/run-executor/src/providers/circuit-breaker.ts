export type CircuitState = 'Closed' | 'Open' | 'HalfOpen';

/**
 * One breaker per provider+model: after `failureThreshold` consecutive failures it opens for
 * `breakDurationMs`; the first call after that is a trial (half open), and one more failure reopens it.
 */
export function createCircuitBreaker(
  settings: { enabled: boolean; failureThreshold: number; breakDurationMs: number },
  now = () => Date.now(),
) {
  const circuits = new Map<string, { failures: number; openUntil: number }>();
  return {
    isOpen(key: string): boolean {
      if (!settings.enabled) return false;
      const circuit = circuits.get(key);
      return !!circuit && circuit.openUntil > now();
    },
    state(key: string): CircuitState {
      const circuit = circuits.get(key);
      if (!settings.enabled || !circuit || circuit.failures < settings.failureThreshold) return 'Closed';
      return circuit.openUntil > now() ? 'Open' : 'HalfOpen';
    },
    success(key: string) {
      circuits.delete(key);
    },
    failure(key: string) {
      const circuit = circuits.get(key) ?? { failures: 0, openUntil: 0 };
      circuit.failures += 1;
      if (circuit.failures >= settings.failureThreshold) circuit.openUntil = now() + settings.breakDurationMs;
      circuits.set(key, circuit);
    },
  };
}

export type CircuitBreaker = ReturnType<typeof createCircuitBreaker>;

/** At most `limit` calls at once per key (unlimited when null); the rest wait in order. */
export function createConcurrencyLimiter(limit: number | null) {
  const active = new Map<string, number>();
  const waiting = new Map<string, Array<() => void>>();
  return {
    async acquire(key: string): Promise<() => void> {
      if (limit !== null && (active.get(key) ?? 0) >= limit) {
        await new Promise<void>((resolve) => {
          const queue = waiting.get(key) ?? [];
          queue.push(resolve);
          waiting.set(key, queue);
        });
      } else {
        active.set(key, (active.get(key) ?? 0) + 1);
      }
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const next = waiting.get(key)?.shift();
        if (next) next();
        else active.set(key, (active.get(key) ?? 1) - 1);
      };
    },
  };
}

export type ConcurrencyLimiter = ReturnType<typeof createConcurrencyLimiter>;
