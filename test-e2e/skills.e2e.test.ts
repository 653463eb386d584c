import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allInOneModules } from '@hangar/all-in-one';
import { createJwtIssuer, startHangar, startMockOpenAI, TEST_TOPOLOGY, type HangarUnderTest, type MockOpenAI } from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** SPEC "Skills" and "Skill script grants" through HTTP: whole-skill saves, skills on disk, tenant scoping, grants, audit. */

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'hangar';
let issuer: Awaited<ReturnType<typeof createJwtIssuer>>;
let hangar: HangarUnderTest;
let mock: MockOpenAI;
/** Script execution off and no interpreters: the defaults. */
let plain: HangarUnderTest;

const tenant = (name: string) => ({ 'x-hangar-tenant': name });
const skill = (name: string, overrides: Record<string, unknown> = {}) => ({
  name,
  description: `The ${name} skill`,
  instructions: 'Fill the form, then check it.',
  resources: [{ name: 'reference/forms.md', content: '# Forms' }],
  scripts: [{ name: 'fill', extension: 'sh', content: 'echo filled' }],
  ...overrides,
});

function skillRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'hangar-skills-'));
  const folder = join(root, 'team', 'disk-notes');
  mkdirSync(join(folder, 'scripts'), { recursive: true });
  writeFileSync(
    join(folder, 'SKILL.md'),
    '---\nname: disk-notes\ndescription: Notes kept on disk\ncompatibility: any shell\n---\nRead the notes first.\n',
  );
  writeFileSync(join(folder, 'notes.md'), 'the notes');
  writeFileSync(join(folder, 'scripts', 'count.sh'), 'echo 3');
  // Breaks the frontmatter rules: skipped, never half-loaded.
  mkdirSync(join(root, 'Bad-Name'));
  writeFileSync(join(root, 'Bad-Name', 'SKILL.md'), '---\nname: Bad-Name\ndescription: x\n---\n');
  return root;
}

beforeAll(async () => {
  issuer = await createJwtIssuer({ issuer: ISSUER, audience: AUDIENCE });
  mock = await startMockOpenAI();
  // Calls the skill's script when it is offered, then repeats what the script printed.
  mock.script('skilled', (request) => {
    const result = request.messages.find((message) => message.role === 'tool');
    if (result) return { text: `the script said ${JSON.stringify(result.content)}` };
    const script = request.tools?.find((entry) => entry.function.name === 'skill_pdf_tools_fill');
    return script ? { toolCall: { name: script.function.name, args: { args: ['form-7'], stdin: 'Ada' } } } : { text: 'no script offered' };
  });
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Tenancy: { Enabled: true, AllowHeaderResolution: true },
      Hangar: { Api: { Jwt: { Enabled: true, Jwks: issuer.jwks, Issuer: ISSUER, Audience: AUDIENCE } } },
      Audit: { ActorClaimType: 'email' },
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
      Skills: {
        MaxResourceContentLength: 64,
        Scripts: {
          Enabled: true,
          PlatformIsolationAcknowledged: true,
          AllowStoredScripts: true,
          Interpreters: { sh: '/bin/sh', '.py': 'python3 -I' },
          SkillRoots: [skillRoot()],
        },
      },
    },
  });
  plain = await startHangar({ modules: allInOneModules() });
  // Two instances, one after the other: on a loaded 2-core machine they have outlasted the default minute.
}, 120_000);

afterAll(async () => {
  await hangar?.stop();
  await plain?.stop();
  await mock?.close();
});

