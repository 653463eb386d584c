import type { Meter } from '@opentelemetry/api';
import { DURATION_BUCKETS } from '@hangar/platform';
import type { ModelCallTarget } from '../providers/model-health.js';
import type { Cost, RunStatus, Usage } from './run.model.js';
import type { RunUpdate } from './run-update.js';

/** The run series of API.md "Operations", recorded by the process that executes the run. */
export function createRunMetrics(meter: Meter) {
  const histogram = (name: string, description: string) =>
    meter.createHistogram(name, { description, advice: { explicitBucketBoundaries: DURATION_BUCKETS } });
  const started = meter.createCounter('hangar_runs_started_total', {
    description: 'Runs that started executing (children and queued runs included)',
  });
  const finished = meter.createCounter('hangar_runs_finished_total', { description: 'Runs that ended, by status' });
  const duration = histogram('hangar_run_duration_seconds', 'Run duration from start to end, in seconds');
  const firstToken = histogram(
    'hangar_run_time_to_first_token_seconds',
    'Time from a run start to the first text its caller receives, in seconds',
  );
  const tokens = meter.createCounter('hangar_tokens_total', {
    description: 'Tokens runs used, by kind (input counts every prompt token, cached_input the part read from a cache)',
  });
  const cost = meter.createCounter('hangar_run_cost_total', { description: 'Cost of the runs that ended, by currency' });
  const modelCall = histogram(
    'hangar_model_call_duration_seconds',
    'Duration of model calls runs made, in seconds, by provider, model and outcome',
  );

  return {
    /** Counts a run as started; what it returns records that run's first token and its end. */
    runStarted() {
      started.add(1);
      const startedAt = performance.now();
      let firstTokenSeen = false;
      return {
        firstToken() {
          if (firstTokenSeen) return;
          firstTokenSeen = true;
          firstToken.record((performance.now() - startedAt) / 1000);
        },
        finished(status: RunStatus, usage: Usage, spent: Cost | null) {
          finished.add(1, { status });
          duration.record((performance.now() - startedAt) / 1000);
          for (const [kind, count] of [
            ['input', usage.inputTokens],
            ['output', usage.outputTokens],
            ['cached_input', usage.cachedInputTokens],
            ['reasoning', usage.reasoningTokens],
          ] as const) {
            if (count > 0) tokens.add(count, { kind });
          }
          if (spent && spent.total > 0) cost.add(spent.total, { currency: spent.currency });
        },
      };
    },
    modelCall(target: ModelCallTarget, outcome: 'success' | 'failure', durationMs: number) {
      modelCall.record(durationMs / 1000, { provider: target.provider, model: target.model, outcome });
    },
  };
}

export type RunMetrics = ReturnType<typeof createRunMetrics>;
export type RunObservation = ReturnType<RunMetrics['runStarted']>;

/**
 * Passes a run's updates through, telling `onFirstText` of the first text delta; a caller that
 * stops reading still closes `updates` (as `yield*` would).
 */
export async function* noticingFirstText<T>(updates: AsyncGenerator<RunUpdate, T>, onFirstText: () => void): AsyncGenerator<RunUpdate, T> {
  let done = false;
  try {
    for (let step = await updates.next(); ; step = await updates.next()) {
      if (step.done) {
        done = true;
        return step.value;
      }
      if (step.value.type === 'text-delta') onFirstText();
      yield step.value;
    }
  } finally {
    if (!done) await updates.return(undefined as never);
  }
}
