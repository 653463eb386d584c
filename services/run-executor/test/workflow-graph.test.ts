import { HangarError } from '@hangar/platform';
import { describe, expect, it } from 'vitest';
import {
  checkedDefinition,
  conditionHolds,
  entrySteps,
  initialState,
  nextSuperStep,
  renderTemplate,
  runOutput,
  stepInput,
} from '../src/workflows/workflow-graph.js';
import type { WorkflowDefinition, WorkflowState } from '../src/workflows/workflow.model.js';

const agent = (id: string, extra: Record<string, unknown> = {}) => ({ id, kind: 'agent', agent: 'writer', ...extra });

function problemsOf(raw: unknown): string[] {
  try {
    checkedDefinition(raw);
  } catch (error) {
    expect(error).toBeInstanceOf(HangarError);
    const details = (error as HangarError).extensions.errors as Array<{ path: string; message: string }>;
    return details.map((detail) => `${detail.path}: ${detail.message}`);
  }
  return [];
}

/** brief → draft → (review, summary) → publish when review says yes, back to draft when it says no. */
const REVIEWED: WorkflowDefinition = checkedDefinition({
  steps: [
    { id: 'brief', kind: 'transform', template: 'Write about {{input}}' },
    agent('draft'),
    { id: 'review', kind: 'input', prompt: 'Publish?' },
    agent('summary'),
    { id: 'publish', kind: 'transform', template: '{{summary}} ({{review}})' },
  ],
  edges: [
    { from: 'brief', to: 'draft' },
    { from: 'draft', to: 'review' },
    { from: 'draft', to: 'summary' },
    { from: 'review', to: 'publish', when: { equals: 'yes' } },
    { from: 'summary', to: 'publish' },
    { from: 'review', to: 'draft', when: { equals: 'yes', not: true } },
  ],
});

describe('workflow definitions', () => {
  it('accepts a graph with fan-out, fan-in and a cycle that has a condition and an exit', () => {
    expect(entrySteps(REVIEWED)).toEqual(['brief']);
  });

  it('names every problem of a graph at once, with its path', () => {
    expect(
      problemsOf({
        steps: [agent('a'), agent('a'), agent('b', { inputFrom: 'nowhere' })],
        edges: [
          { from: 'a', to: 'ghost' },
          { from: 'a', to: 'b' },
          { from: 'a', to: 'b' },
        ],
      }),
    ).toEqual([
      'steps.1.id: step id "a" is used twice',
      'steps.2.inputFrom: names no step ("nowhere"); use a step id or $input',
      'edges.0.to: names no step ("ghost")',
      'edges.2: repeats the edge a → b',
    ]);
  });

  it('refuses a graph with no entry, unreachable steps, and cycles that cannot end', () => {
    expect(
      problemsOf({
        steps: [agent('a'), agent('b')],
        edges: [
          { from: 'a', to: 'b' },
          { from: 'b', to: 'a' },
        ],
      }),
    ).toEqual(['edges: no step is an entry: every step has an edge into it']);
    // c ⇄ d is reached from nowhere: neither is an entry, nothing leads to them.
    expect(
      problemsOf({
        steps: [agent('a'), agent('c'), agent('d')],
        edges: [
          { from: 'c', to: 'd' },
          { from: 'd', to: 'c', when: { contains: 'again' } },
        ],
      }),
    ).toEqual([
      'steps.1: step "c" cannot be reached from an entry step',
      'steps.2: step "d" cannot be reached from an entry step',
      'edges: the cycle c → d has no edge out of it',
    ]);
    expect(
      problemsOf({
        steps: [agent('a'), agent('b'), agent('c')],
        edges: [
          { from: 'a', to: 'b' },
          { from: 'b', to: 'a' },
          { from: 'b', to: 'c', when: { contains: 'done' } },
          { from: 'start', to: 'a' },
        ].slice(0, 3),
      }),
    ).toEqual(['edges: no step is an entry: every step has an edge into it']);
    expect(
      problemsOf({
        steps: [agent('start'), agent('a'), agent('b'), agent('c')],
        edges: [
          { from: 'start', to: 'a' },
          { from: 'a', to: 'b' },
          { from: 'b', to: 'a' },
          { from: 'b', to: 'c', when: { contains: 'done' } },
        ],
      }),
    ).toEqual(['edges: the cycle a → b has no condition to leave it by']);
    expect(problemsOf({ steps: [agent('a')], edges: [{ from: 'a', to: 'a' }] })).toEqual([
      'edges: no step is an entry: every step has an edge into it',
    ]);
  });

  it('checks the shape: kinds and their fields, step ids, conditions with exactly one test', () => {
    expect(problemsOf({ steps: [{ id: 'a', kind: 'agent' }], edges: [] })[0]).toMatch(/^steps\.0\.agent: /);
    expect(problemsOf({ steps: [{ id: 'a', kind: 'transform' }], edges: [] })[0]).toMatch(/^steps\.0\.template: /);
    expect(problemsOf({ steps: [{ id: 'a', kind: 'loop' }], edges: [] })[0]).toMatch(/^steps\.0\.kind: /);
    expect(problemsOf({ steps: [agent('has space')], edges: [] })[0]).toMatch(/^steps\.0\.id: /);
    expect(problemsOf({ steps: [], edges: [] })[0]).toMatch(/^steps: /);
    expect(problemsOf({ steps: [agent('a'), agent('b')], edges: [{ from: 'a', to: 'b', when: { contains: 'x', equals: 'y' } }] })).toEqual([
      'edges.0.when: needs exactly one of contains, equals',
    ]);
    expect(problemsOf({ steps: [agent('a')], edges: [], extra: true })[0]).toMatch(/extra|Unrecognized/);
  });
});

