import { allInOneModules } from '@hangar/all-in-one';
import { type HangarUnderTest, type HttpResult, startHangar } from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** SPEC "Agents" rules 1–8 and the error statuses of those routes, over HTTP against all-in-one. */

let hangar: HangarUnderTest;
const api = (method: string, path: string, options?: Parameters<HangarUnderTest['request']>[2]) => hangar.request(method, path, options);

const definition = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `The ${name} agent`,
  instructions: `You are ${name}.`,
  model: { provider: 'demo', model: 'echo' },
  ...extra,
});

function expectFullProblem(result: HttpResult, status: number, errorType: string) {
  expectProblem(result, status, errorType);
  expect(result.body).toMatchObject({ status, errorType, type: `urn:hangar:problem:${errorType}` });
  expect(typeof result.body.title).toBe('string');
  expect(typeof result.body.detail).toBe('string');
  expect(typeof result.body.instance).toBe('string');
  expect(result.body.traceId).toMatch(/^[0-9a-f]{32}$/);
}

/** Everything a failed request might have written: the list and every stored agent's history. */
async function snapshot() {
  const list = await api('GET', '/api/agents');
  const histories = await Promise.all(
    list.body.filter((agent: any) => agent.origin === 'Database').map((agent: any) => api('GET', `/api/agents/${agent.name}/versions`)),
  );
  return JSON.stringify([list.body, histories.map((history) => history.body)]);
}

beforeAll(async () => {
  hangar = await startHangar({ modules: allInOneModules() });
  expect((await api('POST', '/api/agents', { body: definition('baseline') })).status).toBe(201);
});

afterAll(async () => {
  await hangar?.stop();
});

describe('rule 2: create', () => {
  it('stores version 1 with 201, a Location header and the full stored definition', async () => {
    const result = await api('POST', '/api/agents', {
      body: definition('support-bot', {
        tools: ['clock'],
        model: {
          provider: 'demo',
          model: 'echo',
          fallbacks: [{ provider: 'catalogued', model: 'listed-model' }],
          providerSettings: { temperature: 0.2, maxOutputTokens: 1024 },
        },
        responseFormat: { kind: 'JsonSchema', schema: { type: 'object', properties: { answer: { type: 'string' } } } },
        parameters: [{ name: 'customer', description: 'Who asks', required: true }],
      }),
    });
    expect(result.status, result.text).toBe(201);
    expect(result.headers.get('location')).toBe('/api/agents/support-bot');
    expect(result.body).toMatchObject({
      name: 'support-bot',
      description: 'The support-bot agent',
      instructions: 'You are support-bot.',
      model: {
        provider: 'demo',
        model: 'echo',
        fallbacks: [{ provider: 'catalogued', model: 'listed-model' }],
        providerSettings: { temperature: 0.2, maxOutputTokens: 1024 },
      },
      tools: ['clock'],
      skills: [],
      agents: [],
      responseFormat: { kind: 'JsonSchema', schema: { type: 'object', properties: { answer: { type: 'string' } } } },
      parameters: [{ name: 'customer', description: 'Who asks', required: true }],
      version: 1,
      createdBy: 'auth-token',
    });
    expect(Date.parse(result.body.createdAt)).not.toBeNaN();
  });

  it('returns 409 for a name already stored, and changes nothing', async () => {
    const before = await snapshot();
    expectFullProblem(await api('POST', '/api/agents', { body: definition('baseline', { instructions: 'other' }) }), 409, 'conflict');
    expect(await snapshot()).toBe(before);
  });

  it('returns 409 for the name of a code-defined agent', async () => {
    expectFullProblem(await api('POST', '/api/agents', { body: definition('code-helper') }), 409, 'conflict');
  });

  it.each([
    ['an unconfigured provider', { model: { provider: 'nowhere', model: 'x' } }, 'model.provider', 'model_not_found'],
    [
      'an unconfigured fallback provider',
      { model: { provider: 'demo', model: 'echo', fallbacks: [{ provider: 'ghost', model: 'y' }] } },
      'model.fallbacks[0].provider',
      'model_not_found',
    ],
    ['an unknown tool', { tools: ['clock', 'teleport'] }, 'tools[1]', 'tool_not_found'],
    ['an unknown MCP tool', { tools: ['mcp:github/create_issue'] }, 'tools[0]', 'tool_not_found'],
    ['an unknown skill', { skills: ['pdf-reports'] }, 'skills[0]', 'skill_not_found'],
    ['an unknown callable agent', { agents: ['nobody'] }, 'agents[0]', 'agent_not_found'],
    ['a self-call', { agents: ['looper'] }, 'agents', 'call_graph_cycle'],
  ])('returns 400 for %s, naming the field, and writes nothing', async (_case, extra, path, code) => {
    const before = await snapshot();
    const result = await api('POST', '/api/agents', { body: definition('looper', extra) });
    expectFullProblem(result, 400, 'validation_failed');
    expect(result.body.errors).toContainEqual(expect.objectContaining({ path, code }));
    expect(await snapshot()).toBe(before);
  });

  it('accepts a model the provider does not list (the catalog is informative)', async () => {
    const result = await api('POST', '/api/agents', {
      body: definition('unlisted-model', { model: { provider: 'catalogued', model: 'brand-new' } }),
    });
    expect(result.status, result.text).toBe(201);
  });

  it('accepts callable agents of both origins', async () => {
    const result = await api('POST', '/api/agents', {
      body: definition('orchestrator', { agents: ['baseline', 'code-helper', 'code-factory'] }),
    });
    expect(result.status, result.text).toBe(201);
    expect(result.body.agents).toEqual(['baseline', 'code-helper', 'code-factory']);
  });
});

