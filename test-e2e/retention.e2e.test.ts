import { randomBytes } from 'node:crypto';
import { allInOneModules } from '@hangar/all-in-one';
import {
  eventually,
  startHangar,
  startWebhookReceiver,
  TEST_POSTGRES_URL,
  type HangarUnderTest,
  type WebhookReceiver,
} from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * API.md "Retention" on PostgreSQL: rows seeded old (their timestamps moved back in the database)
 * are deleted exactly when older than their target's policy, in batches of Retention:BatchSize, and
 * archived when asked; fresh rows stay. Policies: stored over configuration over SPEC's defaults.
 */

const DAY = 86_400_000;
let hangar: HangarUnderTest;
let receiver: WebhookReceiver;
let db: pg.Pool;
const acme = { 'x-hangar-tenant': 'acme' };
const table = (service: string, name: string) => `"${hangar.schemaPrefix}_${service}"."${name}"`;
const query = async (text: string, values: unknown[] = []) => (await db.query(text, values)).rows;
const ago = (days: number) => new Date(Date.now() - days * DAY);

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  hangar = await startHangar({
    engine: 'postgres',
    modules: allInOneModules(),
    overrides: {
      Tenancy: { Enabled: true, AllowHeaderResolution: true },
      Retention: { BatchSize: 2, BatchDelay: '1ms', Jobs: { MaxAge: '20d' }, Spans: { MaxAge: '10d', Archive: true } },
      Hangar: { WebhookSecrets: { main: `whsec_${randomBytes(32).toString('base64')}` } },
      Webhooks: { AllowPrivateNetworkTargets: true, AllowInsecureHttp: true },
    },
  });
  db = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 2 });
  expect(
    (await hangar.request('POST', '/api/agents', { body: { name: 'bot', model: { provider: 'demo', model: 'echo' } }, headers: acme }))
      .status,
  ).toBe(201);
});

afterAll(async () => {
  await db?.end();
  await hangar?.stop();
  await receiver?.close();
});

const runJson = async (sessionId?: string) => {
  const run = await hangar.request('POST', '/api/agents/bot/run', {
    body: { message: 'keep me?', ...(sessionId && { sessionId }) },
    headers: { ...acme, 'idempotency-key': randomBytes(6).toString('hex') },
  });
  expect(run.status, run.text).toBe(200);
  return run.body.runId as string;
};

