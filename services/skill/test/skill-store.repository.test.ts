import { openEngine, SQL_ENGINES, type EngineFixture } from '@hangar/testing';
import { sql, type Kysely } from '@hangar/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrantRepository } from '../src/grants/grant.repository.js';
import { skillMigrations } from '../src/migrations/index.js';
import type { SkillInput } from '../src/skills/skill.model.js';
import { createSkillRepository, type SkillDatabase } from '../src/skills/skill.repository.js';

const skill = (name: string, overrides: Partial<SkillInput> = {}): SkillInput => ({
  name,
  description: `the ${name} skill`,
  compatibility: null,
  instructions: 'Do it well.',
  resources: [{ name: 'reference/guide.md', content: '# guide' }],
  scripts: [{ name: 'fill', extension: 'sh', content: 'echo filled' }],
  ...overrides,
});

/** Stored skills and grants on both engines: whole-skill saves, tenant scoping, grant statuses and coverage. */
describe.each(SQL_ENGINES)('skill stores on %s', (engine) => {
  let fixture: EngineFixture;
  let db: Kysely<SkillDatabase>;
  let skills: ReturnType<typeof createSkillRepository>;
  let grants: ReturnType<typeof createGrantRepository>;

  beforeAll(async () => {
    fixture = await openEngine(engine);
    db = (await fixture.storage.open<SkillDatabase>('skills', skillMigrations)).db;
    skills = createSkillRepository(db);
    grants = createGrantRepository(db);
  });

  afterAll(async () => {
    await fixture?.close();
  });

  describe('skills', () => {
    it('saves a whole skill: created first, replaced later with omitted resources and scripts removed', async () => {
      const first = await skills.save(
        't1',
        skill('pdf', {
          resources: [
            { name: 'a.md', content: 'A' },
            { name: 'b.md', content: 'B' },
          ],
        }),
      );
      expect(first.created).toBe(true);
      expect(first.skill).toMatchObject({
        name: 'pdf',
        resources: [{ name: 'a.md' }, { name: 'b.md' }],
        scripts: [{ name: 'fill', extension: 'sh' }],
      });
      const second = await skills.save(
        't1',
        skill('pdf', { description: 'new', resources: [{ name: 'b.md', content: 'B2' }], scripts: [] }),
      );
      expect(second.created).toBe(false);
      expect(second.skill).toMatchObject({ description: 'new', resources: [{ name: 'b.md', content: 'B2' }], scripts: [] });
      expect(second.skill.createdAt).toBe(first.skill.createdAt);
      expect(await db.selectFrom('skill_resources').select('name').where('skill_name', '=', 'pdf').execute()).toEqual([{ name: 'b.md' }]);
    });

    it('keeps each tenant’s skills to itself', async () => {
      await skills.save('t1', skill('shared-name', { description: 'one' }));
      await skills.save('t2', skill('shared-name', { description: 'two' }));
      expect((await skills.get('t1', 'shared-name'))?.description).toBe('one');
      expect(await skills.get('t3', 'shared-name')).toBeUndefined();
      expect(await skills.existingNames('t2', ['shared-name', 'pdf'])).toEqual(['shared-name']);
      expect((await skills.list('t2')).map((entry) => entry.name)).toEqual(['shared-name']);
    });

    it('deletes a skill with its resources and scripts; a second delete finds nothing', async () => {
      await skills.save('t1', skill('gone'));
      expect(await skills.delete('t1', 'gone')).toBe(true);
      expect(await skills.delete('t1', 'gone')).toBe(false);
      for (const table of ['skill_resources', 'skill_scripts'] as const)
        expect(await db.selectFrom(table).select('name').where('skill_name', '=', 'gone').execute()).toEqual([]);
    });
  });

  describe('grants', () => {
    const expire = (id: string) =>
      db
        .updateTable('skill_script_grants')
        .set({ expires_at: sql`now() - interval '1 second'` })
        .where('id', '=', id)
        .execute();

    it('are Active, then Expired against the clock, or Revoked; only one in force covers a script', async () => {
      const wide = await grants.create('g1', {
        skillName: 'pdf',
        scriptName: null,
        expiresAt: new Date(Date.now() + 60_000),
        createdBy: 'alice',
      });
      expect(wide).toMatchObject({ status: 'Active', scriptName: null, createdBy: 'alice', revokedAt: null });
      expect(await grants.covers('g1', 'pdf', 'fill')).toBe(true);
      expect(await grants.covers('g2', 'pdf', 'fill')).toBe(false);
      await expire(wide.id);
      expect((await grants.list('g1'))[0].status).toBe('Expired');
      expect(await grants.covers('g1', 'pdf', 'fill')).toBe(false);
    });

    it('revoke as created: a script grant’s revocation leaves a skill-wide grant in force, and nothing matches twice', async () => {
      await grants.create('g3', { skillName: 'pdf', scriptName: null, expiresAt: null, createdBy: 'alice' });
      await grants.create('g3', { skillName: 'pdf', scriptName: 'fill', expiresAt: null, createdBy: 'alice' });
      expect((await grants.revoke('g3', 'pdf', 'fill', 'bob')).map((grant) => grant.status)).toEqual(['Revoked']);
      expect(await grants.covers('g3', 'pdf', 'fill')).toBe(true);
      expect(await grants.revoke('g3', 'pdf', 'fill', 'bob')).toEqual([]);
      expect(await grants.revoke('g3', 'pdf', null, 'bob')).toHaveLength(1);
      expect(await grants.covers('g3', 'pdf', 'fill')).toBe(false);
      expect((await grants.list('g3')).map((grant) => grant.status)).toEqual(['Revoked', 'Revoked']);
    });

    it('a one-script grant covers that script only', async () => {
      await grants.create('g4', { skillName: 'pdf', scriptName: 'fill', expiresAt: null, createdBy: 'alice' });
      expect(await grants.covers('g4', 'pdf', 'fill')).toBe(true);
      expect(await grants.covers('g4', 'pdf', 'sign')).toBe(false);
      expect(await grants.covers('g4', 'other', 'fill')).toBe(false);
    });
  });
});
