import type { HangarClient } from '@hangar/client';
import { href } from '../router.js';
import { GAP_Y, NODE_HEIGHT, NODE_WIDTH, layoutTree } from '../tree-layout.js';
import { formatCost } from '../ui.js';

type TreeNode = Awaited<ReturnType<HangarClient['runs']['getTree']>>[number];

/** Longer agent names are cut so the text stays inside its box (the full name is in the label). */
const NAME_CHARACTERS = 22;

const shortened = (name: string) => (name.length > NAME_CHARACTERS ? `${name.slice(0, NAME_CHARACTERS - 1)}…` : name);

/** A run tree drawn as a graph: a box per run (agent, status, tokens, cost) linking to its page, edges from parent to child. */
export function RunTreeGraph({ nodes, currentRunId }: { nodes: TreeNode[]; currentRunId: string }) {
  const { placed, width, height } = layoutTree<TreeNode>(nodes);
  const at = new Map(placed.map((each) => [each.node.id, each]));
  return (
    <figure class="tree-graph" aria-label="Run tree">
      <svg width={width + 2} height={height + 2} viewBox={`-1 -1 ${width + 2} ${height + 2}`}>
        {placed.map(({ node, x, y }) => {
          const parent = node.parentRunId ? at.get(node.parentRunId) : undefined;
          if (!parent) return null;
          const fromX = parent.x + NODE_WIDTH / 2;
          const fromY = parent.y + NODE_HEIGHT;
          const toX = x + NODE_WIDTH / 2;
          const middleY = fromY + GAP_Y / 2;
          return <path key={`edge-${node.id}`} class="edge" d={`M${fromX} ${fromY} V${middleY} H${toX} V${y}`} />;
        })}
        {placed.map(({ node, x, y }) => (
          <a
            key={node.id}
            href={href('runs', node.id)}
            class={`node status-${node.status.toLowerCase()}`}
            aria-current={node.id === currentRunId ? 'true' : undefined}
            aria-label={`${node.agentName}, ${node.status}, ${node.usage.totalTokens} tokens, ${formatCost(node.cost)}`}
          >
            <rect x={x} y={y} width={NODE_WIDTH} height={NODE_HEIGHT} rx={6} />
            <text x={x + 10} y={y + 20} class="name">
              {shortened(node.agentName)}
            </text>
            <text x={x + 10} y={y + 36}>
              {node.status}
            </text>
            <text x={x + 10} y={y + 52} class="figures">
              {node.usage.totalTokens} tokens · {formatCost(node.cost)}
            </text>
          </a>
        ))}
      </svg>
    </figure>
  );
}
