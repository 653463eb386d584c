import { randomUUID } from 'node:crypto';
import { jsonb, releaseLease, sql, takeLease, type Kysely, type Selectable } from '@hangar/storage';
import type { Caller } from '@hangar/platform';
import type { RunDatabase } from '../database.js';
import { insertQueuedRun } from '../jobs/job.repository.js';
import type { Firing, Schedule, ScheduleInput } from './schedule.model.js';

const LEASE_TABLE = 'scheduler_lease';

const toSchedule = (row: Selectable<RunDatabase['schedules']>): Schedule => ({
  id: row.id,
  tenantId: row.tenant_id,
  name: row.name,
  handlerKey: row.handler_key,
  cron: row.cron,
  timeZone: row.time_zone,
  payload: row.payload as Record<string, unknown>,
  enabled: row.enabled,
  savedBy: row.saved_by as Caller,
  nextFireAt: row.next_fire_at,
  lastFireAt: row.last_fire_at,
  lastRunId: row.last_run_id,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** Schedules, their firings (one per schedule and fire time) and the scheduler lease (`SingletonExecution`). */
export function createScheduleRepository(db: Kysely<RunDatabase>) {
  return {
    async put(tenantId: string, input: ScheduleInput): Promise<{ schedule: Schedule; created: boolean }> {
      const row = await db
        .insertInto('schedules')
        .values({
          id: randomUUID(),
          tenant_id: tenantId,
          name: input.name,
          handler_key: input.handlerKey,
          cron: input.cron,
          time_zone: input.timeZone,
          payload: jsonb(input.payload),
          enabled: input.enabled,
          saved_by: jsonb(input.savedBy),
          next_fire_at: input.nextFireAt,
          last_fire_at: null,
          last_run_id: null,
        })
        .onConflict((conflict) =>
          conflict.columns(['tenant_id', 'name']).doUpdateSet((eb) => ({
            handler_key: eb.ref('excluded.handler_key'),
            cron: eb.ref('excluded.cron'),
            time_zone: eb.ref('excluded.time_zone'),
            payload: eb.ref('excluded.payload'),
            enabled: eb.ref('excluded.enabled'),
            saved_by: eb.ref('excluded.saved_by'),
            next_fire_at: eb.ref('excluded.next_fire_at'),
            updated_at: sql<Date>`now()`,
          })),
        )
        .returningAll()
        // xmax is 0 for a row this statement inserted, not for one it updated.
        .returning(sql<boolean>`(xmax = 0)`.as('inserted'))
        .executeTakeFirstOrThrow();
      return { schedule: toSchedule(row), created: row.inserted };
    },

    async get(tenantId: string, name: string): Promise<Schedule | undefined> {
      const row = await db
        .selectFrom('schedules')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('name', '=', name)
        .executeTakeFirst();
      return row && toSchedule(row);
    },

    async list(tenantId: string): Promise<Schedule[]> {
      const rows = await db.selectFrom('schedules').selectAll().where('tenant_id', '=', tenantId).orderBy('name').execute();
      return rows.map(toSchedule);
    },

    /** Deletes the schedule and its firing keys; its runs stay. */
    async delete(tenantId: string, name: string): Promise<boolean> {
      const result = await db.deleteFrom('schedules').where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /** Enabled schedules whose next fire time has come, the most overdue first. */
    async due(now: Date, limit: number): Promise<Schedule[]> {
      const rows = await db
        .selectFrom('schedules')
        .selectAll()
        .where('enabled', '=', true)
        .where('next_fire_at', '<=', now)
        .orderBy('next_fire_at')
        .limit(limit)
        .execute();
      return rows.map(toSchedule);
    },

    /** The soonest fire time of any enabled schedule, for the scheduler's next wake-up. */
    async soonest(): Promise<Date | null> {
      const row = await db
        .selectFrom('schedules')
        .select((eb) => eb.fn.min('next_fire_at').as('soonest'))
        .where('enabled', '=', true)
        .executeTakeFirst();
      return row?.soonest ? new Date(row.soonest) : null;
    },

    /**
     * Fires the schedule once for `firing.fireAt`, if it is still planned for `plannedAt` and no other
     * instance is firing it right now: its firing key, its queued run and job, and its next fire time
     * in one transaction. False when another instance fired it (or is firing it); the (schedule, fire
     * time) key refuses a second firing of the same time whatever happens.
     */
    async fire(schedule: Pick<Schedule, 'id' | 'tenantId'>, plannedAt: Date, firing: Firing): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const claimed = await trx
          .selectFrom('schedules')
          .select('id')
          .where('id', '=', schedule.id)
          .where('enabled', '=', true)
          .where('next_fire_at', '=', plannedAt)
          .forUpdate()
          .skipLocked()
          .executeTakeFirst();
        if (!claimed) return false;
        const firedBefore = await trx
          .selectFrom('schedule_firings')
          .select('run_id')
          .where('schedule_id', '=', schedule.id)
          .where('fire_at', '=', firing.fireAt)
          .executeTakeFirst();
        if (!firedBefore) {
          await insertQueuedRun(trx, schedule.tenantId, firing.run, firing.job);
          await trx
            .insertInto('schedule_firings')
            .values({ schedule_id: schedule.id, fire_at: firing.fireAt, run_id: firing.run.id })
            .execute();
        }
        await trx
          .updateTable('schedules')
          .set(
            firedBefore
              ? { next_fire_at: firing.nextFireAt }
              : { next_fire_at: firing.nextFireAt, last_fire_at: firing.fireAt, last_run_id: firing.run.id },
          )
          .where('id', '=', schedule.id)
          .execute();
        return !firedBefore;
      });
    },

    /** A run of the schedule asked for outside its cron times (the trigger route). */
    async recordRun(scheduleId: string, runId: string): Promise<void> {
      await db.updateTable('schedules').set({ last_run_id: runId }).where('id', '=', scheduleId).execute();
    },

    takeLease: (owner: string, leaseMs: number) => takeLease(db, LEASE_TABLE, owner, leaseMs),
    releaseLease: (owner: string) => releaseLease(db, LEASE_TABLE, owner),
  };
}

export type ScheduleRepository = ReturnType<typeof createScheduleRepository>;
