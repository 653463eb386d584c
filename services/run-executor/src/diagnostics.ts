import type { PubSub } from '@hangar/messaging';

export type EngineStatus = 'Healthy' | 'Unhealthy' | 'Unknown';

export interface EngineHealth {
  name: 'sql' | 'pubsub' | 'eventLog';
  kind: string;
  status: EngineStatus;
  detail?: string;
}

/** How long a check may take before its engine counts as unhealthy. */
const CHECK_TIMEOUT_MS = 2000;

/**
 * The run executor's part of GET /api/diagnostics. Its SQL store answers the job queue query
 * (the check and the figure in one round trip), pub/sub takes a publish; a durable event log
 * (Kafka) is not written to for a check, so its state is Unknown (the outbox relay logs its trouble).
 */
export function createDiagnostics(deps: {
  jobQueueDepth: () => Promise<Record<string, number>>;
  pubsub: PubSub;
  sqlKind: string;
  eventLogKind: string;
}) {
  return async function diagnose(): Promise<{ engines: EngineHealth[]; jobQueueDepth: Record<string, number> }> {
    const [queue, pubsub] = await Promise.all([check(deps.jobQueueDepth()), check(deps.pubsub.publish('diagnostics:ping', ''))]);
    return {
      engines: [
        { name: 'sql', kind: deps.sqlKind, ...queue.health },
        { name: 'pubsub', kind: deps.pubsub.kind, ...pubsub.health },
        { name: 'eventLog', kind: deps.eventLogKind, status: deps.eventLogKind === 'memory' ? 'Healthy' : 'Unknown' },
      ],
      jobQueueDepth: queue.value ?? {},
    };
  };
}

async function check<T>(work: Promise<T>): Promise<{ value?: T; health: { status: EngineStatus; detail?: string } }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    return { value: await Promise.race([work, timeout]), health: { status: 'Healthy' } };
  } catch (error) {
    return { health: { status: 'Unhealthy', detail: (error as Error)?.message?.slice(0, 200) ?? String(error) } };
  } finally {
    clearTimeout(timer);
  }
}
