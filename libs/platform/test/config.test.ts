import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, parseDuration } from '@hangar/platform';
import { describe, expect, it } from 'vitest';

const configError = (run: () => unknown): string[] => {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
};

const writeConfig = (name: string, text: string) => {
  const path = join(mkdtempSync(join(tmpdir(), 'hangar-config-')), name);
  writeFileSync(path, text);
  return path;
};

describe('configuration', () => {
  it('starts from SPEC defaults', () => {
    const config = loadConfig({ env: {} });
    expect(config.DefaultTenantId).toBe('default');
    expect(config.MaxParameterValueLength).toBe(4096);
    expect(config.AgentGraph).toEqual({ MaxDepth: 3, MaxTotalTokens: 200000, MaxTotalCost: null, MaxTotalRuns: 25 });
    expect(config.Tools.DefaultTimeout).toBe(30_000);
    expect(config.Attachments.MaxBytes).toBe(20971520);
    expect(config.Attachments.AllowedMediaTypes).toContain('audio/*');
    expect(config.Scheduling.LeaseDuration).toBe(300_000);
    expect(config.Webhooks.RetryDelays).toEqual([60_000, 300_000, 1_800_000, 7_200_000, 21_600_000]);
    expect(config.Webhooks.AllowedConfigurationPrefix).toBe('Hangar:WebhookSecrets:');
    expect(config.Retention.RunEvents.MaxAge).toBe(30 * 86_400_000);
    expect(config.Retention.Sessions.MaxAge).toBeNull();
    expect(config.Hangar.Api).toMatchObject({
      Prefix: '',
      AllowRemoteAccess: false,
      AuthToken: null,
      RunEventPollInterval: 250,
      AllowedOrigins: [],
    });
    expect(config.Stores.Postgres.SchemaName).toBe('hangar');
    expect(config.Tenancy.HeaderName).toBe('X-Hangar-Tenant');
    expect(config.ContentGuard.Pattern).toBeUndefined();
    expect(Object.isFrozen(config.Gateway)).toBe(true);
  });

  it('layers environment over file over defaults, keys matched case-insensitively', () => {
    const file = writeConfig('hangar.yaml', 'Gateway:\n  Port: 9000\n  Host: 0.0.0.0\nProviders:\n  demo:\n    Kind: Demo\n');
    const config = loadConfig({
      env: { HANGAR_CONFIG: file, HANGAR__gateway__PORT: '9100', HANGAR__Providers__demo__defaultmodel: 'echo' },
    });
    expect(config.Gateway).toEqual({ Host: '0.0.0.0', Port: 9100 });
    expect(config.Providers.demo).toMatchObject({ Kind: 'Demo', DefaultModel: 'echo' });
  });

  it('reads JSON files, lists from indexed keys or commas, and durations in both spellings', () => {
    const file = writeConfig('hangar.json', JSON.stringify({ Tools: { DefaultTimeout: '00:01:30' } }));
    const config = loadConfig({
      env: {
        HANGAR_CONFIG: file,
        HANGAR__Attachments__AllowedMediaTypes__0: 'image/png',
        HANGAR__Attachments__AllowedMediaTypes__1: 'application/pdf',
        HANGAR__Hangar__Api__AllowedOrigins: 'https://a.example, https://b.example',
        HANGAR__CircuitBreaker__BreakDuration: '45s',
      },
    });
    expect(config.Tools.DefaultTimeout).toBe(90_000);
    expect(config.Attachments.AllowedMediaTypes).toEqual(['image/png', 'application/pdf']);
    expect(config.Hangar.Api.AllowedOrigins).toEqual(['https://a.example', 'https://b.example']);
    expect(config.CircuitBreaker.BreakDuration).toBe(45_000);
    expect(parseDuration('1.02:03:04.5')).toBe(((26 * 60 + 3) * 60 + 4) * 1000 + 500);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('soon')).toBeUndefined();
  });

  it('applies Anthropic’s output-token default', () => {
    const config = loadConfig({ env: { HANGAR__Providers__claude__Kind: 'Anthropic' } });
    expect(config.Providers.claude.DefaultMaxOutputTokens).toBe(4096);
  });

  it.each([
    [{ HANGAR__Gateway__Prot: '1' }, 'Gateway:Prot: is not a configuration key'],
    [{ HANGAR__Gateway__Port: 'eighty' }, 'Gateway:Port: expected a number'],
    [{ HANGAR__Gateway__Port: '70000' }, 'Gateway:Port'],
    [{ HANGAR__Tools__DefaultTimeout: 'later' }, 'Tools:DefaultTimeout: expected a duration'],
    [
      { HANGAR__Skills__Scripts__Enabled: 'true' },
      'Skills:Scripts:Enabled: cannot be true while Skills:Scripts:PlatformIsolationAcknowledged is false',
    ],
    [{ HANGAR__Pricing__openai__gpt__CachedInput: '1' }, 'Pricing:openai:gpt:Input: a price entry needs Input or Output'],
    [{ HANGAR__Providers__azure__Kind: 'AzureOpenAI' }, 'Providers:azure:Endpoint: is required for Kind AzureOpenAI'],
    [{ HANGAR__Providers__x__Kind: 'Magic' }, 'Providers:x:Kind'],
    [{ HANGAR__Hangar__Api__AllowRemoteAccess: 'true' }, 'Hangar:Api:AllowRemoteAccess: cannot be true without'],
    [{ HANGAR__Tools__DefaultMaxOutputBytes: '10' }, 'Tools:DefaultMaxOutputBytes: must be at least 57 when set'],
    [{ HANGAR__Images__Enabled: 'true' }, 'Images:Provider: is required while Images:Enabled is true'],
    [
      { HANGAR__Images__Enabled: 'true', HANGAR__Images__Provider: 'nowhere', HANGAR__Images__Model: 'm' },
      'Images:Provider: names no provider of Providers',
    ],
    [
      {
        HANGAR__Images__Enabled: 'true',
        HANGAR__Images__Provider: 'claude',
        HANGAR__Images__Model: 'm',
        HANGAR__Providers__claude__Kind: 'Anthropic',
      },
      'Images:Provider: names a provider of Kind Anthropic, which has no image API',
    ],
    [
      {
        HANGAR__Images__Enabled: 'true',
        HANGAR__Images__Provider: 'demo',
        HANGAR__Images__Model: 'm',
        HANGAR__Images__MaxImagesPerRequest: '0',
      },
      'Images:MaxImagesPerRequest: must be at least 1',
    ],
    [
      { HANGAR__Pricing__Images__p__m__PerImage: '1', HANGAR__Pricing__Images__p__m__OutputCostPerMillionTokens: '2' },
      'use PerImage or OutputCostPerMillionTokens, not both',
    ],
    [{ HANGAR__Pricing__Images__p__m__SizeMultipliers__1024x1024: '2' }, 'an image price needs PerImage or OutputCostPerMillionTokens'],
    [
      { HANGAR__Pricing__Images__p__m__OutputCostPerMillionTokens: '2', HANGAR__Pricing__Images__p__m__SizeMultipliers__1024x1024: '2' },
      'multiply PerImage, which this price does not set',
    ],
    [{ HANGAR__Voice__OutputFormat: 'mp3' }, 'Voice:OutputFormat: must be <codec>_<sample rate>[_<bitrate>]'],
    [{ HANGAR__Voice__MaxConcurrentRequests: '0' }, 'Voice:MaxConcurrentRequests: must be at least 1'],
    [{ HANGAR__Voice__Provider: 'nowhere' }, 'Voice:Provider: names no provider of Providers'],
    [{ HANGAR__Voice__Conversation__OutputMediaType: 'audio/flac' }, 'Voice:Conversation:OutputMediaType: must be audio/mpeg, audio/ogg'],
    [{ HANGAR__Voice__Conversation__InputSampleRate: '96000' }, 'Voice:Conversation:InputSampleRate: must be 8000–48000 Hz'],
    [
      {
        HANGAR__Voice__Provider: 'openai',
        HANGAR__Providers__openai__Kind: 'OpenAI',
        HANGAR__Voice__Conversation__OutputMediaType: 'audio/basic',
      },
      'Voice:Conversation:OutputMediaType: is a media type OpenAI’s speech API cannot produce',
    ],
    [
      { HANGAR__Voice__Provider: 'claude', HANGAR__Providers__claude__Kind: 'Anthropic' },
      'Voice:Provider: names a provider of Kind Anthropic, which has no speech API',
    ],
    [
      { HANGAR__Voice__Provider: 'openai', HANGAR__Providers__openai__Kind: 'OpenAI', HANGAR__Voice__OutputFormat: 'ulaw_8000' },
      'Voice:OutputFormat: is a format OpenAI’s speech API cannot produce',
    ],
    [{ HANGAR__Hangar__Api__Prefix: 'api/' }, 'Hangar:Api:Prefix'],
    [{ HANGAR__ContentGuard__Pattern__MaskedPii: 'Email,ShoeSize' }, 'ContentGuard:Pattern:MaskedPii:1'],
  ])('refuses %j naming the key', (env, expected) => {
    expect(configError(() => loadConfig({ env })).join('\n')).toContain(expected);
  });

  it('reports every problem at once', () => {
    const problems = configError(() => loadConfig({ env: { HANGAR__Gateway__Port: 'x', HANGAR__Nope: '1' } }));
    expect(problems).toHaveLength(2);
  });

  it('names an unreadable or malformed config file', () => {
    expect(configError(() => loadConfig({ env: { HANGAR_CONFIG: '/nonexistent/hangar.yaml' } }))[0]).toContain(
      'HANGAR_CONFIG: cannot read',
    );
    const broken = writeConfig('broken.json', '{ "Gateway": ');
    expect(configError(() => loadConfig({ env: { HANGAR_CONFIG: broken } }))[0]).toContain('is not valid JSON or YAML');
  });
});
