/**
 * A workflow's graph rules, pure: what a definition must satisfy, which steps start a run, which
 * run next (Pregel-style super steps: every edge that fires from a finished step activates its
 * target in the next super step, once however many edges fire into it), and what a step is given.
 */
import { validationError, type FieldError } from '@hangar/platform';
import {
  WorkflowDefinitionSchema,
  type EdgeCondition,
  type WorkflowDefinition,
  type WorkflowState,
  type WorkflowStep,
} from './workflow.model.js';

/** The run's input, as `inputFrom` names it. */
export const RUN_INPUT = '$input';

/** The longest output a transform step may give (a template may name a large output many times). */
export const MAX_STEP_OUTPUT_CHARS = 256 * 1024;

/** A template whose text would outgrow MAX_STEP_OUTPUT_CHARS. */
export class OutputTooLarge extends Error {}

/** A step's output by id: own properties only (a step may be called `constructor`). */
const outputOf = (outputs: Record<string, unknown>, id: string): unknown => (Object.hasOwn(outputs, id) ? outputs[id] : undefined);

/** Parses and checks a definition: its shape, then its graph. Throws a 400 naming every problem. */
export function checkedDefinition(raw: unknown): WorkflowDefinition {
  const parsed = WorkflowDefinitionSchema.safeParse(raw);
  if (!parsed.success) {
    throw validationError(
      'the workflow definition is not valid',
      parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
    );
  }
  const problems = graphProblems(parsed.data);
  if (problems.length) throw validationError('the workflow graph is not valid', problems);
  return parsed.data;
}

/** Steps with no edge into them: the first super step runs them all. */
export const entrySteps = (definition: WorkflowDefinition): string[] => {
  const targets = new Set(definition.edges.map((edge) => edge.to));
  return definition.steps.filter((step) => !targets.has(step.id)).map((step) => step.id);
};

/** What the graph itself gets wrong: unknown or duplicate ids, no entry, unreachable steps, cycles that cannot end. */
export function graphProblems(definition: WorkflowDefinition): FieldError[] {
  const problems: FieldError[] = [];
  const ids = new Set<string>();
  definition.steps.forEach((step, index) => {
    if (ids.has(step.id)) problems.push({ path: `steps.${index}.id`, message: `step id "${step.id}" is used twice` });
    ids.add(step.id);
  });
  definition.steps.forEach((step, index) => {
    if ('inputFrom' in step && step.inputFrom !== undefined && step.inputFrom !== RUN_INPUT && !ids.has(step.inputFrom))
      problems.push({ path: `steps.${index}.inputFrom`, message: `names no step ("${step.inputFrom}"); use a step id or ${RUN_INPUT}` });
  });
  const seen = new Set<string>();
  definition.edges.forEach((edge, index) => {
    if (!ids.has(edge.from)) problems.push({ path: `edges.${index}.from`, message: `names no step ("${edge.from}")` });
    if (!ids.has(edge.to)) problems.push({ path: `edges.${index}.to`, message: `names no step ("${edge.to}")` });
    const key = `${edge.from}\u0000${edge.to}\u0000${JSON.stringify(edge.when ?? null)}`;
    if (seen.has(key)) problems.push({ path: `edges.${index}`, message: `repeats the edge ${edge.from} → ${edge.to}` });
    seen.add(key);
  });
  if (problems.length) return problems;

  const entries = entrySteps(definition);
  if (!entries.length) return [{ path: 'edges', message: 'no step is an entry: every step has an edge into it' }];
  const next = successors(definition);
  const reached = new Set(entries);
  for (const queue = [...entries]; queue.length;) {
    for (const target of next.get(queue.shift()!) ?? []) if (!reached.has(target) && reached.add(target)) queue.push(target);
  }
  definition.steps.forEach((step, index) => {
    if (!reached.has(step.id)) problems.push({ path: `steps.${index}`, message: `step "${step.id}" cannot be reached from an entry step` });
  });
  for (const cycle of cycles(definition)) {
    const members = new Set(cycle);
    const inside = definition.edges.filter((edge) => members.has(edge.from) && members.has(edge.to));
    const exits = definition.edges.filter((edge) => members.has(edge.from) && !members.has(edge.to));
    const label = cycle.join(' → ');
    if (!exits.length) problems.push({ path: 'edges', message: `the cycle ${label} has no edge out of it` });
    // Every edge of it unconditional: each pass re-enters the cycle, whatever else fires.
    else if (inside.every((edge) => !edge.when))
      problems.push({ path: 'edges', message: `the cycle ${label} has no condition to leave it by` });
  }
  return problems;
}

function successors(definition: WorkflowDefinition): Map<string, string[]> {
  const next = new Map<string, string[]>();
  for (const edge of definition.edges) next.set(edge.from, [...(next.get(edge.from) ?? []), edge.to]);
  return next;
}

