import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigSchema, type HangarConfig } from './schema.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Tree = Record<string, unknown>;

const ENV_PREFIX = 'HANGAR__';
// Key names found inside open-ended sections (a provider, a price, a model entry), which the
// defaults tree cannot show. Together with the defaults' keys they fix the spelling of any key.
const OPEN_SECTION_KEYS = [
  'Kind',
  'ApiKey',
  'Endpoint',
  'DefaultModel',
  'DefaultDeployment',
  'DefaultMaxOutputTokens',
  'MaxRetries',
  'EnableResponsesSurface',
  'Timeout',
  'Models',
  'ContextWindowTokens',
  'MaxOutputTokens',
  'Input',
  'Output',
  'CachedInput',
  'PerMillionCharacters',
  'PerMinute',
  'PerImage',
  'OutputCostPerMillionTokens',
  'SizeMultipliers',
  'DeniedTerms',
  'MaskedPii',
  'MaskReplacement',
  'Pattern',
];

let canonicalKeys: Map<string, string> | undefined;

function knownKeys(): Map<string, string> {
  if (canonicalKeys) return canonicalKeys;
  const names = new Map<string, string>();
  const visit = (node: unknown) => {
    if (!node || typeof node !== 'object' || Array.isArray(node)) return;
    for (const [key, value] of Object.entries(node)) {
      names.set(key.toLowerCase(), key);
      visit(value);
    }
  };
  visit(ConfigSchema.parse({}));
  for (const key of OPEN_SECTION_KEYS) names.set(key.toLowerCase(), key);
  canonicalKeys = names;
  return names;
}

/** Turns `HANGAR__Gateway__Port=9000` into `{ Gateway: { Port: "9000" } }`; keys match case-insensitively. */
export function treeFromEnvironment(env: NodeJS.ProcessEnv): Tree {
  const tree: Tree = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !name.toUpperCase().startsWith(ENV_PREFIX)) continue;
    const path = name.slice(ENV_PREFIX.length).split('__').filter(Boolean);
    if (path.length === 0) continue;
    let node = tree;
    path.slice(0, -1).forEach((segment) => {
      const child = node[segment];
      node = (node[segment] = child && typeof child === 'object' ? child : {}) as Tree;
    });
    node[path[path.length - 1]] = value;
  }
  return tree;
}

function canonicalize(node: unknown): unknown {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return node;
  const names = knownKeys();
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [names.get(key.toLowerCase()) ?? key, canonicalize(value)]));
}

function merge(base: unknown, over: unknown): unknown {
  if (!isTree(base) || !isTree(over)) return over === undefined ? base : over;
  const result: Tree = { ...base };
  for (const [key, value] of Object.entries(over)) result[key] = merge(base[key], value);
  return result;
}

const isTree = (value: unknown): value is Tree => !!value && typeof value === 'object' && !Array.isArray(value);

function readConfigFile(path: string): Tree {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError([`HANGAR_CONFIG: cannot read ${path} (${(error as Error).message})`]);
  }
  try {
    const parsed = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
    if (parsed === null || parsed === undefined) return {};
    if (!isTree(parsed)) throw new Error('the top level must be an object');
    return parsed;
  } catch (error) {
    throw new ConfigError([`HANGAR_CONFIG: ${path} is not valid JSON or YAML (${(error as Error).message})`]);
  }
}

function describeIssues(error: z.ZodError): string[] {
  return error.issues.flatMap((issue) => {
    const key = issue.path.map(String).join(':');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((unknown) => `${key ? `${key}:` : ''}${unknown}: is not a configuration key`);
    }
    return [`${key || '(root)'}: ${issue.message}`];
  });
}

export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  /** Settings applied over the file and under the environment (used by hosts and tests). */
  overrides?: Tree;
  /** Settings under everything else: a host's own defaults (all-in-one's local token, for one). */
  defaults?: Tree;
}

/**
 * Reads configuration once: environment variables `HANGAR__Section__Key` over the file named by
 * `HANGAR_CONFIG` (JSON or YAML) over SPEC defaults. Throws {@link ConfigError} naming every bad key.
 */
export function loadConfig(options: LoadConfigOptions = {}): HangarConfig {
  const env = options.env ?? process.env;
  const fromFile = env.HANGAR_CONFIG ? readConfigFile(env.HANGAR_CONFIG) : {};
  const raw = [options.defaults ?? {}, fromFile, options.overrides ?? {}, treeFromEnvironment(env)].map(canonicalize).reduce(merge, {});
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(describeIssues(parsed.error));
  return deepFreeze(parsed.data);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}
