import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import {
  ConfigSchema,
  createProcessMetrics,
  loadConfig,
  NOT_YET_EFFECTIVE,
  settingsNotYetEffective,
  startModules,
  warnNotYetEffective,
  type Engines,
} from '@hangar/platform';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { readsKey, schemaKeyPaths, sourceFiles } from './config-references.js';

const listed = Object.values(NOT_YET_EFFECTIVE).flat();
const schemaKeys = schemaKeyPaths(ConfigSchema);

/** Keys code reads in a way the scan does not follow; each says where. */
const READ_WHERE_THE_SCAN_CANNOT_SEE: Record<string, string> = {
  'Stores:Postgres:AutoApplyMigrations': 'libs/platform/src/runtime/engines.ts, `store` is Postgres or Embedded',
  'Stores:Postgres:CommandTimeoutSeconds': 'libs/platform/src/runtime/engines.ts, `store` is Postgres or Embedded',
  'Stores:Embedded:AutoApplyMigrations': 'libs/platform/src/runtime/engines.ts, `store` is Postgres or Embedded',
  'RunRecording:RecordToolPayloads': 'services/run-executor/src/runs/run-update.ts, recordedPayload(settings.RunRecording, …)',
  'Pricing:Images': 'services/run-executor/src/images/image-pricing.ts, imageCharge(settings.Pricing, …) reads pricing.Images',
};

const captureLogger = () => {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: pino({ level: 'warn' }, stream), lines };
};

const warningsFor = (overrides: Record<string, unknown>) => {
  const { logger, lines } = captureLogger();
  warnNotYetEffective(loadConfig({ env: {}, overrides }), logger);
  return lines;
};

describe('configuration keys not yet effective', () => {
  it('lists only keys of the schema, each once', () => {
    expect(listed.filter((key) => !schemaKeys.includes(key))).toEqual([]);
    expect(listed.length).toBe(new Set(listed).size);
  });

  it('warns about nothing with the defaults or the trial configuration', () => {
    expect(settingsNotYetEffective(loadConfig({ env: {} }))).toEqual([]);
    const trial = fileURLToPath(new URL('../../../config/all-in-one.yaml', import.meta.url));
    expect(settingsNotYetEffective(loadConfig({ env: { HANGAR_CONFIG: trial } }))).toEqual([]);
  });

  it('names a listed key set away from its default in one warning, without its value', () => {
    const lines = warningsFor({ Mcp: { OAuthCallbackBaseUri: 'https://callback-not-to-be-logged.example' } });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      msg: 'configuration key Mcp:OAuthCallbackBaseUri is set but not yet effective',
      configKey: 'Mcp:OAuthCallbackBaseUri',
      feature: 'Tool servers (MCP)',
    });
    expect(JSON.stringify(lines)).not.toContain('callback-not-to-be-logged');
  });

  it('compares nested sections by value', () => {
    const config = (overrides: Record<string, unknown>) => loadConfig({ env: {}, overrides });
    const keys = (overrides: Record<string, unknown>) => settingsNotYetEffective(config(overrides)).map((setting) => setting.key);
    expect(keys({ Retention: { ToolInvocations: { MaxAge: '90.00:00:00' }, Conversations: { MaxAge: null } } })).toEqual([]);
    expect(keys({ Retention: { ToolInvocations: { MaxAge: '30d' }, Conversations: { MaxAge: '10d' } } })).toEqual([
      'Retention:ToolInvocations:MaxAge',
      'Retention:Conversations:MaxAge',
    ]);
  });

  it('is silent about honoured keys', () => {
    expect(
      warningsFor({
        Gateway: { Port: 9000 },
        Scheduling: { PollInterval: '5s', Lanes: ['fast'] },
        Providers: { demo: { Kind: 'Demo' } },
        Pricing: { Currency: 'EUR', Voice: { ElevenLabs: { eleven_flash_v2_5: { PerMillionCharacters: 50, PerMinute: null } } } },
        Voice: { Endpoint: 'http://127.0.0.1:9', MaxCharactersPerRequest: 50 },
        RateLimit: { Enabled: true },
      }),
    ).toEqual([]);
  });

  it('is logged when a process starts its modules', async () => {
    const { logger, lines } = captureLogger();
    const config = loadConfig({
      env: {},
      overrides: { Mcp: { OAuthCallbackBaseUri: 'https://x.example' }, Webhooks: { SignatureTolerance: '10m' } },
    });
    const started = await startModules([], { config, logger, engines: {} as Engines, metrics: createProcessMetrics('test') });
    await started.stop();
    expect(lines.map((line) => line.configKey)).toEqual(['Webhooks:SignatureTolerance', 'Mcp:OAuthCallbackBaseUri']);
  });
});

