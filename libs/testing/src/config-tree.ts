/** A configuration tree as a test writes it (sections of keys), before `loadConfig` checks it. */
export type ConfigTree = Record<string, unknown>;

/** `over` laid on `base` section by section: objects merge key by key, anything else replaces. */
export function mergeTrees(base: ConfigTree, over: ConfigTree): ConfigTree {
  const result: ConfigTree = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const under = base[key];
    result[key] = isSection(value) && isSection(under) ? mergeTrees(under, value) : value;
  }
  return result;
}

const isSection = (value: unknown): value is ConfigTree => typeof value === 'object' && value !== null && !Array.isArray(value);