describe('super steps', () => {
  it('activates every target of a fired edge once, with the steps that fired it', () => {
    let state = initialState(REVIEWED);
    expect(state).toEqual({ superStep: 1, active: ['brief'], done: [], outputs: {}, triggers: {} });
    state = nextSuperStep(REVIEWED, { ...state, outputs: { brief: 'Write about x' }, done: ['brief'] });
    expect(state).toMatchObject({ superStep: 2, active: ['draft'], triggers: { draft: ['brief'] } });
    state = { ...state, outputs: { ...state.outputs, draft: 'text' }, done: ['draft'] };
    state = nextSuperStep(REVIEWED, state);
    expect(state).toMatchObject({
      superStep: 3,
      active: ['review', 'summary'],
      done: [],
      triggers: { review: ['draft'], summary: ['draft'] },
    });
    // Both edges into publish fire in the same super step: publish runs once, fed by both.
    state = nextSuperStep(REVIEWED, { ...state, outputs: { ...state.outputs, review: 'yes', summary: 'short' } });
    expect(state).toMatchObject({ superStep: 4, active: ['publish'], triggers: { publish: ['review', 'summary'] } });
    expect(stepInput({ id: 'publish', kind: 'transform', template: 'x' }, state, 'run input')).toEqual({ review: 'yes', summary: 'short' });
  });

  it('follows the condition: a "no" goes back to draft, not on to publish', () => {
    const state: WorkflowState = {
      superStep: 2,
      active: ['review', 'summary'],
      done: ['review', 'summary'],
      outputs: { draft: 'd', review: 'no', summary: 's' },
      triggers: {},
    };
    const next = nextSuperStep(REVIEWED, state);
    expect(next.active).toEqual(['draft', 'publish']);
    expect(next.triggers).toEqual({ draft: ['review'], publish: ['summary'] });
    expect(nextSuperStep(REVIEWED, { ...next, outputs: { ...next.outputs, draft: 'd2', publish: 'p' } }).active).toEqual([
      'review',
      'summary',
    ]);
  });

  it('ends when nothing fires; the output is the last super step’s', () => {
    const last: WorkflowState = { superStep: 4, active: ['publish'], done: ['publish'], outputs: { publish: 'final' }, triggers: {} };
    expect(nextSuperStep(REVIEWED, last).active).toEqual([]);
    expect(runOutput(last)).toBe('final');
    expect(runOutput({ ...last, active: ['a', 'b'], outputs: { a: 1, b: { x: 2 } } })).toEqual({ a: 1, b: { x: 2 } });
  });

  it('gives a step its inputFrom, what fired it, or the run input', () => {
    const state: WorkflowState = { superStep: 2, active: ['b'], done: [], outputs: { a: 'from a' }, triggers: { b: ['a'] } };
    expect(stepInput({ id: 'b', kind: 'agent', agent: 'x' }, state, 'in')).toBe('from a');
    expect(stepInput({ id: 'b', kind: 'agent', agent: 'x', inputFrom: '$input' }, state, 'in')).toBe('in');
    expect(stepInput({ id: 'b', kind: 'agent', agent: 'x', inputFrom: 'a' }, state, 'in')).toBe('from a');
    expect(stepInput({ id: 'c', kind: 'agent', agent: 'x' }, state, { topic: 'in' })).toEqual({ topic: 'in' });
  });

  it('fills templates from the input, parameters and outputs; conditions read outputs as text', () => {
    const state: WorkflowState = { superStep: 2, active: [], done: [], outputs: { a: 'A', b: { n: 1 } }, triggers: {} };
    expect(renderTemplate('{{input}}|{{ a }}|{{b}}|{{parameters.tone}}|{{missing}}', state, 'IN', { tone: 'dry' })).toBe(
      'IN|A|{"n":1}|dry|',
    );
    expect(conditionHolds(undefined, 'x')).toBe(true);
    expect(conditionHolds({ contains: 'ok' }, 'it is ok')).toBe(true);
    expect(conditionHolds({ contains: 'ok', not: true }, 'it is ok')).toBe(false);
    expect(conditionHolds({ equals: '{"n":1}' }, { n: 1 })).toBe(true);
  });
});