/**
 * The guards keep the list honest as features land. They scan the source under services/ and
 * libs/ (not the config schema, whose cross-checks only validate, nor the testing library) for
 * code that reads a key: `config.Section.Key`, or a name bound to a section on the way there.
 * - A listed key that code reads fails the first guard: the feature has landed, so delete the
 *   key from NOT_YET_EFFECTIVE (libs/platform/src/config/not-yet-effective.ts).
 * - A schema key that is neither read nor listed fails the second: a new key whose feature is not
 *   built yet belongs in the list. If code does read it in a way the scan cannot follow, name it
 *   in READ_WHERE_THE_SCAN_CANNOT_SEE with the place that reads it.
 */
describe('guards of the not-yet-effective list', () => {
  const files = sourceFiles();
  const readers = (key: string) => files.filter((file) => readsKey(file.text, key.split(':'))).map((file) => file.path);

  it('names no key that code reads', () => {
    const read = listed.map((key) => ({ key, readers: readers(key) })).filter((entry) => entry.readers.length > 0);
    expect(read).toEqual([]);
  });

  it('leaves no key of the schema both unread and unlisted', () => {
    const unaccounted = schemaKeys
      .filter((key) => !listed.includes(key) && !(key in READ_WHERE_THE_SCAN_CANNOT_SEE))
      .filter((key) => readers(key).length === 0);
    expect(unaccounted).toEqual([]);
  });

  it('keeps READ_WHERE_THE_SCAN_CANNOT_SEE to schema keys the scan indeed misses', () => {
    for (const key of Object.keys(READ_WHERE_THE_SCAN_CANNOT_SEE)) {
      expect(schemaKeys).toContain(key);
      expect(listed).not.toContain(key);
      expect(readers(key)).toEqual([]);
    }
  });

  it('follows the ways code reads a key', () => {
    const reads = (text: string, key: string) => readsKey(text, key.split(':'));
    expect(reads('if (context.config.Webhooks.Enabled) send();', 'Webhooks:Enabled')).toBe(true);
    expect(reads('const hooks = config.Webhooks;\nuse(hooks.Timeout);', 'Webhooks:Timeout')).toBe(true);
    expect(reads('const { Timeout: limit } = config.Webhooks;', 'Webhooks:Timeout')).toBe(true);
    expect(
      reads('const voice = config.Voice;\nconst talk = voice.Conversation;\nuse(talk?.IdleTimeout);', 'Voice:Conversation:IdleTimeout'),
    ).toBe(true);
    expect(reads('const endpoint = config.Services[name];\nlisten(endpoint.Port);', 'Services:Skill:Port')).toBe(true);
    expect(reads('const { Tools } = deps.settings;\nuse(Tools.DefaultTimeout);', 'Tools:DefaultTimeout')).toBe(true);
    expect(reads("settings: Pick<HangarConfig, 'UtilityModel'>;", 'UtilityModel')).toBe(false);
    expect(reads('const hooks = config.Webhooks;\nuse(hooks.Enabled);', 'Webhooks:Timeout')).toBe(false);
    expect(reads('use(config.Mcp.Timeout);', 'Webhooks:Timeout')).toBe(false);
    expect(reads('use(other.hooks.Timeout);\nconst hooks = config.Webhooks;', 'Webhooks:Timeout')).toBe(false);
  });
});
