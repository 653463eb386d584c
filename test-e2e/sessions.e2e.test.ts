import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allInOneModules } from '@hangar/all-in-one';
import { SessionServiceDefinition } from '@hangar/contracts';
import { createServiceClient, HangarError, type Caller } from '@hangar/platform';
import {
  createJwtIssuer,
  FIXTURE_RUN_AUTHORIZATION,
  type HangarUnderTest,
  type HttpResult,
  startHangar,
  TEST_TOPOLOGY,
} from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { createChannel, type Channel } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** SPEC "Sessions" 1–4, session ownership, and run-authorization denials, over HTTP (seeded over gRPC). */

let issuer: Awaited<ReturnType<typeof createJwtIssuer>>;
const channels: Channel[] = [];

/** The run engine's path into the session service: open (create) a session and append turns. */
function sessionsOf(hangar: HangarUnderTest) {
  const channel = createChannel(hangar.addressOf('Session'));
  channels.push(channel);
  const client = createServiceClient(SessionServiceDefinition, channel);
  return {
    client,
    async seed(caller: Caller, sessionId: string, texts: string[], agentName = 'support-bot') {
      await client.openSession({ sessionId, agentName }, { caller });
      if (texts.length) {
        await client.appendMessages(
          {
            sessionId,
            messages: texts.map((text, index) => ({ role: index % 2 ? 'assistant' : 'user', content: text, runId: `run-${index}` })),
            state: { turns: texts.length },
          },
          { caller },
        );
      }
    },
  };
}

const jwtConfig = () => ({ Jwt: { Enabled: true, Jwks: issuer.jwks } });

beforeAll(async () => {
  issuer = await createJwtIssuer();
});

afterAll(() => {
  channels.forEach((channel) => channel.close());
});

