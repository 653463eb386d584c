import type { evaluationPb as pb } from '@hangar/contracts';
import { z } from 'zod';
import { problemResponse } from '../../api.schemas.js';
import { defineRoute } from '../../http/route.js';

const TAG = 'Experiments';
const NameParams = z.object({ name: z.string() });
const NOT_FOUND = problemResponse('No such experiment');
const STATUSES = ['Draft', 'Running', 'Stopped', 'Completed', 'RolledBack'] as const;

const VariantSchema = z.strictObject({
  version: z.number().int().min(1).describe('A stored version of the agent'),
  weight: z.number().int().min(0).max(1000).describe('Its share among the variants’ weights'),
});

const CanarySchema = z.strictObject({
  baselineVersion: z.number().int().min(1).describe('The version the agent is rolled back to when the canary scores low'),
  canaryVersion: z.number().int().min(1).describe('The new version whose share grows'),
  initialPercent: z.number().int().min(1).max(99).optional().describe('Its share at the start; 10 by default'),
  stepPercent: z.number().int().min(1).max(100).optional().describe('Added each Canary:ScanInterval its online score holds; 10 by default'),
});

const ExperimentRequestSchema = z
  .strictObject({
    agentName: z.string().min(1),
    variants: VariantSchema.array().max(10).optional().describe('2 to 10 versions with weights; left out for a canary'),
    canary: CanarySchema.optional(),
  })
  .meta({ id: 'ExperimentRequest' });

