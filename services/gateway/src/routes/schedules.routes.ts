import { AgentRunPayloadSchema, type schedulePb } from '@hangar/contracts';
import { z } from 'zod';
import { locationHeader, problemResponse } from '../api.schemas.js';
import { defineRoute } from '../http/route.js';

const TAG = 'Schedules';

const ScheduleRequestSchema = z
  .strictObject({
    handlerKey: z.string().min(1).max(64).describe('One of Scheduling:HttpSchedulableHandlerKeys (default ["agent-run"])'),
    cron: z.string().min(1).max(256).describe('Five fields: minute hour day-of-month month day-of-week'),
    timeZone: z.string().min(1).max(64).optional().describe('An IANA time zone the cron is read in; default UTC'),
    payload: z
      .record(z.string(), z.unknown())
      .describe(
        'What the handler runs; for agent-run an AgentRunSchedulePayload { agentName, message | messages, sessionId?, parameters? }',
      ),
    enabled: z.boolean().optional().describe('Default true; a disabled schedule does not fire but can be triggered'),
  })
  .meta({ id: 'ScheduleRequest' });

const ScheduleSchema = z
  .object({
    name: z.string(),
    handlerKey: z.string(),
    cron: z.string(),
    timeZone: z.string(),
    payload: AgentRunPayloadSchema,
    enabled: z.boolean(),
    nextFireAt: z.iso.datetime().nullable().describe('Null while disabled'),
    lastFireAt: z.iso.datetime().nullable().describe('The fire time of its latest firing'),
    lastRunId: z.uuid().nullable().describe('The run of its latest firing or trigger'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'Schedule' });

const NameParams = z.object({ name: z.string() });

const scheduleJson = (schedule: schedulePb.Schedule) => ({
  name: schedule.name,
  handlerKey: schedule.handlerKey,
  cron: schedule.cron,
  timeZone: schedule.timeZone,
  payload: schedule.payload ?? {},
  enabled: schedule.enabled,
  nextFireAt: schedule.nextFireAt ?? null,
  lastFireAt: schedule.lastFireAt ?? null,
  lastRunId: schedule.lastRunId ?? null,
  createdAt: schedule.createdAt!,
  updatedAt: schedule.updatedAt!,
});

/** API.md "Schedules": cron-timed runs of the tenant's agents, fired by the run executor. */
export const scheduleRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/schedules',
    operationId: 'listSchedules',
    summary: 'List schedules',
    description: 'Returns the tenant’s schedules by name, each with its next and latest fire time and its latest run.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'PlatformRead' },
    responses: { 200: { description: 'Schedules', schema: ScheduleSchema.array() } },
    async handler({ caller }, { schedules }) {
      return { status: 200, body: (await schedules.listSchedules({}, { caller })).schedules.map(scheduleJson) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/schedules/{name}',
    operationId: 'getSchedule',
    summary: 'Get a schedule',
    description: 'Returns one schedule as saved, with nextFireAt, lastFireAt and lastRunId. An unknown name is 404.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'PlatformRead' },
    params: NameParams,
    responses: { 200: { description: 'The schedule', schema: ScheduleSchema }, 404: problemResponse('No such schedule') },
    async handler({ params, caller }, { schedules }) {
      return { status: 200, body: scheduleJson((await schedules.getSchedule({ name: params.name }, { caller })).schedule!) };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/api/schedules/{name}',
    operationId: 'putSchedule',
    summary: 'Create or replace a schedule',
    description:
      'Stores a schedule that queues one run (kind Scheduled) at each cron time, read in timeZone. A handler key that is not schedulable, a bad cron or time zone, a payload that is not valid, or an unknown agent is 400 and stores nothing. Answers 201 when it created the schedule, 200 when it replaced one; saving plans the next fire time from now, and its runs act for whoever saved it last.',
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: NameParams,
    body: ScheduleRequestSchema,
    responses: {
      200: { description: 'Replaced', schema: ScheduleSchema },
      201: { description: 'Created', schema: ScheduleSchema },
      400: problemResponse('Invalid name, handler key, cron, time zone or payload, or an unknown agent'),
    },
    async handler({ params, body, caller }, { schedules }) {
      const { schedule, created } = await schedules.putSchedule(
        {
          name: params.name,
          handlerKey: body.handlerKey,
          cron: body.cron,
          timeZone: body.timeZone,
          payload: body.payload,
          enabled: body.enabled ?? true,
        },
        { caller },
      );
      return { status: created ? 201 : 200, body: scheduleJson(schedule!) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/schedules/{name}',
    operationId: 'deleteSchedule',
    summary: 'Delete a schedule',
    description: 'Deletes a schedule; runs it already queued go on. An unknown name is 404.',
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: NameParams,
    responses: { 204: { description: 'Deleted' }, 404: problemResponse('No such schedule') },
    async handler({ params, caller }, { schedules }) {
      await schedules.deleteSchedule({ name: params.name }, { caller });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/schedules/{name}/trigger',
    operationId: 'triggerSchedule',
    summary: 'Run a schedule now',
    description:
      'Queues one run of the schedule now (kind Scheduled, for the caller, admitted by quota like a queued run), whether or not it is enabled; its cron times are unchanged. 202 names the run in Location.',
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: NameParams,
    responses: {
      202: {
        description: 'Queued; follow the run at Location',
        schema: z.object({ runId: z.uuid() }),
        headers: { Location: locationHeader('The queued run, {prefix}/api/runs/{runId}') },
      },
      404: problemResponse('No such schedule, or its agent is gone'),
      429: problemResponse('A quota rule is used up'),
    },
    async handler({ params, caller }, { schedules, config }) {
      const { runId } = await schedules.triggerSchedule({ name: params.name }, { caller });
      return { status: 202, body: { runId }, headers: { Location: `${config.Hangar.Api.Prefix}/api/runs/${runId}` } };
    },
  }),
];