describe('rule 3: update', () => {
  it('appends a new version and keeps the previous one readable', async () => {
    await api('POST', '/api/agents', { body: definition('writer') });
    const updated = await api('PUT', '/api/agents/writer', { body: definition('writer', { instructions: 'Write well.' }) });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ name: 'writer', version: 2, instructions: 'Write well.' });
    const versions = await api('GET', '/api/agents/writer/versions');
    expect(versions.body.map((entry: any) => [entry.version, entry.instructions])).toEqual([
      [2, 'Write well.'],
      [1, 'You are writer.'],
    ]);
  });

  it('returns 400 when the path name and the body name differ', async () => {
    const before = await snapshot();
    const result = await api('PUT', '/api/agents/writer', { body: definition('not-writer') });
    expectFullProblem(result, 400, 'validation_failed');
    expect(result.body.errors).toContainEqual(expect.objectContaining({ path: 'name' }));
    expect(await snapshot()).toBe(before);
  });

  it('returns 409 for a code-defined name', async () => {
    expectFullProblem(await api('PUT', '/api/agents/code-helper', { body: definition('code-helper') }), 409, 'conflict');
  });

  it('returns 404 for a name with no stored definition', async () => {
    expectFullProblem(await api('PUT', '/api/agents/ghost', { body: definition('ghost') }), 404, 'not_found');
  });

  it('applies the create checks and writes nothing when they fail', async () => {
    const before = await snapshot();
    const result = await api('PUT', '/api/agents/writer', { body: definition('writer', { tools: ['nope'] }) });
    expectFullProblem(result, 400, 'validation_failed');
    expect(await snapshot()).toBe(before);
  });

  it('refuses an update that would close a cycle through other agents', async () => {
    await api('POST', '/api/agents', { body: definition('cycle-a') });
    expect((await api('POST', '/api/agents', { body: definition('cycle-b', { agents: ['cycle-a'] }) })).status).toBe(201);
    const before = await snapshot();
    const result = await api('PUT', '/api/agents/cycle-a', { body: definition('cycle-a', { agents: ['cycle-b'] }) });
    expectFullProblem(result, 400, 'validation_failed');
    expect(result.body.errors).toContainEqual(
      expect.objectContaining({ code: 'call_graph_cycle', message: expect.stringContaining('cycle-a -> cycle-b -> cycle-a') }),
    );
    expect(await snapshot()).toBe(before);
  });
});

