import { allInOneModules } from '@hangar/all-in-one';
import { runMigrations, type RunDatabase } from '@hangar/run-executor';
import { sql, type Kysely } from '@hangar/storage';
import { SQL_ENGINES, startHangar, TEST_TOPOLOGY, type HangarUnderTest } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** SPEC "Read view": `runs_v1` exists only when enabled, has exactly SPEC's columns, and matches the run record. */

const SPEC_COLUMNS = [
  'run_id',
  'tenant_id',
  'agent_name',
  'session_id',
  'status',
  'status_name',
  'started_at',
  'completed_at',
  'is_streaming',
  'input_tokens',
  'output_tokens',
  'cached_input_tokens',
  'reasoning_tokens',
  'total_tokens',
  'input_cost',
  'output_cost',
  'cached_input_cost',
  'total_cost',
  'cost_currency',
  'error_type',
  'model_provider',
  'input_price_per_mtok',
  'output_price_per_mtok',
  'cached_input_price_per_mtok',
];

// The split shape runs every service on PostgreSQL: there the embedded engine is not Hangar's to choose.
describe.each(TEST_TOPOLOGY === 'split' ? (['postgres'] as const) : SQL_ENGINES)('runs_v1 on %s', (engine) => {
  const storeKey = engine === 'postgres' ? 'Postgres' : 'Embedded';
  const viewOf = (hangar: HangarUnderTest) =>
    engine === 'postgres'
      ? { schema: hangar.config.Stores.Postgres.SchemaName, name: 'runs_v1' }
      : { schema: 'public', name: 'hangar_runs_v1' };
  const dbOf = async (hangar: HangarUnderTest) => (await hangar.openStore<RunDatabase>('runs', runMigrations)).db as Kysely<any>;

  describe('enabled', () => {
    let hangar: HangarUnderTest;

    beforeAll(async () => {
      hangar = await startHangar({
        engine,
        modules: allInOneModules(),
        overrides: { Stores: { [storeKey]: { EnableReadView: true } }, Pricing: { demo: { echo: { Input: 3, Output: 15 } } } },
      });
    });

    afterAll(async () => {
      await hangar?.stop();
    });

    it('has exactly SPEC’s columns, metadata only, and total_cost equal to the run record', async () => {
      const ran = await hangar.request('POST', '/api/agents/code-helper/run', {
        body: { message: 'count my tokens please' },
        headers: { 'idempotency-key': 'k' },
      });
      expect(ran.status, ran.text).toBe(200);
      const record = (await hangar.request('GET', `/api/runs/${ran.body.runId}`)).body;
      expect(record.cost.total).toBeGreaterThan(0);

      const db = await dbOf(hangar);
      const { schema, name } = viewOf(hangar);
      const columns = await sql<{ column_name: string }>`
        select column_name from information_schema.columns where table_schema = ${schema} and table_name = ${name} order by ordinal_position`.execute(
        db,
      );
      expect(columns.rows.map((row) => row.column_name)).toEqual(SPEC_COLUMNS);

      const rows = await sql<any>`select * from ${sql.id(schema)}.${sql.id(name)} where run_id = ${ran.body.runId}`.execute(db);
      expect(rows.rows).toHaveLength(1);
      const row = rows.rows[0];
      expect(Number(row.total_cost)).toBeCloseTo(record.cost.total, 12);
      expect(Number(row.input_price_per_mtok)).toBe(3);
      expect(row).toMatchObject({
        tenant_id: 'default',
        agent_name: 'code-helper',
        status: 2,
        status_name: 'Completed',
        is_streaming: false,
        cost_currency: 'USD',
        model_provider: 'demo',
        error_type: null,
      });
      expect(Number(row.total_tokens)).toBe(record.usage.totalTokens);
    });

    it('refuses writes: the view is a read-only contract', async () => {
      const db = await dbOf(hangar);
      const { schema, name } = viewOf(hangar);
      const view = sql`${sql.id(schema)}.${sql.id(name)}`;
      await expect(sql`update ${view} set agent_name = 'changed'`.execute(db)).rejects.toThrow(/read-only/);
      await expect(sql`delete from ${view}`.execute(db)).rejects.toThrow(/read-only/);
      await expect(sql`insert into ${view} (run_id) values (gen_random_uuid())`.execute(db)).rejects.toThrow(/read-only/);
      const remaining = await sql<{ count: string }>`select count(*)::text as count from ${view} where agent_name = 'code-helper'`.execute(
        db,
      );
      expect(Number(remaining.rows[0].count)).toBeGreaterThan(0);
    });
  });

  describe('disabled (the default)', () => {
    let hangar: HangarUnderTest;

    beforeAll(async () => {
      hangar = await startHangar({ engine, modules: allInOneModules() });
    });

    afterAll(async () => {
      await hangar?.stop();
    });

    it('creates no runs_v1 object', async () => {
      const { schema, name } = viewOf(hangar);
      const found = await sql<{ exists: string | null }>`select to_regclass(${`${schema}.${name}`})::text as exists`.execute(
        await dbOf(hangar),
      );
      expect(found.rows[0].exists).toBeNull();
      const guard = await sql<{ exists: string | null }>`select to_regproc(${`${schema}.${name}_refuse_writes`})::text as exists`.execute(
        await dbOf(hangar),
      );
      expect(guard.rows[0].exists).toBeNull();
    });
  });
});
