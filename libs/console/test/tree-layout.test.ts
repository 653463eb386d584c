import { describe, expect, it } from 'vitest';
import { GAP_X, GAP_Y, NODE_HEIGHT, NODE_WIDTH, layoutTree } from '../app/tree-layout.js';

const COLUMN = NODE_WIDTH + GAP_X;
const ROW = NODE_HEIGHT + GAP_Y;
const run = (id: string, parentRunId: string | null = null) => ({ id, parentRunId });
const positions = (nodes: ReturnType<typeof run>[]) =>
  Object.fromEntries(layoutTree(nodes).placed.map(({ node, x, y }) => [node.id, [x / COLUMN, y / ROW]]));

describe('the run tree layout', () => {
  it('puts each leaf in the next column and each parent centred over its children, a row per depth', () => {
    const nodes = [run('top'), run('middle', 'top'), run('leaf-1', 'middle'), run('leaf-2', 'middle'), run('side', 'top')];
    expect(positions(nodes)).toEqual({
      'leaf-1': [0, 2],
      'leaf-2': [1, 2],
      middle: [0.5, 2 - 1],
      side: [2, 1],
      top: [1.25, 0],
    });
    expect(layoutTree(nodes)).toMatchObject({ width: 3 * COLUMN - GAP_X, height: 3 * ROW - GAP_Y });
  });

  it('places a chain in one column, whatever order the runs come in', () => {
    expect(positions([run('c', 'b'), run('a'), run('b', 'a')])).toEqual({ a: [0, 0], b: [0, 1], c: [0, 2] });
  });

  it('starts a root for a run whose parent is not in the list, and draws a box for a single run', () => {
    expect(positions([run('child', 'elsewhere'), run('grandchild', 'child')])).toEqual({ child: [0, 0], grandchild: [0, 1] });
    expect(layoutTree([run('alone')])).toEqual({
      placed: [{ node: run('alone'), x: 0, y: 0 }],
      width: NODE_WIDTH,
      height: NODE_HEIGHT,
    });
  });
});