describe('retention policies', () => {
  it('lists every SPEC target with its source; a stored policy wins, DELETE returns it to configuration', async () => {
    const policies = (await hangar.request('GET', '/api/retention')).body as any[];
    expect(policies).toHaveLength(16);
    expect(policies.find((policy) => policy.target === 'RunEvents')).toEqual({
      target: 'RunEvents',
      maxAge: '30.00:00:00',
      archive: false,
      source: 'Default',
      enabled: false,
    });
    expect(policies.find((policy) => policy.target === 'Jobs')).toMatchObject({ maxAge: '20.00:00:00', source: 'Configuration' });
    expect(policies.find((policy) => policy.target === 'Spans')).toMatchObject({
      maxAge: '10.00:00:00',
      archive: true,
      source: 'Configuration',
    });
    expect(policies.find((policy) => policy.target === 'Sessions')).toMatchObject({ maxAge: null, source: 'Default' });
    const stored = await hangar.request('PUT', '/api/retention/RunScores', { body: { maxAge: '2.00:00:00', archive: true } });
    expect([stored.status, stored.body]).toEqual([
      201,
      { target: 'RunScores', maxAge: '2.00:00:00', archive: true, source: 'Stored', enabled: false },
    ]);
    const forever = await hangar.request('PUT', '/api/retention/RunScores', { body: { maxAge: null } });
    expect([forever.status, forever.body.maxAge, forever.body.archive]).toEqual([200, null, false]);
    expect((await hangar.request('DELETE', '/api/retention/RunScores')).status).toBe(204);
    expectProblem(await hangar.request('DELETE', '/api/retention/RunScores'), 404, 'not_found');
    expectProblem(
      await hangar.request('PUT', '/api/retention/IdempotencyKeys', { body: { maxAge: '2.00:00:00' } }),
      400,
      'validation_failed',
    );
    expectProblem(await hangar.request('PUT', '/api/retention/Everything', { body: { maxAge: '2.00:00:00' } }), 404, 'not_found');
    expectProblem(await hangar.request('PUT', '/api/retention/RunEvents', { body: { maxAge: 'soon' } }), 400, 'validation_failed');
  });

  it('deletes exactly what is older than each policy, in batches, archiving where asked', async () => {
    // Runs with events, scores and a session each; one of each set is then made old.
    const [oldRun, newRun] = [await runJson('old-session'), await runJson('new-session')];
    for (const runId of [oldRun, newRun]) {
      expect((await hangar.request('POST', `/api/runs/${runId}/feedback`, { body: { value: 1 }, headers: acme })).status).toBe(200);
    }
    const upload = async (sessionId: string) => {
      const form = new FormData();
      form.append('file', new Blob(['bytes'], { type: 'text/plain' }), `${sessionId}.txt`);
      const uploaded = await hangar.request('POST', `/api/attachments?sessionId=${sessionId}`, { headers: acme, rawBody: form as never });
      expect(uploaded.status, uploaded.text).toBe(201);
      return uploaded.body.id as string;
    };
    const [oldAttachment, newAttachment] = [await upload('old-session'), await upload('new-session')];
    const queued = await hangar.request('POST', '/api/agents/bot/run', {
      body: { message: 'later' },
      headers: { ...acme, prefer: 'respond-async' },
    });
    await eventually(
      async () => ((await query(`select status from ${table('runs', 'jobs')}`))[0]?.status === 'done' ? true : undefined),
      'the job done',
    );
    await hangar.request('PUT', '/api/webhooks/hook', {
      body: { url: `${receiver.url}/hook`, events: ['webhook.test'], secretKey: 'Hangar:WebhookSecrets:main' },
      headers: acme,
    });
    for (let i = 0; i < 3; i++) await hangar.request('POST', '/api/webhooks/hook/test', { headers: acme });
    await eventually(
      async () =>
        Number((await query(`select count(*) from ${table('governance', 'webhook_deliveries')} where status = 'Delivered'`))[0].count) === 3
          ? true
          : undefined,
      'three deliveries',
    );

    const oldEvents = Number((await query(`select count(*) from ${table('runs', 'run_events')} where run_id = $1`, [oldRun]))[0].count);
    expect(oldEvents).toBeGreaterThan(2);
    await query(`update ${table('runs', 'run_events')} set at = $1 where run_id = $2`, [ago(40), oldRun]);
    await query(`update ${table('runs', 'run_scores')} set created_at = $1 where run_id = $2`, [ago(200), oldRun]);
    await query(`update ${table('runs', 'jobs')} set updated_at = $1 where run_id = $2`, [ago(25), queued.body.runId]);
    await query(
      `update ${table('governance', 'webhook_deliveries')} set delivered_at = $1 where id in (select id from ${table('governance', 'webhook_deliveries')} limit 2)`,
      [ago(8)],
    );
    await query(`update ${table('sessions', 'sessions')} set updated_at = $1 where id = 'old-session'`, [ago(15)]);
    await query(
      `insert into ${table('skills', 'skill_script_grants')} (id, tenant_id, skill_name, expires_at, created_by) values (gen_random_uuid(), 'acme', 'old', $1, 'x'), (gen_random_uuid(), 'acme', 'live', $2, 'x')`,
      [ago(31), ago(-10)],
    );
    await query(
      `insert into ${table('attachments', 'attachments')} (id, tenant_id, file_name, media_type, status, created_at) values (gen_random_uuid(), 'acme', 'abandoned.txt', 'text/plain', 'uploading', $1), (gen_random_uuid(), 'acme', 'fresh.txt', 'text/plain', 'uploading', now())`,
      [ago(8)],
    );
    // Online evaluation's scores and hourly budgets, old and new: EvalCaseResults holds them (SPEC names no target of their own).
    await query(
      `insert into ${table('evaluation', 'online_scores')} (run_id, tenant_id, agent_name, score, created_at) values ($1, 'acme', 'bot', 0.9, $2), ($3, 'acme', 'bot', 0.8, now())`,
      [oldRun, ago(181), newRun],
    );
    await query(
      `insert into ${table('evaluation', 'online_budget')} (tenant_id, hour, used) values ('acme', $1, 3), ('acme', date_trunc('hour', now()), 1)`,
      [ago(181)],
    );
    expect((await hangar.request('PUT', '/api/retention/RunEvents', { body: { maxAge: '30.00:00:00', archive: true } })).status).toBe(201);
    expect((await hangar.request('PUT', '/api/retention/Sessions', { body: { maxAge: '10.00:00:00' } })).status).toBe(201);
    const eventsBefore = Number((await query(`select count(*) from ${table('runs', 'run_events')}`))[0].count);

    const applied = await hangar.request('POST', '/api/retention/run');
    expect(applied.status, applied.text).toBe(200);
    const byTarget = Object.fromEntries(applied.body.results.map((result: any) => [result.target, result]));
    expect(byTarget.RunEvents).toEqual({ target: 'RunEvents', deleted: oldEvents, archived: oldEvents });
    expect(byTarget.RunScores).toMatchObject({ deleted: 1, archived: 0 });
    expect(byTarget.Jobs).toMatchObject({ deleted: 1 });
    expect(byTarget.WebhookDeliveries).toMatchObject({ deleted: 2 });
    expect(byTarget.Sessions).toMatchObject({ deleted: 1 });
    expect(byTarget.SkillScriptGrants).toMatchObject({ deleted: 1 });
    expect(byTarget.Attachments).toMatchObject({ deleted: 1 });
    expect(byTarget.Spans).toEqual({ target: 'Spans', deleted: 0, archived: 0 });
    expect(byTarget.EvalCaseResults).toEqual({ target: 'EvalCaseResults', deleted: 2, archived: 0 });
    expect(applied.body.results.every((result: any) => result.error === undefined)).toBe(true);

    expect(Number((await query(`select count(*) from ${table('runs', 'run_events')} where run_id = $1`, [oldRun]))[0].count)).toBe(0);
    expect(Number((await query(`select count(*) from ${table('runs', 'run_events')}`))[0].count)).toBe(eventsBefore - oldEvents);
    expect(Number((await query(`select count(*) from ${table('runs', 'run_events_archive')} where run_id = $1`, [oldRun]))[0].count)).toBe(
      oldEvents,
    );
    expect((await query(`select run_id from ${table('runs', 'run_scores')}`)).map((row) => row.run_id)).toEqual([newRun]);
    expect((await query(`select id from ${table('sessions', 'sessions')} order by id`)).map((row) => row.id)).toEqual(['new-session']);
    expect((await query(`select run_id from ${table('evaluation', 'online_scores')}`)).map((row) => row.run_id)).toEqual([newRun]);
    expect((await query(`select used from ${table('evaluation', 'online_budget')}`)).map((row) => row.used)).toEqual([1]);
    // A purged session's attachments went first, as DELETE /api/sessions/{id} does.
    expect((await hangar.request('GET', `/api/attachments/${oldAttachment}`, { headers: acme })).status).toBe(404);
    expect((await hangar.request('GET', `/api/attachments/${newAttachment}`, { headers: acme })).status).toBe(200);
    expect((await query(`select skill_name from ${table('skills', 'skill_script_grants')}`)).map((row) => row.skill_name)).toEqual([
      'live',
    ]);
    expect(
      (await query(`select file_name from ${table('attachments', 'attachments')} where status = 'uploading'`)).map((row) => row.file_name),
    ).toEqual(['fresh.txt']);
    // The API no longer shows what was deleted; the runs themselves stay.
    expect((await hangar.request('GET', `/api/runs/${oldRun}/events`, { headers: acme })).status).toBe(200);
    expect((await hangar.request('GET', `/api/runs/${oldRun}`, { headers: acme })).body.status).toBe('Completed');
    // Applying again deletes nothing more.
    const again = (await hangar.request('POST', '/api/retention/run')).body.results;
    expect(again.every((result: any) => result.deleted === 0)).toBe(true);
  });
});