const ExperimentSchema = z
  .object({
    name: z.string(),
    agentName: z.string(),
    variants: z.object({ version: z.number().int(), weight: z.number().int() }).array(),
    canary: z
      .object({
        baselineVersion: z.number().int(),
        canaryVersion: z.number().int(),
        initialPercent: z.number().int(),
        stepPercent: z.number().int(),
      })
      .nullable(),
    status: z.enum(STATUSES),
    reason: z.string().nullable().describe('Why it stopped: who stopped it, or the canary’s rollback'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    stoppedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Experiment' });

const ResultsSchema = z
  .object({
    experiment: ExperimentSchema,
    variants: z
      .object({
        version: z.number().int(),
        weight: z.number().int(),
        runs: z.number().int(),
        completed: z.number().int(),
        failed: z.number().int(),
        cost: z.number().nullable(),
        latencyMsP50: z.number(),
        scored: z.number().int().describe('Runs online evaluation scored'),
        meanScore: z.number().nullable().describe('Their mean score, 0 … 100'),
      })
      .array(),
  })
  .meta({ id: 'ExperimentResults' });

const experimentJson = (experiment: pb.Experiment) => ({
  name: experiment.name,
  agentName: experiment.agentName,
  variants: experiment.variants,
  canary: experiment.canary ?? null,
  status: experiment.status as (typeof STATUSES)[number],
  reason: experiment.reason ?? null,
  createdAt: experiment.createdAt!,
  updatedAt: experiment.updatedAt!,
  startedAt: experiment.startedAt ?? null,
  stoppedAt: experiment.stoppedAt ?? null,
});

/** API.md "Evaluations and experiments": experiments and canaries, kept by the evaluation service. */
export const experimentRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/experiments',
    operationId: 'listExperiments',
    summary: 'List experiments',
    description: 'Returns the tenant’s experiments by name with their status.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'ExperimentsRead' },
    responses: { 200: { description: 'Experiments', schema: ExperimentSchema.array() } },
    async handler({ caller }, { evaluation }) {
      return { status: 200, body: (await evaluation.listExperiments({}, { caller })).experiments.map(experimentJson) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/experiments/{name}',
    operationId: 'getExperiment',
    summary: 'Get an experiment',
    description: 'Returns the experiment: its variants (a canary’s current shares), status and why it stopped.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'ExperimentsRead' },
    params: NameParams,
    responses: { 200: { description: 'The experiment', schema: ExperimentSchema }, 404: NOT_FOUND },
    async handler({ params, caller }, { evaluation }) {
      return { status: 200, body: experimentJson((await evaluation.getExperiment({ name: params.name }, { caller })).experiment!) };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/api/experiments/{name}',
    operationId: 'putExperiment',
    summary: 'Create or replace an experiment',
    description:
      'Weighted variants over stored versions of one agent (201 created, 200 replaced, as a draft until started). With `canary`, the variants follow from it: the canary version takes `initialPercent` of the runs and `stepPercent` more each Canary:ScanInterval while its online score holds; with Canary:AutoRollbackEnabled, a score below OnlineEvaluation:LowScoreThreshold over MinSampleSize scored runs rolls the agent back to `baselineVersion`. An unknown version is 404; a running experiment is 409 until stopped.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'ExperimentsAdmin' },
    params: NameParams,
    body: ExperimentRequestSchema,
    responses: {
      200: { description: 'Replaced', schema: ExperimentSchema },
      201: { description: 'Created', schema: ExperimentSchema },
      400: problemResponse('Invalid name, variants or canary'),
      404: problemResponse('No such agent or version'),
      409: problemResponse('The experiment is running'),
    },
    async handler({ params, body, caller }, { evaluation }) {
      const { experiment, created } = await evaluation.putExperiment(
        {
          name: params.name,
          agentName: body.agentName,
          variants: body.variants ?? [],
          canary: body.canary,
        },
        { caller },
      );
      return { status: created ? 201 : 200, body: experimentJson(experiment!) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/experiments/{name}',
    operationId: 'deleteExperiment',
    summary: 'Delete an experiment',
    description: 'Deletes the experiment; a running one stops splitting its agent’s runs at once (its runs keep their labels).',
    tag: TAG,
    auth: { role: 'Admin', scope: 'ExperimentsAdmin' },
    params: NameParams,
    responses: { 204: { description: 'Deleted' }, 404: NOT_FOUND },
    async handler({ params, caller }, { evaluation }) {
      await evaluation.deleteExperiment({ name: params.name }, { caller });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/experiments/{name}/start',
    operationId: 'startExperiment',
    summary: 'Start an experiment',
    description:
      'From now each new run of the agent that names no version takes a variant by weight, the same one for every run of a session, labelled `experiment:<name>` and `variant:<version>`. Another running experiment of the agent is 409; starting a running one changes nothing.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'ExperimentsAdmin' },
    params: NameParams,
    responses: {
      200: { description: 'Running', schema: ExperimentSchema },
      404: NOT_FOUND,
      409: problemResponse('Another experiment of the agent is running'),
    },
    async handler({ params, caller }, { evaluation }) {
      return { status: 200, body: experimentJson((await evaluation.startExperiment({ name: params.name }, { caller })).experiment!) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/experiments/{name}/stop',
    operationId: 'stopExperiment',
    summary: 'Stop an experiment',
    description: 'Runs of the agent take its current version again. Stopping one that is not running changes nothing.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'ExperimentsAdmin' },
    params: NameParams,
    responses: { 200: { description: 'Stopped', schema: ExperimentSchema }, 404: NOT_FOUND },
    async handler({ params, caller }, { evaluation }) {
      return { status: 200, body: experimentJson((await evaluation.stopExperiment({ name: params.name }, { caller })).experiment!) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/experiments/{name}/results',
    operationId: 'getExperimentResults',
    summary: 'Compare an experiment’s variants',
    description:
      'Per variant: its runs (labelled with the experiment; the latest 5,000), how they ended, their cost and median latency, and online evaluation’s scores of them since the experiment started.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'ExperimentsRead' },
    params: NameParams,
    responses: { 200: { description: 'Results', schema: ResultsSchema }, 404: NOT_FOUND },
    async handler({ params, caller }, { evaluation }) {
      const results = await evaluation.getExperimentResults({ name: params.name }, { caller });
      return {
        status: 200,
        body: {
          experiment: experimentJson(results.experiment!),
          variants: results.variants.map((variant) => ({
            version: variant.version,
            weight: variant.weight,
            runs: variant.runs,
            completed: variant.completed,
            failed: variant.failed,
            cost: variant.cost ?? null,
            latencyMsP50: variant.latencyP50Ms,
            scored: variant.scored,
            meanScore: variant.meanScore ?? null,
          })),
        },
      };
    },
  }),
];
