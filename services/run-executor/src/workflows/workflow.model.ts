/** What a workflow is, as the run executor's rules see it (no SQL, no transport). */
import { z } from 'zod';
import type { Caller } from '@hangar/platform';
import type { RunStatus } from '../runs/run.model.js';

const STEP_ID = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/** An edge's condition on its source step's output (as text): exactly one test, `not` inverts it. */
export const EdgeConditionSchema = z
  .strictObject({
    contains: z.string().min(1).max(1000).optional(),
    equals: z.string().max(16000).optional(),
    not: z.boolean().optional(),
  })
  .refine((when) => (when.contains === undefined) !== (when.equals === undefined), {
    message: 'needs exactly one of contains, equals',
  });

export const StepSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    id: z.string().regex(STEP_ID),
    kind: z.literal('agent'),
    agent: z.string().min(1).max(128),
    /** The step whose output this step is given (`$input`: the run's); absent: what triggered it (an entry step: the run's input). */
    inputFrom: z.string().optional(),
    /** Written before the step's input, e.g. an instruction for this step only. */
    prompt: z.string().max(8000).optional(),
  }),
  z.strictObject({
    id: z.string().regex(STEP_ID),
    kind: z.literal('input'),
    /** What the human is asked; the step's input follows it. */
    prompt: z.string().max(8000).optional(),
    inputFrom: z.string().optional(),
  }),
  z.strictObject({
    id: z.string().regex(STEP_ID),
    kind: z.literal('transform'),
    /** Text with `{{input}}`, `{{parameters.<name>}}` and `{{<stepId>}}` filled in. */
    template: z.string().min(1).max(16000),
  }),
]);

export const EdgeSchema = z.strictObject({ from: z.string(), to: z.string(), when: EdgeConditionSchema.optional() });

export const WorkflowDefinitionSchema = z.strictObject({
  steps: z.array(StepSchema).min(1).max(100),
  edges: z.array(EdgeSchema).max(500),
  description: z.string().max(2000).optional(),
});

export type WorkflowStep = z.infer<typeof StepSchema>;
export type WorkflowEdge = z.infer<typeof EdgeSchema>;
export type EdgeCondition = z.infer<typeof EdgeConditionSchema>;
export type WorkflowDefinition = z.infer<typeof WorkflowDefinitionSchema>;

/** A stored version of a workflow. */
export interface Workflow {
  name: string;
  version: number;
  definition: WorkflowDefinition;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * Where a workflow run stands, saved after every step that finishes and checkpointed after every
 * super step: the steps of the super step `superStep` (`active`), those of them already done
 * (`done`, so a resumed super step runs only the rest) and every step's latest output.
 */
export interface WorkflowState {
  superStep: number;
  active: string[];
  done: string[];
  outputs: Record<string, unknown>;
  /** For each active step, the steps whose edges fired into it (none: an entry step). */
  triggers: Record<string, string[]>;
}

/** A workflow run as the worker holds it. */
export interface WorkflowRunRow {
  id: string;
  tenantId: string;
  workflow: string;
  version: number;
  definition: WorkflowDefinition;
  status: RunStatus;
  input: unknown;
  parameters: Record<string, string>;
  caller: Caller;
  state: WorkflowState;
  /** Time spent executing (not paused for a human): what Workflows:RunTimeout bounds. */
  activeMs: number;
  output: unknown;
  errorType: string | null;
  errorMessage: string | null;
  createdAt: Date;
  completedAt: Date | null;
}

export interface WorkflowCheckpoint {
  id: string;
  superStep: number;
  createdAt: Date;
  state: WorkflowState;
}

export interface WorkflowRequest {
  id: string;
  stepId: string;
  superStep: number;
  prompt: string;
  status: 'Pending' | 'Answered';
  answer: unknown;
  answeredBy: string | null;
  createdAt: Date;
  answeredAt: Date | null;
}