describe('rule 1: list', () => {
  it('merges code and database agents ordered by name, code first on equal names', async () => {
    const result = await api('GET', '/api/agents');
    expect(result.status).toBe(200);
    const names = result.body.map((agent: any) => agent.name);
    expect(names).toEqual([...names].sort((a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(names).toEqual(expect.arrayContaining(['baseline', 'code-helper', 'code-factory', 'opaque-factory', 'support-bot']));
    expect(result.body.find((agent: any) => agent.name === 'code-helper')).toEqual({
      name: 'code-helper',
      description: 'A declarative code agent',
      origin: 'Code',
      model: { provider: 'demo', model: 'echo' },
      version: null,
      updatedAt: null,
    });
    expect(result.body.find((agent: any) => agent.name === 'code-factory')).toMatchObject({ origin: 'Code', model: null, version: null });
    expect(result.body.find((agent: any) => agent.name === 'baseline')).toMatchObject({
      origin: 'Database',
      version: 1,
      model: { provider: 'demo', model: 'echo' },
    });
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('get', () => {
  it('returns a database agent with its stored definition and isEditable true', async () => {
    const result = await api('GET', '/api/agents/support-bot');
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({
      name: 'support-bot',
      origin: 'Database',
      isEditable: true,
      factoryInstructions: null,
      definition: { name: 'support-bot', version: 1, instructions: 'You are support-bot.' },
      catalog: {
        description: 'The support-bot agent',
        model: { provider: 'demo', model: 'echo' },
        tools: ['clock'],
        skills: [],
        agents: [],
      },
    });
  });

  it('returns a declarative code agent with its in-memory definition including instructions', async () => {
    const result = await api('GET', '/api/agents/code-helper');
    expect(result.body).toMatchObject({
      origin: 'Code',
      isEditable: false,
      factoryInstructions: null,
      definition: { name: 'code-helper', instructions: 'Help with code.' },
    });
    expect(result.body.definition.version).toBeUndefined();
  });

  it('returns a factory agent with definition null and its instructions read best-effort', async () => {
    const built = await api('GET', '/api/agents/code-factory');
    expect(built.body).toMatchObject({
      origin: 'Code',
      isEditable: false,
      definition: null,
      factoryInstructions: 'Factory-built for default',
    });
    const failing = await api('GET', '/api/agents/opaque-factory');
    expect(failing.status).toBe(200);
    expect(failing.body).toMatchObject({ definition: null, factoryInstructions: null });
  });

  it('returns 404 for an unknown agent, including names no agent can have', async () => {
    expectFullProblem(await api('GET', '/api/agents/nobody'), 404, 'not_found');
    expectFullProblem(await api('GET', '/api/agents/has%20space'), 404, 'not_found');
    expectFullProblem(await api('GET', '/api/agents/Baseline'), 404, 'not_found');
  });
});

describe('rule 4: delete', () => {
  it('removes every version with 204, then 404 on a repeated delete', async () => {
    await api('POST', '/api/agents', { body: definition('doomed') });
    await api('PUT', '/api/agents/doomed', { body: definition('doomed', { instructions: 'v2' }) });
    expect((await api('DELETE', '/api/agents/doomed')).status).toBe(204);
    expectFullProblem(await api('GET', '/api/agents/doomed'), 404, 'not_found');
    expectFullProblem(await api('GET', '/api/agents/doomed/versions'), 404, 'not_found');
    expectFullProblem(await api('DELETE', '/api/agents/doomed'), 404, 'not_found');
  });

  it('starts again at version 1 when the name is created after a delete', async () => {
    await api('POST', '/api/agents', { body: definition('phoenix') });
    await api('PUT', '/api/agents/phoenix', { body: definition('phoenix') });
    await api('DELETE', '/api/agents/phoenix');
    const reborn = await api('POST', '/api/agents', { body: definition('phoenix') });
    expect(reborn.body.version).toBe(1);
  });

  it('returns 409 for a code-defined name', async () => {
    expectFullProblem(await api('DELETE', '/api/agents/code-helper'), 409, 'conflict');
  });
});

describe('rule 5: versions', () => {
  it('returns 404 for code-defined and unknown names', async () => {
    expectFullProblem(await api('GET', '/api/agents/code-helper/versions'), 404, 'not_found');
    expectFullProblem(await api('GET', '/api/agents/nobody/versions'), 404, 'not_found');
  });
});

describe('rule 6: rollback', () => {
  it('appends the old content as a new version, and can itself be rolled back', async () => {
    await api('POST', '/api/agents', { body: definition('rolling', { instructions: 'one' }) });
    await api('PUT', '/api/agents/rolling', { body: definition('rolling', { instructions: 'two' }) });
    const rolled = await api('POST', '/api/agents/rolling/rollback', { body: { version: 1 } });
    expect(rolled.status, rolled.text).toBe(200);
    expect(rolled.body).toMatchObject({ version: 3, instructions: 'one' });
    const again = await api('POST', '/api/agents/rolling/rollback', { body: { version: 2 } });
    expect(again.body).toMatchObject({ version: 4, instructions: 'two' });
    const versions = await api('GET', '/api/agents/rolling/versions');
    expect(versions.body.map((entry: any) => `${entry.version}:${entry.instructions}`)).toEqual(['4:two', '3:one', '2:two', '1:one']);
  });

  it('returns 404 for an unknown version or agent, 409 for a code agent, 400 for a bad body', async () => {
    const before = await snapshot();
    expectFullProblem(await api('POST', '/api/agents/rolling/rollback', { body: { version: 99 } }), 404, 'not_found');
    expectFullProblem(await api('POST', '/api/agents/nobody/rollback', { body: { version: 1 } }), 404, 'not_found');
    expectFullProblem(await api('POST', '/api/agents/code-helper/rollback', { body: { version: 1 } }), 409, 'conflict');
    expectFullProblem(await api('POST', '/api/agents/rolling/rollback', { body: { version: 'one' } }), 400, 'validation_failed');
    expectFullProblem(await api('POST', '/api/agents/rolling/rollback', { body: { version: 1.5 } }), 400, 'validation_failed');
    expectFullProblem(await api('POST', '/api/agents/rolling/rollback', { body: {} }), 400, 'validation_failed');
    expect(await snapshot()).toBe(before);
  });
});

describe('rule 7: diff', () => {
  it('returns left = {a} and right = {b} verbatim, in either order', async () => {
    const versions = (await api('GET', '/api/agents/rolling/versions')).body;
    const byVersion = new Map(versions.map((entry: any) => [entry.version, entry]));
    const forward = await api('GET', '/api/agents/rolling/versions/1/diff/2');
    expect(forward.status).toBe(200);
    expect(forward.body).toEqual({ left: byVersion.get(1), right: byVersion.get(2) });
    const backward = await api('GET', '/api/agents/rolling/versions/2/diff/1');
    expect(backward.body).toEqual({ left: byVersion.get(2), right: byVersion.get(1) });
  });

  it('returns 404 naming the missing version(s)', async () => {
    const one = await api('GET', '/api/agents/rolling/versions/1/diff/42');
    expectFullProblem(one, 404, 'not_found');
    expect(one.body.detail).toContain('42');
    expect(one.body.missingVersions).toEqual([42]);
    const both = await api('GET', '/api/agents/rolling/versions/41/diff/42');
    expect(both.body.missingVersions).toEqual([41, 42]);
    expectFullProblem(await api('GET', '/api/agents/nobody/versions/1/diff/2'), 404, 'not_found');
  });

  it('returns 400 for version numbers that are not int32', async () => {
    expectFullProblem(await api('GET', '/api/agents/rolling/versions/one/diff/2'), 400, 'validation_failed');
    expectFullProblem(await api('GET', '/api/agents/rolling/versions/1/diff/99999999999'), 400, 'validation_failed');
  });
});

describe('rule 8: validate', () => {
  it('reports a valid definition with 200 and writes nothing', async () => {
    const before = await snapshot();
    const result = await api('POST', '/api/agents/validate', { body: definition('draft', { tools: ['clock'] }) });
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ valid: true, messages: [] });
    expect(await snapshot()).toBe(before);
    expectFullProblem(await api('GET', '/api/agents/draft'), 404, 'not_found');
  });

  it('reports every finding with 200, valid false, severity, code, path', async () => {
    const result = await api('POST', '/api/agents/validate', {
      body: definition('draft', { model: { provider: 'nowhere', model: 'x' }, tools: ['teleport'], skills: ['ghost'], agents: ['nobody'] }),
    });
    expect(result.status).toBe(200);
    expect(result.body.valid).toBe(false);
    const codes = result.body.messages.map((message: any) => `${message.severity}:${message.code}:${message.path}`);
    expect(codes).toEqual(
      expect.arrayContaining([
        'Error:model_not_found:model.provider',
        'Error:tool_not_found:tools[0]',
        'Error:skill_not_found:skills[0]',
        'Error:agent_not_found:agents[0]',
      ]),
    );
  });

  it('reports shape errors in the body, not as an HTTP error, when name and model are present', async () => {
    const result = await api('POST', '/api/agents/validate', { body: { ...definition('bad name!'), tools: 'clock' } });
    expect(result.status).toBe(200);
    expect(result.body.valid).toBe(false);
    expect(result.body.messages.map((message: any) => message.path)).toEqual(expect.arrayContaining(['name', 'tools']));
  });

  it('warns about a catalog-unlisted model and about an existing name, and still reports valid', async () => {
    const result = await api('POST', '/api/agents/validate', {
      body: definition('baseline', { model: { provider: 'catalogued', model: 'unlisted' } }),
    });
    expect(result.body.valid).toBe(true);
    expect(result.body.messages).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ severity: 'Warning', code: 'model_not_in_catalog', path: 'model.model' }),
        expect.objectContaining({ severity: 'Warning', code: 'name_conflict', path: 'name' }),
      ]),
    );
  });

  it('reports a code-defined name as an error', async () => {
    const result = await api('POST', '/api/agents/validate', { body: definition('code-helper') });
    expect(result.body.valid).toBe(false);
    expect(result.body.messages).toContainEqual(expect.objectContaining({ severity: 'Error', code: 'name_conflict' }));
  });

  it('returns 400 only for an unreadable body or a missing name or model', async () => {
    expectFullProblem(
      await api('POST', '/api/agents/validate', { rawBody: '{"name": ', headers: { 'content-type': 'application/json' } }),
      400,
      'validation_failed',
    );
    expectFullProblem(
      await api('POST', '/api/agents/validate', { body: { model: { provider: 'demo', model: 'echo' } } }),
      400,
      'validation_failed',
    );
    expectFullProblem(await api('POST', '/api/agents/validate', { body: { name: 'x' } }), 400, 'validation_failed');
    expectFullProblem(await api('POST', '/api/agents/validate', { body: [1, 2] }), 400, 'validation_failed');
  });
});

