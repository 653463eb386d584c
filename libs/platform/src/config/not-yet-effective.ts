import { isDeepStrictEqual } from 'node:util';
import type { Logger } from '../logging.js';
import { ConfigSchema, type HangarConfig } from './schema.js';

/**
 * Configuration keys that parse and validate but that no code reads yet, because the feature
 * behind them has not landed, grouped by that feature (the API.md section that decides it). A key
 * read only by the schema's own cross-checks counts as not effective.
 *
 * When a feature lands, delete its keys here: libs/platform/test/not-yet-effective.test.ts fails
 * while a listed key is read under services/ or libs/, and while a schema key is neither read nor
 * listed. One key per line, so that a feature landing deletes lines and nothing else.
 */
// prettier-ignore
export const NOT_YET_EFFECTIVE: Readonly<Record<string, readonly string[]>> = {
  // The embedded store (PGlite) has no statement timeout.
  'Embedded store timeout': [
    'Stores:Embedded:CommandTimeoutSeconds',
  ],
  // Verifying a signature: Hangar signs webhooks but receives none (the client's verify helper will read it).
  'Webhook signature verification': [
    'Webhooks:SignatureTolerance',
  ],
  // API.md "Retention": targets whose rows no feature stores yet.
  'Retention of stores not built yet': [
    'Retention:ToolInvocations:MaxAge',
    'Retention:ToolInvocations:Archive',
    'Retention:Conversations:MaxAge',
    'Retention:Conversations:Archive',
  ],
  // API.md "Tool servers (MCP) and exposure".
  'Tool servers (MCP)': [
    'Mcp:OAuthCallbackBaseUri',
  ],
};

export interface IneffectiveSetting {
  /** The key path, `Section:Sub:Key`. */
  key: string;
  /** The feature it waits for (a group of {@link NOT_YET_EFFECTIVE}). */
  feature: string;
}

let defaults: HangarConfig | undefined;

const valueAt = (tree: unknown, key: string): unknown =>
  key
    .split(':')
    .reduce<unknown>((node, segment) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[segment] : undefined), tree);

/**
 * The listed keys whose value differs from the schema's default. Values compare by content, so a
 * map with any entry, or a list other than the default one, counts as set.
 */
export function settingsNotYetEffective(config: HangarConfig): IneffectiveSetting[] {
  defaults ??= ConfigSchema.parse({});
  return Object.entries(NOT_YET_EFFECTIVE).flatMap(([feature, keys]) =>
    keys.filter((key) => !isDeepStrictEqual(valueAt(config, key), valueAt(defaults, key))).map((key) => ({ key, feature })),
  );
}

/** One warning per listed key set away from its default; the value is never logged (it may be a secret). */
export function warnNotYetEffective(config: HangarConfig, logger: Logger): void {
  for (const { key, feature } of settingsNotYetEffective(config)) {
    logger.warn({ configKey: key, feature }, `configuration key ${key} is set but not yet effective`);
  }
}
