/** What the layout needs of a run: its id and its parent's. */
interface TreeNode {
  id: string;
  parentRunId: string | null;
}

export const NODE_WIDTH = 184;
export const NODE_HEIGHT = 60;
export const GAP_X = 24;
export const GAP_Y = 36;

interface Placed<Node> {
  node: Node;
  x: number;
  y: number;
}

/**
 * Places a run tree top-down: each leaf gets the next column, each parent sits centred over its first
 * and last child, each depth is a row. Nodes whose parent is not in the list (a tree read from a
 * child) start their own root.
 */
export function layoutTree<Node extends TreeNode>(nodes: Node[]): { placed: Placed<Node>[]; width: number; height: number } {
  const ids = new Set(nodes.map((node) => node.id));
  const children = new Map<string, Node[]>();
  const roots: Node[] = [];
  for (const node of nodes) {
    if (node.parentRunId && ids.has(node.parentRunId)) {
      const siblings = children.get(node.parentRunId) ?? [];
      siblings.push(node);
      children.set(node.parentRunId, siblings);
    } else roots.push(node);
  }
  const placed: Placed<Node>[] = [];
  let nextColumn = 0;
  let deepest = 0;
  const place = (node: Node, row: number): number => {
    deepest = Math.max(deepest, row);
    const below = (children.get(node.id) ?? []).map((child) => place(child, row + 1));
    const column = below.length === 0 ? nextColumn++ : (below[0] + below[below.length - 1]) / 2;
    placed.push({ node, x: column * (NODE_WIDTH + GAP_X), y: row * (NODE_HEIGHT + GAP_Y) });
    return column;
  };
  for (const root of roots) place(root, 0);
  return {
    placed,
    width: Math.max(1, nextColumn) * (NODE_WIDTH + GAP_X) - GAP_X,
    height: (deepest + 1) * (NODE_HEIGHT + GAP_Y) - GAP_Y,
  };
}
