/**
 * How deep a JSON value nests (a scalar is 0), counted no further than `limit` + 1 (so a hostile
 * document costs no more than that).
 */
export function jsonDepth(value: unknown, limit = Infinity): number {
  if (value === null || typeof value !== 'object') return 0;
  if (limit <= 0) return 1;
  let deepest = 0;
  for (const child of Object.values(value)) deepest = Math.max(deepest, jsonDepth(child, limit - 1));
  return deepest + 1;
}

/**
 * The deepest free-form JSON a route hands on as a `google.protobuf.Value`: each JSON level costs
 * about three protobuf messages and a decoder stops at 100, so a value nested beyond ~32 levels
 * cannot cross gRPC; 20 leaves room for what wraps it (a run's outputs, a checkpoint's state).
 */
export const MAX_VALUE_DEPTH = 20;