describe('skills', () => {
  it('saves a whole skill: 201 first, 200 later, omitted resources and scripts removed; get and list return content', async () => {
    const created = await hangar.request('PUT', '/api/skills/pdf-forms', { body: skill('pdf-forms') });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      name: 'pdf-forms',
      compatibility: null,
      onDisk: false,
      scripts: [{ name: 'fill', extension: 'sh', content: 'echo filled' }],
    });
    const replaced = await hangar.request('PUT', '/api/skills/pdf-forms', { body: skill('pdf-forms', { resources: [], scripts: [] }) });
    expect(replaced.status).toBe(200);
    expect((await hangar.request('GET', '/api/skills/pdf-forms')).body).toMatchObject({ resources: [], scripts: [] });
    const list = (await hangar.request('GET', '/api/skills')).body;
    expect(list.map((entry: any) => entry.name)).toEqual(['disk-notes', 'pdf-forms']);
    const audit = (await hangar.request('GET', '/api/audit?resourceType=skill')).body;
    expect(audit.map((entry: any) => `${entry.action}:${entry.resourceId}`)).toEqual(
      expect.arrayContaining(['skill.created:pdf-forms', 'skill.updated:pdf-forms']),
    );
  });

  it.each([
    ['upper case in the name', skill('Pdf'), 'name'],
    ['a double hyphen', skill('pdf--forms'), 'name'],
    ['a 65-character name', skill('a'.repeat(65)), 'name'],
    ['a 1025-character description', skill('bad', { description: 'd'.repeat(1025) }), 'description'],
    ['a 501-character compatibility', skill('bad', { compatibility: 'c'.repeat(501) }), 'compatibility'],
    [
      'an extension with no interpreter',
      skill('bad', { scripts: [{ name: 'x', extension: 'rb', content: 'puts 1' }] }),
      'scripts[0].extension',
    ],
    [
      'an extension named like an object property',
      skill('bad', { scripts: [{ name: 'x', extension: 'constructor', content: '' }] }),
      'scripts[0].extension',
    ],
    [
      'a resource one byte over Skills:MaxResourceContentLength',
      skill('bad', { resources: [{ name: 'r.md', content: 'r'.repeat(65) }] }),
      'resources[0].content',
    ],
    ['a resource path leaving the skill', skill('bad', { resources: [{ name: '../etc/passwd', content: 'x' }] }), 'resources[0].name'],
    [
      'two scripts of one name',
      skill('bad', {
        scripts: [
          { name: 'x', extension: 'sh', content: '' },
          { name: 'x', extension: 'py', content: '' },
        ],
      }),
      'scripts[1].name',
    ],
  ])('refuses %s with 400 naming the field, and writes nothing', async (_, body, field) => {
    const name = (body as { name: string }).name;
    const result = await hangar.request('PUT', `/api/skills/${encodeURIComponent(name)}`, { body });
    expectProblem(result, 400, 'validation_failed');
    expect(result.body.errors.map((error: any) => error.path)).toContain(field);
    expect((await hangar.request('GET', '/api/skills')).body.map((entry: any) => entry.name)).not.toContain(name);
  });

  it('refuses a body name other than the path name (400)', async () => {
    expectProblem(await hangar.request('PUT', '/api/skills/one', { body: skill('two') }), 400, 'validation_failed');
  });

  it('refuses a script nothing could run even while execution is off (the defaults)', async () => {
    expectProblem(await plain.request('PUT', '/api/skills/pdf', { body: skill('pdf') }), 400, 'validation_failed');
    expect((await plain.request('PUT', '/api/skills/pdf', { body: skill('pdf', { scripts: [] }) })).status).toBe(201);
  });

  it('keeps each tenant’s skills to itself: another tenant’s skill is a 404', async () => {
    expect((await hangar.request('PUT', '/api/skills/acme-only', { body: skill('acme-only'), headers: tenant('acme') })).status).toBe(201);
    expectProblem(await hangar.request('GET', '/api/skills/acme-only', { headers: tenant('globex') }), 404, 'not_found');
    expectProblem(await hangar.request('DELETE', '/api/skills/acme-only', { headers: tenant('globex') }), 404, 'not_found');
    expect((await hangar.request('GET', '/api/skills', { headers: tenant('globex') })).body.map((entry: any) => entry.name)).toEqual([
      'disk-notes',
    ]);
  });

  it('deletes a skill (204); an agent naming it is kept as written and then fails validation with skill_not_found', async () => {
    await hangar.request('PUT', '/api/skills/doomed', { body: skill('doomed', { scripts: [] }) });
    const agent = { name: 'uses-doomed', model: { provider: 'demo', model: 'echo' }, skills: ['doomed'] };
    expect((await hangar.request('POST', '/api/agents', { body: agent })).status).toBe(201);
    expect((await hangar.request('DELETE', '/api/skills/doomed')).status).toBe(204);
    expectProblem(await hangar.request('DELETE', '/api/skills/doomed'), 404, 'not_found');
    expect((await hangar.request('GET', '/api/agents/uses-doomed')).body.definition.skills).toEqual(['doomed']);
    const report = (await hangar.request('POST', '/api/agents/validate', { body: agent })).body;
    expect(report.messages.map((message: any) => `${message.code}:${message.path}`)).toContain('skill_not_found:skills[0]');
  });
});

describe('skills on disk', () => {
  it('are found to SearchDepth, read-only (409 on save or delete), visible to every tenant; a folder breaking the rules is skipped', async () => {
    const found = await hangar.request('GET', '/api/skills/disk-notes', { headers: tenant('anyone') });
    expect(found.body).toMatchObject({
      name: 'disk-notes',
      description: 'Notes kept on disk',
      compatibility: 'any shell',
      instructions: 'Read the notes first.',
      resources: [{ name: 'notes.md', content: 'the notes' }],
      scripts: [{ name: 'count', extension: 'sh', content: 'echo 3' }],
      onDisk: true,
    });
    expectProblem(await hangar.request('PUT', '/api/skills/disk-notes', { body: skill('disk-notes') }), 409, 'conflict');
    expectProblem(await hangar.request('DELETE', '/api/skills/disk-notes'), 409, 'conflict');
    expectProblem(await hangar.request('GET', '/api/skills/bad-name'), 404, 'not_found');
    const agent = { name: 'uses-disk', model: { provider: 'demo', model: 'echo' }, skills: ['disk-notes'] };
    expect((await hangar.request('POST', '/api/agents', { body: agent, headers: tenant('anyone') })).status).toBe(201);
  });
});

