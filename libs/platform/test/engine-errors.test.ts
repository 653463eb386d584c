import { SkillServiceDefinition } from '@hangar/contracts';
import { EngineUnavailableError } from '@hangar/messaging';
import {
  classifyError,
  createChannel,
  createGrpcServer,
  createLogger,
  createServiceClient,
  HangarError,
  type HangarGrpcServer,
} from '@hangar/platform';
import { createStorageProvider, type StorageProvider } from '@hangar/storage';
import { freePort, startPrivatePostgres, type PrivatePostgres } from '@hangar/testing';
import { sql } from 'kysely';
import { ClientError, createClient, Metadata, Status } from 'nice-grpc';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Connection-class failures of the engines are `unavailable` (503 / UNAVAILABLE), never a 500. */

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('classifyError', () => {
  it.each([
    ['57P01 admin_shutdown', withCode('terminating connection due to administrator command', '57P01')],
    ['57P02 crash_shutdown', withCode('terminating connection because of crash of another server process', '57P02')],
    ['57P03 cannot_connect_now', withCode('the database system is starting up', '57P03')],
    ['08006 connection_failure', withCode('connection failure', '08006')],
    ['08001 unable to connect', withCode('could not connect', '08001')],
    ['53300 too_many_connections', withCode('sorry, too many clients already', '53300')],
    ['ECONNREFUSED', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['ECONNRESET', withCode('read ECONNRESET', 'ECONNRESET')],
    ["pg's dropped connection", new Error('Connection terminated unexpectedly')],
    ["pg's dropped client", new Error('Client has encountered a connection error and is not queryable')],
    ["pg-pool's acquisition timeout", new Error('timeout exceeded when trying to connect')],
    ['a refusal on every address', new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')], 'connect failed')],
    ['a wrapped socket error', new Error('query failed', { cause: withCode('write EPIPE', 'EPIPE') })],
    ['Redis away (messaging)', new EngineUnavailableError('Redis is unavailable: publish to run:1 failed')],
  ])('%s is unavailable: 503 / UNAVAILABLE', (_name, error) => {
    const classified = classifyError(error);
    expect(classified).toBeInstanceOf(HangarError);
    expect(classified).toMatchObject({ kind: 'unavailable', status: 503, errorType: 'service_unavailable' });
  });

  it.each([
    ['23505 unique_violation', withCode('duplicate key value violates unique constraint', '23505')],
    ['42P01 undefined_table', withCode('relation "runs" does not exist', '42P01')],
    ['57014 query_canceled (statement timeout)', withCode('canceling statement due to statement timeout', '57014')],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['not an error', 'connection refused'],
  ])('%s stays unclassified (a logged 500)', (_name, error) => {
    expect(classifyError(error)).toBeUndefined();
  });

  it('keeps a HangarError as it is', () => {
    const notFound = new HangarError('notFound', 'no such agent');
    expect(classifyError(notFound)).toBe(notFound);
  });

  it('classifies the error pg gives for a server that is not there', async () => {
    const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/postgres` });
    client.on('error', () => {});
    const refused = await client.connect().catch((error: unknown) => error);
    expect(classifyError(refused)?.kind).toBe('unavailable');
  });
});

describe('gRPC: an engine failure in a handler', () => {
  let server: HangarGrpcServer;
  let address: string;
  beforeAll(async () => {
    server = createGrpcServer(createLogger({ name: 'engine-errors-test', level: 'silent' }));
    // Every method fails as an engine that went away would.
    const failing = async () => {
      throw withCode('terminating connection due to administrator command', '57P01');
    };
    server.server.add(SkillServiceDefinition, Object.fromEntries(Object.keys(SkillServiceDefinition.methods).map((name) => [name, failing])) as never);
    address = `127.0.0.1:${await server.listen('127.0.0.1', 0)}`;
  });
  afterAll(() => server?.shutdown());

  it('is UNAVAILABLE on the wire and `unavailable` for a Hangar client', async () => {
    const channel = createChannel(address);
    try {
      const raw = await createClient(SkillServiceDefinition, channel)
        .findSkills({}, { metadata: Metadata({ 'x-hangar-tenant': 't1' }) })
        .catch((error: unknown) => error);
      expect(raw).toBeInstanceOf(ClientError);
      expect((raw as ClientError).code).toBe(Status.UNAVAILABLE);
      const hangar = await createServiceClient(SkillServiceDefinition, channel)
        .findSkills({}, { caller: { tenantId: 't1', actor: 'test' } })
        .catch((error: unknown) => error);
      expect(hangar).toMatchObject({ kind: 'unavailable', status: 503, errorType: 'service_unavailable' });
    } finally {
      channel.close();
    }
  });
});

describe('a pg pool whose server is killed or restarted', () => {
  let postgres: PrivatePostgres;
  let storage: StorageProvider;
  const droppedConnections: Error[] = [];
  let query: () => Promise<unknown>;

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    storage = await createStorageProvider({
      postgresConnectionString: postgres.url,
      schemaPrefix: 'faults',
      embeddedDataDir: 'memory://',
      autoApplyMigrations: true,
      commandTimeoutSeconds: 5,
      onConnectionError: (error) => droppedConnections.push(error),
    });
    const { db } = await storage.open<unknown>('probe', {});
    query = () => sql`select 1`.execute(db);
  }, 60_000);
  afterAll(async () => {
    await storage?.close();
    await postgres?.stop();
  });

  /** Queries until one succeeds; every failure on the way must be a connection-class one. */
  const untilServed = async () => {
    const failures: unknown[] = [];
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
      try {
        await query();
        return failures;
      } catch (error) {
        failures.push(error);
      }
    }
    throw new Error(`no query succeeded within 10 s: ${failures.map(String).join('; ')}`);
  };

  it('survives a kill -9 (idle connections drop without an unhandled error event) and reconnects on its own', async () => {
    await Promise.all([query(), query(), query()]); // a few idle connections in the pool
    await postgres.kill9();
    // A backend of the killed postmaster may still answer on an idle pooled connection for a moment.
    let refused: unknown;
    for (
      const deadline = Date.now() + 5_000;
      refused === undefined && Date.now() < deadline;
      await new Promise((resolve) => setTimeout(resolve, 20))
    ) {
      refused = await query().then(
        () => undefined,
        (error: unknown) => error,
      );
    }
    expect(classifyError(refused)?.kind, String(refused)).toBe('unavailable');
    await postgres.start();
    const failures = await untilServed();
    expect(failures.filter((failure) => classifyError(failure)?.kind !== 'unavailable')).toEqual([]);
    expect(droppedConnections.length).toBeGreaterThan(0);
  });

  it('survives pg_ctl restart -m fast while a query holds a connection', async () => {
    await query();
    const holding = sql`select pg_sleep(5)`.execute((await storage.open<unknown>('probe', {})).db).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await postgres.restartFast();
    expect(classifyError(await holding)?.kind, String(await holding)).toBe('unavailable');
    const failures = await untilServed();
    expect(failures.filter((failure) => classifyError(failure)?.kind !== 'unavailable')).toEqual([]);
  });
});