describe('sessions (ownership off)', () => {
  let hangar: HangarUnderTest;
  let sessions: ReturnType<typeof sessionsOf>;
  const admin: Caller = { tenantId: 'default', actor: 'auth-token', role: 'Admin' };

  beforeAll(async () => {
    hangar = await startHangar({
      modules: allInOneModules(),
      overrides: {
        Hangar: { Api: { ...jwtConfig(), RunAuthorizationModule: FIXTURE_RUN_AUTHORIZATION } },
        Tenancy: { Enabled: true, AllowHeaderResolution: true },
      },
    });
    sessions = sessionsOf(hangar);
    await sessions.seed(admin, 'conv-1', ['hello', 'hi there', 'what is my balance?', 'it is 42']);
    await sessions.seed(admin, 'conv-2', ['other'], 'billing-bot');
    await sessions.seed(admin, 'hidden-conv', ['secret']);
    await sessions.seed(admin, 'conv-3', ['newest']);
  });

  afterAll(async () => {
    await hangar?.stop();
  });

  it('lists sessions newest update first with the envelope fields', async () => {
    const result = await hangar.request('GET', '/api/sessions');
    expect(result.status).toBe(200);
    expect(result.body.map((session: any) => session.id)).toEqual(['conv-3', 'hidden-conv', 'conv-2', 'conv-1']);
    expect(result.body[3]).toEqual({
      id: 'conv-1',
      tenantId: 'default',
      agentName: 'support-bot',
      ownerId: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      messageCount: 4,
      Version: 1,
      StateSchemaVersion: 1,
      StateMafVersion: expect.stringMatching(/^hangar\//),
    });
  });

  it('moves a session to the front when it is updated', async () => {
    await sessions.client.appendMessages({ sessionId: 'conv-2', messages: [{ role: 'user', content: 'bump' }] }, { caller: admin });
    const result = await hangar.request('GET', '/api/sessions');
    expect(result.body[0].id).toBe('conv-2');
  });

  it('filters by agentName and pages, clamping take to 1..200 without rejecting it', async () => {
    expect((await hangar.request('GET', '/api/sessions?agentName=billing-bot')).body.map((session: any) => session.id)).toEqual(['conv-2']);
    expect((await hangar.request('GET', '/api/sessions?take=0')).body).toHaveLength(1);
    expect((await hangar.request('GET', '/api/sessions?take=10000')).body).toHaveLength(4);
    expect((await hangar.request('GET', '/api/sessions?skip=1&take=2')).body.map((session: any) => session.id)).toEqual([
      'conv-3',
      'hidden-conv',
    ]);
    expect((await hangar.request('GET', '/api/sessions?skip=-5&take=1')).body).toHaveLength(1);
    expectProblem(await hangar.request('GET', '/api/sessions?take=many'), 400, 'validation_failed');
  });

  it('returns the history in sequence order, and the state', async () => {
    const result = await hangar.request('GET', '/api/sessions/conv-1');
    expect(result.status).toBe(200);
    expect(result.body.messages.map((message: any) => [message.role, message.content, message.runId])).toEqual([
      ['user', 'hello', 'run-0'],
      ['assistant', 'hi there', 'run-1'],
      ['user', 'what is my balance?', 'run-2'],
      ['assistant', 'it is 42', 'run-3'],
    ]);
    expect(result.body.messages[0]).toEqual({
      id: expect.any(String),
      role: 'user',
      content: 'hello',
      runId: 'run-0',
      createdAt: expect.any(String),
    });
    expect(result.body.state).toEqual({ turns: 4 });
    expect(result.body.parentSessionId).toBeNull();
  });

  it('answers 404 for an unknown session and for another tenant’s', async () => {
    expectProblem(await hangar.request('GET', '/api/sessions/nope'), 404, 'not_found');
    expectProblem(await hangar.request('GET', '/api/sessions/conv-1', { headers: { 'x-hangar-tenant': 'other' } }), 404, 'not_found');
    expectProblem(await hangar.request('DELETE', '/api/sessions/conv-1', { headers: { 'x-hangar-tenant': 'other' } }), 404, 'not_found');
    expect((await hangar.request('GET', '/api/sessions', { headers: { 'x-hangar-tenant': 'other' } })).body).toEqual([]);
  });

  describe('branch', () => {
    it('copies messages up to and including upToSequence into a new session', async () => {
      const result = await hangar.request('POST', '/api/sessions/conv-1/branch', { body: { upToSequence: 1 } });
      expect(result.status, result.text).toBe(201);
      expect(result.body).toEqual({ sessionId: expect.any(String), parentSessionId: 'conv-1', copiedMessages: 2 });
      expect(result.headers.get('location')).toBe(`/api/sessions/${result.body.sessionId}`);
      const branch = await hangar.request('GET', `/api/sessions/${result.body.sessionId}`);
      expect(branch.body.messages.map((message: any) => message.content)).toEqual(['hello', 'hi there']);
      expect(branch.body).toMatchObject({ parentSessionId: 'conv-1', agentName: 'support-bot', messageCount: 2 });
    });

    it('takes the requested id; writes to the branch never touch the parent', async () => {
      const result = await hangar.request('POST', '/api/sessions/conv-1/branch', { body: { upToSequence: 3, sessionId: 'conv-1-alt' } });
      expect(result.body).toEqual({ sessionId: 'conv-1-alt', parentSessionId: 'conv-1', copiedMessages: 4 });
      await sessions.client.appendMessages(
        { sessionId: 'conv-1-alt', messages: [{ role: 'user', content: 'branch only' }] },
        { caller: admin },
      );
      expect((await hangar.request('GET', '/api/sessions/conv-1-alt')).body.messageCount).toBe(5);
      expect((await hangar.request('GET', '/api/sessions/conv-1')).body.messages).toHaveLength(4);
    });

    it('answers 409 when the requested id exists, 400 for -1, past the end or a bad body, 404 for an unknown source', async () => {
      const count = (await hangar.request('GET', '/api/sessions?take=200')).body.length;
      expectProblem(
        await hangar.request('POST', '/api/sessions/conv-1/branch', { body: { upToSequence: 0, sessionId: 'conv-2' } }),
        409,
        'conflict',
      );
      expectProblem(await hangar.request('POST', '/api/sessions/conv-1/branch', { body: { upToSequence: -1 } }), 400, 'validation_failed');
      expectProblem(await hangar.request('POST', '/api/sessions/conv-1/branch', { body: { upToSequence: 4 } }), 400, 'validation_failed');
      expectProblem(await hangar.request('POST', '/api/sessions/conv-1/branch', { body: { upToSequence: 1.5 } }), 400, 'validation_failed');
      expectProblem(await hangar.request('POST', '/api/sessions/conv-1/branch', { body: {} }), 400, 'validation_failed');
      expectProblem(
        await hangar.request('POST', '/api/sessions/conv-1/branch', { body: { upToSequence: 0, sessionId: 'bad id!' } }),
        400,
        'validation_failed',
      );
      expectProblem(
        await hangar.request('POST', '/api/sessions/conv-1/branch', { body: { upToSequence: 0, extra: 1 } }),
        400,
        'validation_failed',
      );
      expectProblem(await hangar.request('POST', '/api/sessions/nope/branch', { body: { upToSequence: 0 } }), 404, 'not_found');
      expect((await hangar.request('GET', '/api/sessions?take=200')).body).toHaveLength(count);
    });
  });

  describe('delete', () => {
    const upload = (sessionId?: string) => {
      const form = new FormData();
      form.append('file', new Blob(['notes for the session']), 'notes.txt');
      return hangar.request('POST', `/api/attachments${sessionId ? `?sessionId=${sessionId}` : ''}`, { rawBody: form as never });
    };

    it('removes the session with its attachments and keeps others', async () => {
      await sessions.seed(admin, 'doomed', ['bye']);
      const linked = await upload('doomed');
      const loose = await upload();
      expect(linked.status, linked.text).toBe(201);
      expect((await hangar.request('DELETE', '/api/sessions/doomed')).status).toBe(204);
      expectProblem(await hangar.request('GET', '/api/sessions/doomed'), 404, 'not_found');
      expectProblem(await hangar.request('GET', `/api/attachments/${linked.body.id}`), 404, 'not_found');
      expect((await hangar.request('GET', `/api/attachments/${loose.body.id}`)).status).toBe(200);
      expectProblem(await hangar.request('DELETE', '/api/sessions/doomed'), 404, 'not_found');
    });

    it('has no side effect when the session is not found', async () => {
      const orphan = await upload('never-created');
      expectProblem(await hangar.request('DELETE', '/api/sessions/never-created'), 404, 'not_found');
      expect((await hangar.request('GET', `/api/attachments/${orphan.body.id}`)).status).toBe(200);
    });
  });

  describe('run-authorization handler', () => {
    it('denies lists and uploads with 403 and single records with the same 404 as an unknown one', async () => {
      const blocked = await issuer.sign({ sub: 'blocked', roles: ['Admin'] });
      expectProblem(await hangar.request('GET', '/api/sessions', { token: blocked }), 403, 'forbidden');
      const denied = await hangar.request('GET', '/api/sessions/conv-1', { token: blocked });
      const unknown = await hangar.request('GET', '/api/sessions/conv-unknown');
      expectProblem(denied, 404, 'not_found');
      expect(denied.body.detail).toBe('session conv-1 not found');
      expect(unknown.body.detail).toBe('session conv-unknown not found');
      expectProblem(await hangar.request('DELETE', '/api/sessions/conv-1', { token: blocked }), 404, 'not_found');
      expectProblem(
        await hangar.request('POST', '/api/sessions/conv-1/branch', { token: blocked, body: { upToSequence: 0 } }),
        404,
        'not_found',
      );
      expect((await hangar.request('GET', '/api/sessions/conv-1')).body.messages).toHaveLength(4);

      const form = new FormData();
      form.append('file', new Blob(['x']), 'x.txt');
      expectProblem(await hangar.request('POST', '/api/attachments', { token: blocked, rawBody: form as never }), 403, 'forbidden');
      expectProblem(await hangar.request('GET', '/api/attachments', { token: blocked }), 403, 'forbidden');
      const kept = (await hangar.request('GET', '/api/attachments')).body[0];
      expectProblem(await hangar.request('GET', `/api/attachments/${kept.id}`, { token: blocked }), 404, 'not_found');
      expectProblem(await hangar.request('DELETE', `/api/attachments/${kept.id}`, { token: blocked }), 404, 'not_found');
      expect((await hangar.request('GET', `/api/attachments/${kept.id}`)).status).toBe(200);
    });

    it('governs runs too: starting and listing are 403, reading a run is the same 404 as an unknown one', async () => {
      const blocked = await issuer.sign({ sub: 'blocked', roles: ['Admin'] });
      const ran = await hangar.request('POST', '/api/agents/code-helper/run', {
        body: { message: 'hi' },
        headers: { 'idempotency-key': 'k-allowed' },
      });
      expect(ran.status, ran.text).toBe(200);
      const runsBefore = (await hangar.request('GET', '/api/runs?take=200')).body.length;
      expectProblem(
        await hangar.request('POST', '/api/agents/code-helper/run', { token: blocked, body: { message: 'hi' } }),
        403,
        'forbidden',
      );
      expectProblem(await hangar.request('GET', '/api/runs', { token: blocked }), 403, 'forbidden');
      const denied = await hangar.request('GET', `/api/runs/${ran.body.runId}`, { token: blocked });
      expectProblem(denied, 404, 'not_found');
      expect(denied.body.detail).toBe(`run ${ran.body.runId} not found`);
      expectProblem(await hangar.request('GET', `/api/runs/${ran.body.runId}/events`, { token: blocked }), 404, 'not_found');
      expect((await hangar.request('GET', '/api/runs?take=200')).body).toHaveLength(runsBefore);
    });

    it('is asked about the record: a denied id is hidden even from an allowed user', async () => {
      expectProblem(await hangar.request('GET', '/api/sessions/hidden-conv'), 404, 'not_found');
      expect((await hangar.request('GET', '/api/sessions')).body.map((session: any) => session.id)).toContain('hidden-conv');
    });
  });
});

describe('sessions (ownership on)', () => {
  let hangar: HangarUnderTest;
  let sessions: ReturnType<typeof sessionsOf>;
  const alice: Caller = { tenantId: 'default', actor: 'alice', userId: 'alice', role: 'Operator' };
  const bob: Caller = { tenantId: 'default', actor: 'bob', userId: 'bob', role: 'Operator' };
  let aliceToken: string;
  let bobToken: string;

  beforeAll(async () => {
    hangar = await startHangar({
      modules: allInOneModules(),
      overrides: { Hangar: { Api: jwtConfig() }, SessionOwnership: { Enabled: true } },
    });
    sessions = sessionsOf(hangar);
    aliceToken = await issuer.sign({ sub: 'alice', roles: ['Operator'] });
    bobToken = await issuer.sign({ sub: 'bob', roles: ['Operator'] });
    await sessions.seed(alice, 'alice-1', ['mine', 'yours']);
    await sessions.seed(bob, 'bob-1', ['bob here']);
  });

  afterAll(async () => {
    await hangar?.stop();
  });

  it('narrows the list to the caller’s sessions; the management role sees all', async () => {
    expect((await hangar.request('GET', '/api/sessions', { token: aliceToken })).body.map((session: any) => session.id)).toEqual([
      'alice-1',
    ]);
    expect((await hangar.request('GET', '/api/sessions', { token: bobToken })).body.map((session: any) => session.id)).toEqual(['bob-1']);
    const all = await hangar.request('GET', '/api/sessions');
    expect(all.body.map((session: any) => [session.id, session.ownerId])).toEqual([
      ['bob-1', 'bob'],
      ['alice-1', 'alice'],
    ]);
  });

  it('answers 404 for another user’s session on read, delete and branch, and leaves it untouched', async () => {
    expect((await hangar.request('GET', '/api/sessions/alice-1', { token: aliceToken })).status).toBe(200);
    expectProblem(await hangar.request('GET', '/api/sessions/alice-1', { token: bobToken }), 404, 'not_found');
    expectProblem(await hangar.request('DELETE', '/api/sessions/alice-1', { token: bobToken }), 404, 'not_found');
    expectProblem(
      await hangar.request('POST', '/api/sessions/alice-1/branch', { token: bobToken, body: { upToSequence: 0 } }),
      404,
      'not_found',
    );
    expect((await hangar.request('GET', '/api/sessions/alice-1')).body.messageCount).toBe(2);
  });

  it('gives a branch the source session’s owner, whoever branches it', async () => {
    const branched = await hangar.request('POST', '/api/sessions/alice-1/branch', { body: { upToSequence: 0, sessionId: 'alice-1-b' } });
    expect(branched.status, branched.text).toBe(201);
    expect((await hangar.request('GET', '/api/sessions/alice-1-b', { token: aliceToken })).body.ownerId).toBe('alice');
  });

  it('refuses a run naming another user’s session (403) and a new session without a user (session_owner_required)', async () => {
    const foreign = await sessions.client
      .openSession({ sessionId: 'alice-1', agentName: 'x' }, { caller: bob })
      .catch((error: unknown) => error);
    expect(foreign).toBeInstanceOf(HangarError);
    expect(foreign).toMatchObject({ status: 403, errorType: 'forbidden' });
    const ownerless = await sessions.client
      .openSession({ sessionId: 'fresh', agentName: 'x' }, { caller: { tenantId: 'default', actor: 'auth-token', role: 'Admin' } })
      .catch((error: unknown) => error);
    expect(ownerless).toMatchObject({ status: 403, errorType: 'session_owner_required' });
    const own = await sessions.client.openSession({ sessionId: 'alice-1', agentName: 'x' }, { caller: alice });
    expect(own).toMatchObject({ created: false, session: { ownerId: 'alice' } });
    expect(own.messages.map((message) => message.content)).toEqual(['mine', 'yours']);
  });
});

describe('ownership turned on after sessions were written', () => {
  // One shape: it starts all-in-one again on the first one's embedded data directory.
  it.skipIf(TEST_TOPOLOGY === 'split')('shows ownerless sessions only in the management listing and to no user', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hangar-ownership-'));
    const stores = { Stores: { Embedded: { DataDir: dataDir } } };
    const before = await startHangar({ modules: allInOneModules(), overrides: stores });
    await sessionsOf(before).seed({ tenantId: 'default', actor: 'auth-token', role: 'Admin' }, 'legacy', ['from before']);
    await before.stop();

    const after = await startHangar({
      modules: allInOneModules(),
      overrides: { ...stores, Hangar: { Api: jwtConfig() }, SessionOwnership: { Enabled: true } },
    });
    try {
      const user = await issuer.sign({ sub: 'carol', roles: ['Operator'] });
      expect((await after.request('GET', '/api/sessions', { token: user })).body).toEqual([]);
      expectProblem(await after.request('GET', '/api/sessions/legacy', { token: user }), 404, 'not_found');
      const managed = await after.request('GET', '/api/sessions');
      expect(managed.body.map((session: any) => [session.id, session.ownerId])).toEqual([['legacy', null]]);
      expect((await after.request('GET', '/api/sessions/legacy')).body.messages).toHaveLength(1);
    } finally {
      await after.stop();
    }
  });
});
