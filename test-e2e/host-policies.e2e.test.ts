import { allInOneModules } from '@hangar/all-in-one';
import { createJwtIssuer, FIXTURE_AUTHORIZATION_POLICY, FIXTURE_ROLE_POLICIES, startHangar, type HangarUnderTest } from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** SPEC Authentication 3 and 6: role policies the host registers, and an authorization policy asked for every request. */

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'hangar';
let issuer: Awaited<ReturnType<typeof createJwtIssuer>>;
let hangar: HangarUnderTest;
const jwtOptions = () => ({ Enabled: true, Jwks: issuer.jwks, Issuer: ISSUER, Audience: AUDIENCE });
const agent = (name: string) => ({ name, model: { provider: 'demo', model: 'echo' } });

beforeAll(async () => {
  issuer = await createJwtIssuer({ issuer: ISSUER, audience: AUDIENCE });
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Hangar: {
        Api: {
          Jwt: jwtOptions(),
          RequireRolePolicies: true,
          RolePoliciesModule: FIXTURE_ROLE_POLICIES,
          AuthorizationPolicy: FIXTURE_AUTHORIZATION_POLICY,
        },
      },
    },
  });
});

afterAll(async () => {
  await hangar?.stop();
});

describe('role policies', () => {
  it('are required when RequireRolePolicies is true: without them the start fails naming both keys', async () => {
    const failed = await startHangar({ modules: allInOneModules(), overrides: { Hangar: { Api: { RequireRolePolicies: true } } } }).catch(
      (error: Error) => error,
    );
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).toMatch(/Hangar:Api:RequireRolePolicies.*Hangar:Api:RolePoliciesModule/);
  });

  it('decide who holds a role, whatever the token’s role claim says', async () => {
    const claimsAdmin = await issuer.sign({ sub: 'alice', roles: ['Admin'] });
    const root = await issuer.sign({ sub: 'root' });
    expectProblem(await hangar.request('POST', '/api/agents', { token: claimsAdmin, body: agent('by-alice') }), 403, 'forbidden');
    expect((await hangar.request('GET', '/api/agents', { token: claimsAdmin })).status).toBe(200);
    expect((await hangar.request('POST', '/api/agents', { token: root, body: agent('by-root') })).status).toBe(201);
  });
});

describe('authorization policy', () => {
  it('is asked for every authenticated request: its denial is 403, whatever role and scope allow', async () => {
    const root = await issuer.sign({ sub: 'root' });
    expect((await hangar.request('POST', '/api/agents', { token: root, body: agent('kept') })).status).toBe(201);
    expectProblem(await hangar.request('DELETE', '/api/agents/kept', { token: root }), 403, 'forbidden');
    expect((await hangar.request('GET', '/api/agents/kept', { token: root })).status).toBe(200);
    const mallory = await issuer.sign({ sub: 'mallory', roles: ['Reader'] });
    expectProblem(await hangar.request('GET', '/api/agents', { token: mallory }), 403, 'forbidden');
    // Routes without authentication are not asked.
    expect((await hangar.request('GET', '/api/meta', { token: null })).status).toBe(200);
  });
});
