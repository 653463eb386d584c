import type { schedulePb as pb } from '@hangar/contracts';
import type { CallerContext } from '@hangar/platform';
import type { Schedule } from './schedule.model.js';
import type { ScheduleService } from './schedule.service.js';

const scheduleToProto = (schedule: Schedule): pb.Schedule => ({
  name: schedule.name,
  handlerKey: schedule.handlerKey,
  cron: schedule.cron,
  timeZone: schedule.timeZone,
  payload: schedule.payload,
  enabled: schedule.enabled,
  nextFireAt: schedule.nextFireAt?.toISOString(),
  lastFireAt: schedule.lastFireAt?.toISOString(),
  lastRunId: schedule.lastRunId ?? undefined,
  createdAt: schedule.createdAt.toISOString(),
  updatedAt: schedule.updatedAt.toISOString(),
});

/** gRPC ↔ schedule rules; translation only. */
export function scheduleGrpc(schedules: ScheduleService): pb.ScheduleServiceImplementation<CallerContext> {
  return {
    async putSchedule(request, { caller }) {
      const { schedule, created } = await schedules.put(caller, request.name, {
        handlerKey: request.handlerKey,
        cron: request.cron,
        timeZone: request.timeZone,
        payload: request.payload ?? {},
        enabled: request.enabled,
      });
      return { schedule: scheduleToProto(schedule), created };
    },
    async getSchedule({ name }, { caller }) {
      return { schedule: scheduleToProto(await schedules.get(caller, name)) };
    },
    async listSchedules(_request, { caller }) {
      return { schedules: (await schedules.list(caller)).map(scheduleToProto) };
    },
    async deleteSchedule({ name }, { caller }) {
      await schedules.delete(caller, name);
      return {};
    },
    async triggerSchedule({ name }, { caller }) {
      return { runId: await schedules.trigger(caller, name) };
    },
  };
}
