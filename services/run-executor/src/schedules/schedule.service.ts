import {
  AGENT_RUN_HANDLER_KEY,
  AgentRunPayloadSchema,
  DEFAULT_SCHEDULABLE_HANDLER_KEYS,
  jsonPath,
  type AgentRunPayload,
} from '@hangar/contracts';
import {
  HangarError,
  notFound,
  validationError,
  type AuditWriter,
  type Caller,
  type FieldError,
  type HangarConfig,
  type Logger,
  RECORD_NAME,
} from '@hangar/platform';
import type { AgentLoader } from '../clients/ports.js';
import { laneOf, queuedRun, type QueuedRunPayload, type QueuedRuns } from '../jobs/queued-runs.service.js';
import type { StartRunRequest } from '../runs/run.model.js';
import { cronProblems, cronTimes } from './cron-times.js';
import type { Schedule } from './schedule.model.js';
import type { ScheduleRepository } from './schedule.repository.js';

/** Run labels naming the schedule and the fire time a run stands for. */
const SCHEDULE_LABEL = 'schedule';
const FIRE_TIME_LABEL = 'scheduleFireAt';

export interface ScheduleRequest {
  handlerKey: string;
  cron: string;
  /** Absent: UTC. */
  timeZone?: string;
  payload: Record<string, unknown>;
  enabled: boolean;
}

export interface ScheduleServiceDeps {
  repository: ScheduleRepository;
  agents: Pick<AgentLoader, 'load'>;
  queued: Pick<QueuedRuns, 'enqueueScheduled' | 'wakeWorkers'>;
  audit: AuditWriter;
  logger: Logger;
  settings: Pick<HangarConfig, 'Scheduling'>;
  now?: () => Date;
}

/** The run an `agent-run` payload asks for. */
const runRequest = (payload: AgentRunPayload): StartRunRequest => ({
  agentName: payload.agentName,
  sessionId: payload.sessionId,
  messages: payload.messages ?? [{ role: 'user', content: payload.message! }],
  parameters: payload.parameters ?? [],
  isStreaming: false,
  attachments: [],
});

