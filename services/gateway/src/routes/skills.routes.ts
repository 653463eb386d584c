import type { skillPb } from '@hangar/contracts';
import { z } from 'zod';
import { problemResponse } from '../api.schemas.js';
import { defineRoute } from '../http/route.js';

const TAG = 'Skills';

/** Agent Skills frontmatter rules (API.md "Attachments, skills, grants"); size limits are the skill service's. */
const SkillNameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'must be lowercase letters, digits and single hyphens, with no hyphen at either end');

const SkillRequestSchema = z
  .strictObject({
    name: SkillNameSchema,
    description: z.string().min(1).max(1024),
    compatibility: z.string().max(500).nullable().optional(),
    instructions: z.string().default(''),
    resources: z.array(z.strictObject({ name: z.string().min(1), content: z.string() })).default([]),
    scripts: z
      .array(
        z.strictObject({
          name: z.string().min(1),
          extension: z.string().min(1).describe('Without the dot: `sh`, `py`, `mjs`'),
          content: z.string(),
        }),
      )
      .default([]),
  })
  .meta({ id: 'SkillRequest' });

const SkillSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    compatibility: z.string().nullable(),
    instructions: z.string(),
    resources: z.array(z.object({ name: z.string(), content: z.string() })),
    scripts: z.array(z.object({ name: z.string(), extension: z.string(), content: z.string() })),
    onDisk: z.boolean().describe('Found under Skills:Scripts:SkillRoots: read-only through the API'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'Skill' });

const NameParams = z.object({ name: z.string() });

const skillJson = (skill: skillPb.Skill) => ({
  name: skill.name,
  description: skill.description,
  compatibility: skill.compatibility ?? null,
  instructions: skill.instructions,
  resources: skill.resources,
  scripts: skill.scripts,
  onDisk: skill.onDisk,
  createdAt: skill.createdAt,
  updatedAt: skill.updatedAt,
});

export const skillRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/skills',
    operationId: 'listSkills',
    summary: 'List skills',
    description: 'Returns every skill of the tenant and on disk, by name, with their resources and scripts. The list is not paged.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'AgentsRead' },
    responses: { 200: { description: 'Skills by name', schema: SkillSchema.array() } },
    async handler({ caller }, { skills }) {
      return { status: 200, body: (await skills.listSkills({}, { caller })).skills.map(skillJson) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/skills/{name}',
    operationId: 'getSkill',
    summary: 'Get a skill',
    description: 'Returns a skill with all its resources and scripts, content included. An unknown skill is 404.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'AgentsRead' },
    params: NameParams,
    responses: { 200: { description: 'The skill', schema: SkillSchema }, 404: problemResponse('Unknown skill') },
    async handler({ params, caller }, { skills }) {
      return { status: 200, body: skillJson((await skills.getSkill({ name: params.name }, { caller })).skill!) };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/api/skills/{name}',
    operationId: 'putSkill',
    summary: 'Create or replace a skill',
    description:
      'Saves a skill, replacing all of it: resources and scripts left out are removed. A skill that lives on disk cannot be changed (409); a script whose extension has no interpreter is 400. Answers 201 when it created the skill, 200 when it replaced one.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'AgentsAdmin' },
    params: NameParams,
    body: SkillRequestSchema,
    responses: {
      200: { description: 'Replaced', schema: SkillSchema },
      201: { description: 'Created', schema: SkillSchema },
      409: problemResponse('The skill lives on disk'),
    },
    async handler({ params, body, caller }, { skills }) {
      const { skill, created } = await skills.saveSkill(
        {
          pathName: params.name,
          skill: { ...body, compatibility: body.compatibility ?? undefined, onDisk: false, createdAt: undefined, updatedAt: undefined },
        },
        { caller },
      );
      return { status: created ? 201 : 200, body: skillJson(skill!) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/skills/{name}',
    operationId: 'deleteSkill',
    summary: 'Delete a skill',
    description:
      'Deletes a skill; agents that name it are kept and then fail validation with skill_not_found. A skill that lives on disk cannot be deleted (409).',
    tag: TAG,
    auth: { role: 'Admin', scope: 'AgentsAdmin' },
    params: NameParams,
    responses: { 204: { description: 'Deleted' }, 404: problemResponse('Unknown skill'), 409: problemResponse('The skill lives on disk') },
    async handler({ params, caller }, { skills }) {
      await skills.deleteSkill({ name: params.name }, { caller });
      return { status: 204 };
    },
  }),
];