describe('skill script grants', () => {
  it('cannot be created while script execution is off (409)', async () => {
    expectProblem(await plain.request('POST', '/api/skill-script-grants', { body: { skillName: 'pdf' } }), 409, 'conflict');
  });

  it('refuses an expiry now or past (400), and an unknown field', async () => {
    const past = new Date(Date.now() - 1000).toISOString();
    expectProblem(
      await hangar.request('POST', '/api/skill-script-grants', { body: { skillName: 'pdf', expiresAt: past } }),
      400,
      'validation_failed',
    );
    expectProblem(
      await hangar.request('POST', '/api/skill-script-grants', { body: { skillName: 'pdf', script: 'x' } }),
      400,
      'validation_failed',
    );
  });

  it('grants, lists with status, and revokes as created; every change is audited with the actor claim', async () => {
    const admin = await issuer.sign({ sub: 'user-7', name: 'Seven', email: 'seven@example.test', roles: ['Admin'] });
    const as = { token: admin, headers: tenant('grants') };
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const wide = await hangar.request('POST', '/api/skill-script-grants', { ...as, body: { skillName: 'pdf-forms', expiresAt } });
    expect(wide.status, wide.text).toBe(201);
    expect(wide.body).toMatchObject({
      skillName: 'pdf-forms',
      scriptName: null,
      status: 'Active',
      createdBy: 'seven@example.test',
      revokedAt: null,
    });
    const one = await hangar.request('POST', '/api/skill-script-grants', { ...as, body: { skillName: 'pdf-forms', scriptName: 'fill' } });
    expect(one.body).toMatchObject({ scriptName: 'fill', expiresAt: null });

    expect((await hangar.request('DELETE', '/api/skill-script-grants/pdf-forms?scriptName=fill', as)).status).toBe(204);
    expectProblem(await hangar.request('DELETE', '/api/skill-script-grants/pdf-forms?scriptName=fill', as), 404, 'not_found');
    expectProblem(await hangar.request('DELETE', '/api/skill-script-grants/pdf-forms?scriptName=other', as), 404, 'not_found');
    const listed = (await hangar.request('GET', '/api/skill-script-grants', as)).body;
    expect(listed.map((grant: any) => [grant.scriptName, grant.status])).toEqual([
      [null, 'Active'],
      ['fill', 'Revoked'],
    ]);
    // Without the configured claim, the actor is the name identifier, then the name, then the subject.
    const named = await issuer.sign({ sub: 'user-8', name: 'Eight', roles: ['Admin'] });
    expect((await hangar.request('DELETE', '/api/skill-script-grants/pdf-forms', { ...as, token: named })).status).toBe(204);
    expect((await hangar.request('GET', '/api/skill-script-grants', { headers: tenant('other') })).body).toEqual([]);

    const audit = await hangar.request('GET', '/api/audit?resourceType=skill-script-grant', as);
    expect(audit.status, audit.text).toBe(200);
    const trail = audit.body.map((entry: any) => `${entry.action}:${entry.actor}`);
    expect(trail).toEqual(
      expect.arrayContaining(['skill-script-grant.created:seven@example.test', 'skill-script-grant.revoked:seven@example.test']),
    );
  });
});

describe('skills in runs', () => {
  // One shape: all-in-one registers Hangar's script runner; the skill service's own process registers none (a host composes one).
  it.skipIf(TEST_TOPOLOGY === 'split')(
    'offers a granted script as a tool: the model calls it and gets its output; the call is in the run events',
    async () => {
      const as = { headers: tenant('runner') };
      const saved = await hangar.request('PUT', '/api/skills/pdf-tools', {
        ...as,
        body: skill('pdf-tools', { scripts: [{ name: 'fill', extension: 'sh', content: 'read name; echo "filled $1 for $name"' }] }),
      });
      expect(saved.status, saved.text).toBe(201);
      const agent = { name: 'filler', model: { provider: 'mock', model: 'skilled' }, skills: ['pdf-tools'] };
      expect((await hangar.request('POST', '/api/agents', { ...as, body: agent })).status).toBe(201);
      const run = (key: string) =>
        hangar.request('POST', '/api/agents/filler/run', {
          headers: { ...as.headers, 'idempotency-key': key },
          body: { message: 'fill form 7' },
        });

      // No grant: the script is not offered, and nothing ran.
      expect((await run('no-grant')).body.output.text).toBe('no script offered');

      expect(
        (await hangar.request('POST', '/api/skill-script-grants', { ...as, body: { skillName: 'pdf-tools', scriptName: 'fill' } })).status,
      ).toBe(201);
      const answered = await run('granted');
      expect(answered.body.output.text).toContain('filled form-7 for Ada');
      const events = (await hangar.request('GET', `/api/runs/${answered.body.runId}/events`, as)).text;
      expect(events).toContain('event: tool.invoking');
      const completed = events.split('\n\n').find((frame) => frame.includes('event: tool.completed'));
      expect(completed).toContain('"toolName":"skill_pdf_tools_fill"');
      expect(completed).toContain('filled form-7 for Ada');
      const system = mock.requests.at(-1)!.messages.find((message) => message.role === 'system');
      expect(String(system?.content)).toContain('## Skill: pdf-tools');
    },
  );
});
