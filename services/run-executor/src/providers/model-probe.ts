import { generateText } from 'ai';
import type { Logger } from '@hangar/platform';
import type { CircuitBreaker } from './circuit-breaker.js';
import type { ModelHealth } from './model-health.js';
import type { ModelResolver } from './model-providers.js';

/** A probe that has not answered by then counts as a failure (a provider's own Timeout may be shorter). */
const PROBE_TIMEOUT_MS = 30_000;

/**
 * One background probe round (`Health:BackgroundInterval`): each reported model gets one call of
 * one output token ("ping"). Its outcome counts like a run's call, for the model's health and its
 * circuit, so a model whose runs stopped (open circuit, no traffic) is seen to recover. A model
 * whose circuit is open is left alone until the breaker lets a trial through.
 */
export function createModelProbe(deps: { models: ModelResolver; health: ModelHealth; breaker: CircuitBreaker; logger: Logger }) {
  return async function probeModels(): Promise<void> {
    await Promise.all(
      deps.health.models().map(async (target) => {
        const resolved = deps.models.resolve(target.provider, target.model);
        if (!resolved || deps.breaker.isOpen(resolved.circuit)) return;
        const started = performance.now();
        try {
          await generateText({
            model: resolved.languageModel,
            prompt: 'ping',
            maxOutputTokens: 1,
            maxRetries: 0,
            abortSignal: AbortSignal.timeout(resolved.settings.Timeout ?? PROBE_TIMEOUT_MS),
          });
          deps.breaker.success(resolved.circuit);
          deps.health.record(resolved, 'success', performance.now() - started);
        } catch (error) {
          deps.breaker.failure(resolved.circuit);
          deps.health.record(resolved, 'failure', performance.now() - started);
          deps.logger.warn({ model: resolved.circuit, reason: (error as Error)?.message?.slice(0, 500) }, 'model probe failed');
        }
      }),
    );
  };
}
