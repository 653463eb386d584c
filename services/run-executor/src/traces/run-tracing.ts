import { context, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { RUN_ID_ATTRIBUTE, tracer, type HangarConfig } from '@hangar/platform';
import type { RunRow, RunStatus, Usage } from '../runs/run.model.js';

/**
 * A run's own span (`invoke_agent {agent}`, GenAI semantic conventions) and what runs under it: the
 * AI SDK's model-call and tool-call spans (`experimental_telemetry`), approval waits, child runs
 * (their run spans under the tool call that started them). Spans are made whether or not they are
 * kept; the run span recorder keeps them (Observability:*).
 */

export const TENANT_ATTRIBUTE = 'hangar.tenant.id';
export const RUN_STATUS_ATTRIBUTE = 'hangar.run.status';

export type TracingSettings = Pick<HangarConfig, 'Observability'>;

export interface RunTrace {
  /** The context whose active span is the run's: everything the run does is started in it. */
  context: Context;
  end(outcome: { status: RunStatus; usage: Usage; errorType: string | null }): void;
}

export function startRunTrace(run: RunRow, tenantId: string, settings: TracingSettings): RunTrace {
  const { IncludeAgentVersionTag } = settings.Observability;
  const parent = context.active();
  const span: Span = tracer().startSpan(
    `invoke_agent ${run.agentName}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        [RUN_ID_ATTRIBUTE]: run.id,
        [TENANT_ATTRIBUTE]: tenantId,
        'hangar.run.kind': run.kind,
        'hangar.root_run.id': run.rootRunId,
        ...(run.parentRunId && { 'hangar.parent_run.id': run.parentRunId }),
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': run.agentName,
        ...(IncludeAgentVersionTag && run.agentVersion !== null && { 'hangar.agent.version': run.agentVersion }),
      },
    },
    parent,
  );
  return {
    context: trace.setSpan(parent, span),
    end({ status, usage, errorType }) {
      span.setAttributes({
        [RUN_STATUS_ATTRIBUTE]: status,
        'gen_ai.usage.input_tokens': usage.inputTokens,
        'gen_ai.usage.output_tokens': usage.outputTokens,
        ...(errorType && { 'error.type': errorType }),
      });
      if (status === 'Failed') span.setStatus({ code: SpanStatusCode.ERROR, message: errorType ?? undefined });
      span.end();
    },
  };
}

/** The AI SDK's own spans for a model call, kept to metadata unless RecordSensitiveData. */
export function modelCallTelemetry(settings: TracingSettings, runId: string, agentName: string) {
  const { Enabled, RecordSensitiveData } = settings.Observability;
  return {
    isEnabled: Enabled,
    recordInputs: RecordSensitiveData,
    recordOutputs: RecordSensitiveData,
    functionId: agentName,
    metadata: { runId },
  };
}

/**
 * Iterates `inner` with `runContext` active on every resume, so all it starts descends from the run
 * span; otherwise it behaves as `yield* inner` (a throw is thrown into it, a return closes it).
 */
export async function* inRunContext<T, R>(runContext: Context, inner: AsyncGenerator<T, R>): AsyncGenerator<T, R> {
  let step = await context.with(runContext, () => inner.next());
  try {
    while (!step.done) {
      try {
        yield step.value;
      } catch (error) {
        step = await context.with(runContext, () => inner.throw(error));
        continue;
      }
      step = await context.with(runContext, () => inner.next());
    }
    return step.value;
  } finally {
    // The caller stopped reading: the inner generator is closed too.
    if (!step.done) await context.with(runContext, () => inner.return(undefined as R));
  }
}