/** The graph's cycles as strongly connected components (Tarjan), each with more than one step or a self-edge. */
function cycles(definition: WorkflowDefinition): string[][] {
  const next = successors(definition);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (id: string) => {
    index.set(id, counter);
    low.set(id, counter++);
    stack.push(id);
    onStack.add(id);
    for (const target of next.get(id) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(id, Math.min(low.get(id)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(id, Math.min(low.get(id)!, index.get(target)!));
    }
    if (low.get(id) !== index.get(id)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.unshift(member);
    } while (member !== id);
    if (component.length > 1 || (next.get(id) ?? []).includes(id)) found.push(component);
  };
  for (const step of definition.steps) if (!index.has(step.id)) visit(step.id);
  return found;
}

/** A value as a step reads it: text as it is, anything else as JSON. */
export const asText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value ?? null));

export const conditionHolds = (when: EdgeCondition | undefined, output: unknown): boolean => {
  if (!when) return true;
  const text = asText(output);
  const holds = when.contains !== undefined ? text.includes(when.contains) : text === when.equals;
  return when.not ? !holds : holds;
};

/** The state a run starts in: its entry steps active in super step 1. */
export const initialState = (definition: WorkflowDefinition): WorkflowState => ({
  superStep: 1,
  active: entrySteps(definition),
  done: [],
  outputs: {},
  triggers: {},
});

/** After a super step: the steps its fired edges activate (in definition order), each with what fired it. */
export function nextSuperStep(definition: WorkflowDefinition, state: WorkflowState): WorkflowState {
  const fired = new Map<string, string[]>();
  for (const edge of definition.edges) {
    if (!state.active.includes(edge.from) || !conditionHolds(edge.when, outputOf(state.outputs, edge.from))) continue;
    const sources = fired.get(edge.to) ?? [];
    if (!sources.includes(edge.from)) fired.set(edge.to, [...sources, edge.from]);
  }
  const active = definition.steps.map((step) => step.id).filter((id) => fired.has(id));
  const triggers = Object.fromEntries(active.map((id) => [id, fired.get(id)!]));
  return { superStep: state.superStep + 1, active, done: [], outputs: state.outputs, triggers };
}

/** What a step is given: `inputFrom`'s output, else what fired it (one step's output, or several by id), else the run's input. */
export function stepInput(step: WorkflowStep, state: WorkflowState, runInput: unknown): unknown {
  const from = 'inputFrom' in step ? step.inputFrom : undefined;
  if (from === RUN_INPUT) return runInput;
  if (from !== undefined) return outputOf(state.outputs, from) ?? null;
  const fired = (Object.hasOwn(state.triggers, step.id) && state.triggers[step.id]) || [];
  if (!fired.length) return runInput;
  if (fired.length === 1) return outputOf(state.outputs, fired[0]) ?? null;
  return Object.fromEntries(fired.map((id) => [id, outputOf(state.outputs, id) ?? null]));
}

/**
 * A transform's template filled in: `{{input}}`, `{{parameters.<name>}}`, `{{<stepId>}}`; an unknown
 * name is left empty. Throws OutputTooLarge as soon as the text would pass MAX_STEP_OUTPUT_CHARS.
 */
export function renderTemplate(template: string, state: WorkflowState, runInput: unknown, parameters: Record<string, string>): string {
  let length = template.length;
  return template.replace(/\{\{\s*([A-Za-z$][\w.-]*)\s*\}\}/g, (match, name: string) => {
    const parameter = name.startsWith('parameters.') ? name.slice('parameters.'.length) : undefined;
    let value = '';
    if (name === 'input' || name === RUN_INPUT) value = asText(runInput);
    else if (parameter !== undefined) value = Object.hasOwn(parameters, parameter) ? parameters[parameter] : '';
    else if (Object.hasOwn(state.outputs, name)) value = asText(state.outputs[name]);
    length += value.length - match.length;
    if (length > MAX_STEP_OUTPUT_CHARS) throw new OutputTooLarge(`a transform's output would pass ${MAX_STEP_OUTPUT_CHARS} characters`);
    return value;
  });
}

/** A finished run's output: its last super step's output, or its steps' outputs by id when it ran several. */
export const runOutput = (state: WorkflowState): unknown =>
  state.active.length === 1
    ? (outputOf(state.outputs, state.active[0]) ?? null)
    : Object.fromEntries(state.active.map((id) => [id, outputOf(state.outputs, id) ?? null]));

/** The graph as `GET /api/workflows/{name}/graph` shows it. */
export const graphView = (name: string, version: number, definition: WorkflowDefinition) => ({
  name,
  version,
  nodes: definition.steps.map((step) => ({ id: step.id, kind: step.kind, ...(step.kind === 'agent' && { agent: step.agent }) })),
  edges: definition.edges.map((edge) => ({ from: edge.from, to: edge.to, ...(edge.when && { when: edge.when }) })),
  entries: entrySteps(definition),
});