describe('bad input never writes and never gives a 5xx', () => {
  const badBodies: Array<[string, Record<string, unknown> | undefined, string | undefined]> = [
    ['wrong types', { name: 'typed', model: { provider: 'demo', model: 'echo' }, tools: 'clock' }, 'tools'],
    ['a numeric name', { name: 42, model: { provider: 'demo', model: 'echo' } }, 'name'],
    ['an oversized name', { name: 'a'.repeat(129), model: { provider: 'demo', model: 'echo' } }, 'name'],
    ['a name with a space', { name: 'two words', model: { provider: 'demo', model: 'echo' } }, 'name'],
    ['a name starting with a dot', { name: '.hidden', model: { provider: 'demo', model: 'echo' } }, 'name'],
    ['an unknown field', { name: 'extra', model: { provider: 'demo', model: 'echo' }, temperature: 1 }, undefined],
    ['an unknown nested field', { name: 'extra', model: { provider: 'demo', model: 'echo', temp: 1 } }, 'model'],
    ['a missing model', { name: 'modelless' }, 'model'],
    ['an empty model name', { name: 'empty', model: { provider: 'demo', model: '' } }, 'model.model'],
    [
      'a JsonSchema format without a schema',
      { name: 'fmt', model: { provider: 'demo', model: 'echo' }, responseFormat: { kind: 'JsonSchema' } },
      'responseFormat.schema',
    ],
    [
      'an unknown format kind',
      { name: 'fmt', model: { provider: 'demo', model: 'echo' }, responseFormat: { kind: 'Xml' } },
      'responseFormat.kind',
    ],
    ['repeated tools', { name: 'dup', model: { provider: 'demo', model: 'echo' }, tools: ['clock', 'clock'] }, 'tools'],
    [
      'repeated parameter names',
      { name: 'dup', model: { provider: 'demo', model: 'echo' }, parameters: [{ name: 'a' }, { name: 'a' }] },
      'parameters',
    ],
    [
      'providerSettings that is not an object',
      { name: 'ps', model: { provider: 'demo', model: 'echo', providerSettings: [1] } },
      'model.providerSettings',
    ],
  ];

  it.each(badBodies)('POST with %s → 400 naming the field', async (_case, body, path) => {
    const before = await snapshot();
    const result = await api('POST', '/api/agents', { body });
    expectFullProblem(result, 400, 'validation_failed');
    if (path) expect(result.body.errors.map((error: any) => error.path)).toContain(path);
    expect(await snapshot()).toBe(before);
  });

  it.each([
    ['malformed JSON', '{"name": "x",', 'application/json', 400, 'validation_failed'],
    ['an empty body', '', 'application/json', 400, 'validation_failed'],
    ['a JSON string', '"agent"', 'application/json', 400, 'validation_failed'],
    ['null', 'null', 'application/json', 400, 'validation_failed'],
    ['a form body', 'name=x', 'application/x-www-form-urlencoded', 415, 'unsupported_media_type'],
    ['plain text', 'hello', 'text/plain', 415, 'unsupported_media_type'],
    [
      'a body over 1 MiB',
      JSON.stringify({ name: 'big', model: { provider: 'demo', model: 'echo' }, instructions: 'x'.repeat(1_100_000) }),
      'application/json',
      413,
      'payload_too_large',
    ],
  ])('POST with %s → documented status', async (_case, rawBody, contentType, status, errorType) => {
    const before = await snapshot();
    expectFullProblem(await api('POST', '/api/agents', { rawBody, headers: { 'content-type': contentType } }), status, errorType);
    expect(await snapshot()).toBe(before);
  });

  it('PUT with malformed JSON is refused and writes nothing', async () => {
    const before = await snapshot();
    expectFullProblem(
      await api('PUT', '/api/agents/baseline', { rawBody: '{', headers: { 'content-type': 'application/json' } }),
      400,
      'validation_failed',
    );
    expect(await snapshot()).toBe(before);
  });
});
