import { sql, type Kysely } from '@hangar/storage';
import type { RunDatabase } from '../database.js';
import { RUN_STATUSES } from './run.model.js';

/** Where SPEC puts the read view: `{schema}.runs_v1`, or `{prefix}runs_v1` on the embedded store. */
export interface ReadViewTarget {
  schema: string;
  name: string;
}

/**
 * The published `runs_v1` contract (SPEC "Read view"): metadata only, exactly SPEC's columns,
 * `total_cost` the very column the run record reports. Without the option no such object exists.
 */
export async function applyReadView(db: Kysely<RunDatabase>, runsSchema: string, target: ReadViewTarget, enabled: boolean) {
  const view = sql`${sql.id(target.schema)}.${sql.id(target.name)}`;
  const refuseWrites = sql`${sql.id(target.schema)}.${sql.id(`${target.name}_refuse_writes`)}`;
  if (!enabled) {
    await sql`drop view if exists ${view}`.execute(db);
    await sql`drop function if exists ${refuseWrites}()`.execute(db);
    return;
  }
  await sql`create schema if not exists ${sql.id(target.schema)}`.execute(db);
  await sql`
    create or replace view ${view} as
    select
      r.id as run_id,
      r.tenant_id,
      r.agent_name,
      r.session_id,
      r.status,
      (array[${sql.join(RUN_STATUSES.map((status) => sql.lit(status)))}])[r.status + 1] as status_name,
      (r.started_at at time zone 'UTC') as started_at,
      (r.completed_at at time zone 'UTC') as completed_at,
      r.is_streaming,
      r.input_tokens,
      r.output_tokens,
      r.cached_input_tokens,
      r.reasoning_tokens,
      r.total_tokens,
      r.input_cost,
      r.output_cost,
      r.cached_input_cost,
      r.total_cost,
      r.cost_currency,
      r.error_type,
      r.model_provider,
      r.input_price_per_mtok,
      r.output_price_per_mtok,
      r.cached_input_price_per_mtok
    from ${sql.id(runsSchema)}.runs r`.execute(db);
  // A single-table view is updatable in PostgreSQL; the published contract is read-only.
  await sql`
    create or replace function ${refuseWrites}() returns trigger language plpgsql as $$
    begin
      raise exception '% is a read-only view', tg_table_name using errcode = 'insufficient_privilege';
    end $$`.execute(db);
  await sql`drop trigger if exists read_only on ${view}`.execute(db);
  await sql`create trigger read_only instead of insert or update or delete on ${view} for each row execute function ${refuseWrites}()`.execute(
    db,
  );
}