/** A tenant's schedules (API.md "Schedules"), and firing the ones that are due. */
export function createScheduleService(deps: ScheduleServiceDeps) {
  const { repository, settings } = deps;
  const now = deps.now ?? (() => new Date());
  const configured = settings.Scheduling.HttpSchedulableHandlerKeys;
  // Only agent-run has a handler so far; a configured key without one is refused like an unlisted one.
  const schedulable: string[] = (configured.length ? configured : DEFAULT_SCHEDULABLE_HANDLER_KEYS).filter(
    (key) => key === AGENT_RUN_HANDLER_KEY,
  );

  async function existing(caller: Caller, name: string): Promise<Schedule> {
    const schedule = RECORD_NAME.test(name) ? await repository.get(caller.tenantId, name) : undefined;
    if (!schedule) throw notFound(`schedule "${name}" not found`);
    return schedule;
  }

  /** The request as it may be stored, refused with every reason at once. */
  function checked(name: string, request: ScheduleRequest): { timeZone: string; payload: AgentRunPayload } {
    const errors: FieldError[] = [];
    const timeZone = request.timeZone ?? 'UTC';
    if (!RECORD_NAME.test(name))
      errors.push({ path: 'name', message: 'must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit' });
    if (!schedulable.includes(request.handlerKey))
      errors.push({
        path: 'handlerKey',
        message: `must be one of ${schedulable.join(', ') || '(none)'} (Scheduling:HttpSchedulableHandlerKeys)`,
      });
    errors.push(...cronProblems(request.cron, timeZone));
    const payload = AgentRunPayloadSchema.safeParse(request.payload);
    if (!payload.success)
      errors.push(...payload.error.issues.map((issue) => ({ path: jsonPath(['payload', ...issue.path]), message: issue.message })));
    if (errors.length || !payload.success) throw validationError(`the schedule "${name}" is not valid`, errors);
    return { timeZone, payload: payload.data };
  }

  /** The agent must exist when the schedule is saved; one deleted later fails each firing's run instead. */
  async function requireAgent(caller: Caller, agentName: string) {
    try {
      await deps.agents.load(caller, agentName);
    } catch (error) {
      if (error instanceof HangarError && error.kind === 'notFound')
        throw validationError(`agent "${agentName}" not found`, [{ path: 'payload.agentName', message: 'no such agent' }]);
      throw error;
    }
  }

  /** Queues the due schedule's run for the latest of its fire times that have come (missed ones are not caught up). */
  async function fire(schedule: Schedule, at: Date): Promise<boolean> {
    const times = cronTimes(schedule.cron, schedule.timeZone);
    const fireAt = times.latestDue(schedule.nextFireAt!, at);
    const request = runRequest(schedule.payload as AgentRunPayload);
    const { savedBy } = schedule;
    const payload: QueuedRunPayload = { caller: savedBy, request, admitQueued: true };
    const run = queuedRun(savedBy, {
      agentName: request.agentName,
      agentVersion: null,
      sessionId: request.sessionId ?? null,
      kind: 'Scheduled',
      labels: { ...savedBy.labels, [SCHEDULE_LABEL]: schedule.name, [FIRE_TIME_LABEL]: fireAt.toISOString() },
    });
    const job = { payload, lane: laneOf(settings, schedule.handlerKey), maxAttempts: settings.Scheduling.MaxAttempts };
    const fired = await repository.fire(schedule, schedule.nextFireAt!, { fireAt, nextFireAt: times.nextAfter(at), run, job });
    if (fired) deps.queued.wakeWorkers(run.id);
    return fired;
  }

  return {
    async put(caller: Caller, name: string, request: ScheduleRequest) {
      const { timeZone, payload } = checked(name, request);
      await requireAgent(caller, payload.agentName);
      const nextFireAt = request.enabled ? cronTimes(request.cron, timeZone).nextAfter(now()) : null;
      const saved = await repository.put(caller.tenantId, {
        name,
        handlerKey: request.handlerKey,
        cron: request.cron,
        timeZone,
        payload,
        enabled: request.enabled,
        savedBy: caller,
        nextFireAt,
      });
      await deps.audit(caller, {
        action: saved.created ? 'schedule.created' : 'schedule.updated',
        resourceType: 'schedule',
        resourceId: name,
        details: { handlerKey: request.handlerKey, cron: request.cron, timeZone, agentName: payload.agentName, enabled: request.enabled },
      });
      return saved;
    },

    get: existing,

    list: (caller: Caller) => repository.list(caller.tenantId),

    async delete(caller: Caller, name: string): Promise<void> {
      if (!RECORD_NAME.test(name) || !(await repository.delete(caller.tenantId, name))) throw notFound(`schedule "${name}" not found`);
      await deps.audit(caller, { action: 'schedule.deleted', resourceType: 'schedule', resourceId: name, details: {} });
    },

    /** One run of the schedule now, for the caller (admitted by quota like any queued run), enabled or not. */
    async trigger(caller: Caller, name: string): Promise<string> {
      const schedule = await existing(caller, name);
      const request = runRequest(schedule.payload as AgentRunPayload);
      const run = await deps.queued.enqueueScheduled(caller, request, { ...caller.labels, [SCHEDULE_LABEL]: name });
      await repository.recordRun(schedule.id, run.id);
      await deps.audit(caller, { action: 'schedule.triggered', resourceType: 'schedule', resourceId: name, details: { runId: run.id } });
      return run.id;
    },

    /** Fires every due schedule (up to Scheduling:MaxItemsPerJob a round); one that fails is logged and tried next round. */
    async fireDue(): Promise<number> {
      const at = now();
      let fired = 0;
      for (const schedule of await repository.due(at, settings.Scheduling.MaxItemsPerJob)) {
        try {
          if (await fire(schedule, at)) fired++;
        } catch (error) {
          deps.logger.warn({ err: error, schedule: schedule.name, tenantId: schedule.tenantId }, 'schedule not fired');
        }
      }
      return fired;
    },

    soonestFireAt: repository.soonest,
  };
}

export type ScheduleService = ReturnType<typeof createScheduleService>;
