import { IMAGE_TOOL_NAME } from '@hangar/contracts';
import { z } from 'zod';
import { bool, duration, int, list, nullable, num } from './values.js';
import { voiceIssues } from './voice-checks.js';

/**
 * Every configuration key of SPEC.md "Limits" (plus the keys API.md adds), with SPEC's defaults.
 * Keys are PascalCase with `:` between levels; durations are milliseconds once parsed.
 * Unknown keys are refused so a typo never passes silently.
 *
 * One file over 400 lines on purpose: the whole configuration surface in SPEC's order, so a reader
 * checks every default against SPEC's tables in one pass; it holds declarations only, no logic.
 */

// `prefault` parses the empty section, so every key inside gets its own default.
const section = <S extends z.ZodRawShape>(shape: S) => z.strictObject(shape).prefault({} as never);
const str = (fallback: string) => z.string().default(fallback);

const ServiceEndpoint = section({
  Host: str('127.0.0.1'),
  Port: int().pipe(z.number().min(0).max(65535)).default(0),
  /** Where other processes reach this service (`host:port`); set in the distributed shape. */
  Address: nullable(z.string()),
  /** A port of its own for `GET /metrics` when the service runs as its own process; unset, it serves none. */
  MetricsPort: nullable(int().pipe(z.number().min(0).max(65535))),
});

const SERVICE_NAMES = ['AgentRegistry', 'RunExecutor', 'Session', 'Skill', 'Attachment', 'Governance', 'Knowledge', 'Evaluation'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

const ProviderKind = z.enum(['OpenAI', 'Anthropic', 'AzureOpenAI', 'OpenAICompatible', 'Demo']);

const Provider = z
  .strictObject({
    Kind: ProviderKind,
    ApiKey: nullable(z.string()),
    Endpoint: nullable(z.string()),
    DefaultModel: nullable(z.string()),
    DefaultDeployment: nullable(z.string()),
    DefaultMaxOutputTokens: nullable(int()),
    MaxRetries: nullable(int()),
    EnableResponsesSurface: bool().default(false),
    Timeout: nullable(duration()),
    Models: z
      .record(z.string(), z.strictObject({ ContextWindowTokens: nullable(int()), MaxOutputTokens: nullable(int()) }).prefault({}))
      .default({}),
  })
  .superRefine((provider, ctx) => {
    if (provider.Kind === 'AzureOpenAI' && !provider.Endpoint) {
      ctx.addIssue({ code: 'custom', path: ['Endpoint'], message: 'is required for Kind AzureOpenAI' });
    }
    if (provider.Kind === 'OpenAICompatible' && !provider.Endpoint) {
      ctx.addIssue({ code: 'custom', path: ['Endpoint'], message: 'is required for Kind OpenAICompatible' });
    }
  })
  .transform((provider) => ({
    ...provider,
    DefaultMaxOutputTokens: provider.DefaultMaxOutputTokens ?? (provider.Kind === 'Anthropic' ? 4096 : null),
  }));

const ModelPrice = z
  .strictObject({ Input: nullable(num()), Output: nullable(num()), CachedInput: nullable(num()) })
  .superRefine((price, ctx) => {
    if (price.Input === null && price.Output === null) {
      ctx.addIssue({ code: 'custom', path: ['Input'], message: 'a price entry needs Input or Output' });
    }
  });

const Pricing = z
  .looseObject({
    Currency: nullable(z.string()),
    Voice: z
      .record(z.string(), z.record(z.string(), z.strictObject({ PerMillionCharacters: nullable(num()), PerMinute: nullable(num()) })))
      .default({}),
    Images: z
      .record(
        z.string(),
        z.record(
          z.string(),
          z
            .strictObject({
              PerImage: nullable(num()),
              OutputCostPerMillionTokens: nullable(num()),
              SizeMultipliers: z.record(z.string(), num()).default({}),
            })
            .superRefine((price, ctx) => {
              if (price.PerImage !== null && price.OutputCostPerMillionTokens !== null) {
                ctx.addIssue({ code: 'custom', path: ['PerImage'], message: 'use PerImage or OutputCostPerMillionTokens, not both' });
              }
              if (price.PerImage === null && price.OutputCostPerMillionTokens === null)
                ctx.addIssue({
                  code: 'custom',
                  path: ['PerImage'],
                  message: 'an image price needs PerImage or OutputCostPerMillionTokens',
                });
              if (price.PerImage === null && Object.keys(price.SizeMultipliers).length)
                ctx.addIssue({ code: 'custom', path: ['SizeMultipliers'], message: 'multiply PerImage, which this price does not set' });
            }),
        ),
      )
      .default({}),
  })
  .prefault({})
  .transform((pricing, ctx) => {
    const { Currency, Voice, Images, ...providers } = pricing;
    const models: Record<string, Record<string, z.infer<typeof ModelPrice>>> = {};
    for (const [provider, byModel] of Object.entries(providers)) {
      const parsed = z.record(z.string(), ModelPrice).safeParse(byModel);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, path: [provider, ...issue.path] } as never);
        continue;
      }
      models[provider] = parsed.data;
    }
    return { Currency, Voice, Images, Models: models };
  });

const RetentionTarget = (maxAge: string | null) =>
  section({ MaxAge: maxAge === null ? nullable(duration()) : duration().prefault(maxAge), Archive: bool().default(false) });

const SqlStore = {
  AutoApplyMigrations: bool().default(true),
  CommandTimeoutSeconds: int().default(30),
  EnableReadView: bool().default(false),
};

/** `UtilityModel` as `provider/model`, the model keeping any further slash; undefined when it is not set. */
export function utilityModelOf(setting: string | null): { provider: string; model: string } | undefined {
  if (!setting) return undefined;
  const slash = setting.indexOf('/');
  return slash < 0 ? { provider: setting, model: '' } : { provider: setting.slice(0, slash), model: setting.slice(slash + 1) };
}

export const ConfigSchema = z
  .strictObject({
    DefaultTenantId: str('default'),
    MaxParameterValueLength: int().default(4096),
    UtilityModel: nullable(z.string()),
    Telemetry: section({
      /** OTLP/HTTP traces endpoint (e.g. http://collector:4318/v1/traces); unset, spans are made but not exported. */
      OtlpEndpoint: nullable(z.string()),
      /** OTLP/HTTP metrics endpoint (e.g. http://collector:4318/v1/metrics); unset, metrics are only scraped from `/metrics`. */
      OtlpMetricsEndpoint: nullable(z.string()),
      /** How often metrics are pushed to `OtlpMetricsEndpoint`. */
      MetricsExportInterval: duration().default(60_000),
    }),
    Logging: section({
      Level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
      /** `auto`: readable lines when stdout is a terminal, JSON otherwise; `json` or `pretty` force one. */
      Format: z.enum(['auto', 'json', 'pretty']).default('auto'),
    }),
    Gateway: section({
      Host: str('127.0.0.1'),
      Port: int().pipe(z.number().min(0).max(65535)).default(8080),
    }),
    Services: section(
      Object.fromEntries(SERVICE_NAMES.map((name) => [name, ServiceEndpoint])) as Record<ServiceName, typeof ServiceEndpoint>,
    ),
    Hangar: section({
      /** Agents served to other systems (API.md "Tool servers (MCP) and exposure"); none by default. */
      Exposure: section({
        /** Served as tools of an MCP server at `{prefix}/mcp`. */
        Mcp: section({ Agents: list(z.string()).default([]) }),
        /** Served over the A2A protocol at `{prefix}/a2a/{agent}`. */
        A2A: section({
          Agents: list(z.string()).default([]),
          /** The public scheme and host agent cards name (`https://agents.example.com`); unset, the request's own. */
          BaseUrl: nullable(z.url().refine((url) => !url.endsWith('/'), 'must not end with "/"')),
        }),
      }),
      Api: section({
        Prefix: z
          .string()
          .default('')
          .refine(
            (prefix) => prefix === '' || /^\/[A-Za-z0-9._~\-/]*[^/]$/.test(prefix),
            'must be empty or start with "/" and not end with "/"',
          ),
        AllowRemoteAccess: bool().default(false),
        AuthToken: nullable(z.string().min(16, 'must be at least 16 characters')),
        AuthorizationPolicy: nullable(z.string()),
        RequireRolePolicies: bool().default(false),
        /** Module whose `rolePolicies` export decides who holds each role (SPEC Authentication 3). */
        RolePoliciesModule: nullable(z.string()),
        EnableDiagnosticsEndpoint: bool().default(false),
        /** When set, `GET /metrics` needs `Authorization: Bearer <MetricsToken>` (API.md "Operations"). */
        MetricsToken: nullable(z.string().min(16, 'must be at least 16 characters')),
        MapOpenAIConversations: bool().default(true),
        RunEventPollInterval: duration().default(250),
        /** How long a request under an Idempotency-Key holds it before a retry may take it over. */
        IdempotencyInProgressTimeout: duration().default(600_000),
        AllowedOrigins: list(z.string()).default([]),
        /** Module whose `authorizeRun` export may deny a caller (SPEC Authentication 7). */
        RunAuthorizationModule: nullable(z.string()),
        /** JWT bearer tokens, validated against a JWKS (inline JSON or fetched from JwksUri). */
        Jwt: section({
          Enabled: bool().default(false),
          Issuer: nullable(z.string()),
          Audience: nullable(z.string()),
          JwksUri: nullable(z.string().url()),
          Jwks: nullable(z.string()),
          UserClaim: str('sub'),
          RoleClaim: str('roles'),
          ScopeClaim: str('scope'),
          /** A claim holding an object of attribution labels that runs record (e.g. `{"team": "billing"}`). */
          LabelsClaim: str('hangar_labels'),
        }),
      }),
      /** API keys of tenants' own providers, each named by a tenant's `apiKeyKey` (`Hangar:ProviderKeys:<name>`). */
      ProviderKeys: z.record(z.string(), z.string()).default({}),
      /** Standard Webhooks signing secrets (`whsec_…`), each named by a subscription's `secretKey` (`Hangar:WebhookSecrets:<name>`). */
      WebhookSecrets: z.record(z.string(), z.string()).default({}),
      /** Bearer tokens of MCP tool servers, each named by a server's `secretKey` (`Hangar:McpSecrets:<name>`). */
      McpSecrets: z.record(z.string(), z.string()).default({}),
      /** Content protection keys (base64 of 32 bytes), each named by a `ContentProtection:Keys` entry (`Hangar:ContentKeys:<name>`). */
      ContentKeys: z.record(z.string(), z.string()).default({}),
      Runs: section({
        /** How long a cancel waits for the instance executing the run to answer before it is 409. */
        CancelReplyTimeout: duration().default(2000),
        /**
         * How long a run's first streamed event (a text delta, `run.started`) waits for others to be
         * stored with it in one statement; any other event, and the run's end, write at once.
         */
        EventBatchWindow: duration().default(20),
      }),
    }),
    Tenancy: section({
      Enabled: bool().default(false),
      ClaimType: nullable(z.string()),
      AllowHeaderResolution: bool().default(false),
      HeaderName: str('X-Hangar-Tenant'),
      AllowedTenants: list(z.string()).default([]),
    }),
    Stores: section({
      Postgres: section({
        ConnectionString: nullable(z.string()),
        SchemaName: z
          .string()
          .regex(/^[a-z_][a-z0-9_]{0,40}$/, 'must be a lowercase SQL identifier')
          .default('hangar'),
        ...SqlStore,
      }),
      Embedded: section({
        DataDir: str('.hangar/data'),
        TablePrefix: str('hangar_'),
        ...SqlStore,
      }),
    }),
    Redis: section({ ConnectionString: nullable(z.string()), ChannelPrefix: str('hangar:') }),
    Kafka: section({ Brokers: list(z.string()).default([]), ClientId: str('hangar'), TopicPrefix: str('') }),
    CodeAgents: section({ Modules: list(z.string()).default([]) }),
    Providers: z.record(z.string(), Provider).default({}),
    Pricing,
    Validation: section({ McpTimeout: duration().default(5000) }),
    AgentGraph: section({
      MaxDepth: int().default(3),
      MaxTotalTokens: int().default(200000),
      MaxTotalCost: nullable(num()),
      MaxTotalRuns: int().default(25),
    }),
    Tools: section({
      DefaultTimeout: duration().default(30_000),
      DefaultMaxOutputBytes: nullable(int().pipe(z.number().min(57, 'must be at least 57 when set'))),
    }),
    Skills: section({
      MaxSkillsPerAgent: int().default(10),
      MaxInstructionsLength: int().default(65536),
      MaxResourceContentLength: int().default(262144),
      MaxResourcesPerSkill: int().default(20),
      Scripts: section({
        Enabled: bool().default(false),
        PlatformIsolationAcknowledged: bool().default(false),
        AllowStoredScripts: bool().default(false),
        SkillRoots: list(z.string()).default([]),
        Interpreters: z.record(z.string(), z.string()).default({}),
        EnvironmentAllowList: list(z.string()).default(['PATH', 'HOME']),
        Timeout: duration().default(30_000),
        MaxOutputBytes: int().default(262144),
        MaxArgumentBytes: int().default(16384),
        MaxScriptContentLength: int().default(65536),
        MaxScriptsPerSkill: int().default(10),
        MaxConcurrentPerTenant: int().default(2),
        MaxConcurrentTotal: int().default(8),
        SearchDepth: int().default(2),
      }),
    }),
    Attachments: section({
      MaxBytes: int().pipe(z.number().positive().max(2147483647)).default(20971520),
      AllowedMediaTypes: list(z.string()).default([
        'image/png',
        'image/jpeg',
        'image/webp',
        'image/gif',
        'application/pdf',
        'text/plain',
        'audio/*',
      ]),
    }),
    Audit: section({ ActorClaimType: nullable(z.string()) }),
    /** SPEC Authentication 8: sessions limited to their owning user; the management role lists all. */
    SessionOwnership: section({
      Enabled: bool().default(false),
      ManagementRole: z.enum(['Reader', 'Operator', 'Admin']).default('Admin'),
    }),
    CircuitBreaker: section({
      Enabled: bool().default(true),
      FailureThreshold: int().pipe(z.number().min(1)).default(5),
      BreakDuration: duration().default(30_000),
    }),
    Health: section({ CacheTtl: duration().default(60_000), BackgroundInterval: nullable(duration()) }),
    Preflight: section({ Enabled: bool().default(false), ReserveRatio: num().pipe(z.number().min(0).max(1)).default(0.2) }),
    ModelConcurrency: section({ MaxConcurrentCallsPerProvider: nullable(int().pipe(z.number().min(1))) }),
    Observability: section({
      Enabled: bool().default(true),
      PersistSpans: bool().default(true),
      SuccessSampleRatio: num().pipe(z.number().min(0).max(1)).default(0.1),
      AlwaysPersistFailures: bool().default(true),
      MaxSpansPerRun: int().default(200),
      RecordSensitiveData: bool().default(false),
      IncludeAgentVersionTag: bool().default(true),
      EnableQuotaUsageGauge: bool().default(false),
      QuotaUsageRefreshInterval: duration().default(30_000),
      EnableJobQueueDepthGauge: bool().default(false),
      JobQueueDepthRefreshInterval: duration().default(30_000),
      MaxJobLaneCardinality: int().default(64),
    }),
    RunRecording: section({
      Enabled: bool().default(true),
      RecordMessageDeltas: bool().default(true),
      RecordToolPayloads: bool().default(true),
      MaxPayloadLength: int().default(8192),
      RecordRunInput: bool().default(true),
    }),
    StructuredResponse: section({ Enabled: bool().default(false), MaxRepairAttempts: int().pipe(z.number().min(0)).default(0) }),
    Images: section({
      Enabled: bool().default(false),
      Provider: nullable(z.string()),
      Model: nullable(z.string()),
      MaxImagesPerRequest: int().default(1),
    }),
    Scheduling: section({
      Enabled: bool().default(true),
      RunWorker: bool().default(true),
      MaxConcurrentJobs: int().default(2),
      PollInterval: duration().default(10_000),
      LeaseDuration: duration().default(300_000),
      MaxAttempts: int().default(3),
      MaxItemsPerJob: int().default(1000),
      Lanes: nullable(list(z.string())),
      MaxConcurrentJobsPerLane: z.record(z.string(), int()).default({}),
      LaneByHandlerKey: z.record(z.string(), z.string()).default({}),
      HttpSchedulableHandlerKeys: list(z.string()).default([]),
    }),
    AsyncRun: section({ Enabled: bool().default(true), MaxAttempts: int().default(1) }),
    SingletonExecution: section({
      Enabled: bool().default(false),
      LeaseDuration: duration().default(60_000),
      OwnerId: nullable(z.string()),
    }),
    RunReconciliation: section({
      Enabled: bool().default(false),
      HeartbeatInterval: duration().default(30_000),
      OrphanThreshold: duration().default(300_000),
      ScanInterval: duration().default(60_000),
      MaxRunsPerScan: int().default(100),
    }),
    RunContinuation: section({ Enabled: bool().default(false), MaxAttempts: int().default(1) }),
    Drain: section({ Enabled: bool().default(false), Timeout: duration().default(30_000) }),
    Approvals: section({
      DefaultExpiration: duration().default(86_400_000),
      ExpirationEnabled: bool().default(true),
      ScanInterval: duration().default(60_000),
      MaxPerScan: int().default(100),
      /** Catalog tools whose every call waits for a human decision (Hangar addition). */
      RequiredTools: list(z.string()).default([]),
    }),
    OnlineEvaluation: section({
      Enabled: bool().default(false),
      SampleRate: num().pipe(z.number().min(0).max(1)).default(0),
      MaxScoresPerHour: int().default(100),
      AgentNames: list(z.string()).default([]),
      LowScoreThreshold: num().default(60),
      MinSampleSize: int().default(20),
      JudgeTimeout: duration().default(60_000),
      EvaluationWindow: duration().default(3_600_000),
      /** The run judge (docs/decisions.md "Online evaluation"): an agent, a code agent to serve every tenant. */
      JudgeAgent: nullable(z.string().min(1)),
    }),
    Canary: section({ AutoRollbackEnabled: bool().default(false), ScanInterval: duration().default(300_000) }),
    Quotas: section({
      Enabled: bool().default(true),
      TimeZone: str('UTC'),
      ThresholdPercents: list(int()).default([80, 100]),
      AllowOnStoreFailure: bool().default(true),
      PublishThresholdToRunStream: bool().default(false),
    }),
    RateLimit: section({
      Enabled: bool().default(false),
      PermitLimit: int().pipe(z.number().min(1)).default(60),
      Window: duration().default(60_000),
      QueueLimit: int().default(0),
      Partition: z.enum(['Tenant', 'User', 'ApiKey', 'RemoteAddress']).default('Tenant'),
    }),
    Idempotency: section({ Enabled: bool().default(true), MaxKeyLength: int().default(255) }),
    ContentGuard: section({
      InspectInput: bool().default(true),
      InspectOutput: bool().default(true),
      BufferStreamingOutput: bool().default(true),
      // Absent means the pattern guard is not registered (SPEC: a present section counts as registration).
      Pattern: z
        .strictObject({
          DeniedTerms: list(z.string()).default([]),
          MaskedPii: list(z.enum(['Email', 'Phone', 'CreditCard', 'IpAddress', 'Iban'])).default([]),
          MaskReplacement: str('[redacted]'),
        })
        .optional(),
    }),
    Knowledge: section({
      // pgvector's `vector` type holds at most 16,000 dimensions (HNSW indexes 2,000).
      Dimensions: int().pipe(z.number().min(1).max(16000)).default(1536),
      ChunkSize: int().pipe(z.number().min(1)).default(1000),
      ChunkOverlap: int().pipe(z.number().min(0)).default(100),
      MaxResults: int().pipe(z.number().min(1).max(1000)).default(5),
    }),
    Egress: section({ AllowPrivateNetworkTargets: bool().default(false) }),
    Webhooks: section({
      Enabled: bool().default(true),
      AllowPrivateNetworkTargets: bool().default(false),
      AllowInsecureHttp: bool().default(false),
      AllowedConfigurationPrefix: str('Hangar:WebhookSecrets:'),
      MaxExtraHeaders: int().default(20),
      Timeout: duration().default(10_000),
      MaxResponseBytes: int().default(8192),
      DisableAfterConsecutiveFailures: int().default(20),
      RetryDelays: list(duration()).default([60_000, 300_000, 1_800_000, 7_200_000, 21_600_000]),
      SignatureTolerance: duration().default(300_000),
    }),
    TenantProviders: section({ AllowedConfigurationPrefix: str('Hangar:ProviderKeys:') }),
    ContentProtection: section({
      Enabled: bool().default(false),
      ActiveKeyId: nullable(z.string()),
      Keys: z.record(z.string(), z.string()).default({}),
      Columns: nullable(list(z.string())),
    }),
    Retention: section({
      Enabled: bool().default(false),
      BatchSize: int().default(5000),
      BatchDelay: duration().default(100),
      RunEvents: RetentionTarget('30d'),
      ToolInvocations: RetentionTarget('90d'),
      Spans: RetentionTarget('14d'),
      Jobs: RetentionTarget('30d'),
      WebhookDeliveries: RetentionTarget('7d'),
      EvalCaseResults: RetentionTarget('180d'),
      WorkflowCheckpoints: RetentionTarget('7d'),
      SkillScriptGrants: RetentionTarget('30d'),
      Attachments: RetentionTarget('7d'),
      Sessions: RetentionTarget(null),
      Conversations: RetentionTarget(null),
      RunInputs: RetentionTarget('30d'),
      VoiceSessions: RetentionTarget('30d'),
      RunScores: RetentionTarget('180d'),
      DocumentEmbeddings: RetentionTarget(null),
    }),
    Mcp: section({
      Enabled: bool().default(true),
      RefreshInterval: duration().default(300_000),
      ConnectionTimeout: duration().default(30_000),
      MaxToolsPerServer: int().default(100),
      MaxResourceBytesPerResource: int().default(65536),
      MaxResourceBytesTotal: int().default(262144),
      OAuthCallbackBaseUri: nullable(z.string()),
      McpSecretsPrefix: str('Hangar:McpSecrets:'),
    }),
    Workflows: section({
      Enabled: bool().default(true),
      EnableCheckpointing: bool().default(true),
      MaxConcurrentRuns: int().default(4),
      RunTimeout: duration().default(600_000),
      MaxSuperSteps: int().default(100),
      KeepCheckpointsAfterCompletion: bool().default(true),
    }),
    Voice: section({
      /**
       * Hangar's key (API.md "Images and voice"): a provider of Providers whose OpenAI speech API
       * speaks and listens. Null: the ElevenLabs-style API at Voice:Endpoint with Voice:ApiKey.
       */
      Provider: nullable(z.string()),
      OutputFormat: str('mp3_44100_128'),
      MaxCharactersPerRequest: int().default(5000),
      MaxConcurrentRequests: int().default(2),
      RequireApproval: bool().default(false),
      Timeout: nullable(duration()),
      ApiKey: nullable(z.string()),
      Endpoint: nullable(z.string()),
      DefaultVoiceId: nullable(z.string()),
      SynthesisModelId: nullable(z.string()),
      TranscriptionModelId: nullable(z.string()),
      Conversation: section({
        MaxConcurrentConnectionsPerTenant: int().default(5),
        MaxConnectionDuration: duration().default(1_800_000),
        IdleTimeout: duration().default(120_000),
        MaxUtteranceDuration: duration().default(60_000),
        MaxUtteranceBytes: int().default(8388608),
        PersistAudio: bool().default(false),
        VoiceId: nullable(z.string()),
        OutputMediaType: str('audio/mpeg'),
        InputSampleRate: int().default(16000),
        MaxSpokenCharactersPerTurn: int().default(5000),
      }),
    }),
  })
  .superRefine((config, ctx) => {
    const scripts = config.Skills.Scripts;
    if (scripts.Enabled && !scripts.PlatformIsolationAcknowledged) {
      ctx.addIssue({
        code: 'custom',
        path: ['Skills', 'Scripts', 'Enabled'],
        message: 'cannot be true while Skills:Scripts:PlatformIsolationAcknowledged is false',
      });
    }
    if (config.Knowledge.ChunkOverlap >= config.Knowledge.ChunkSize) {
      ctx.addIssue({ code: 'custom', path: ['Knowledge', 'ChunkOverlap'], message: 'must be less than Knowledge:ChunkSize' });
    }
    if (config.SingletonExecution.Enabled && config.SingletonExecution.LeaseDuration < 3000) {
      ctx.addIssue({ code: 'custom', path: ['SingletonExecution', 'LeaseDuration'], message: 'must be at least 3 seconds while enabled' });
    }
    if (config.UtilityModel !== null) {
      const utility = utilityModelOf(config.UtilityModel);
      if (!utility?.provider || !utility.model)
        ctx.addIssue({ code: 'custom', path: ['UtilityModel'], message: 'must be provider/model, e.g. openai/gpt-4.1-mini' });
      else if (!config.Providers[utility.provider])
        ctx.addIssue({
          code: 'custom',
          path: ['UtilityModel'],
          message: `names provider "${utility.provider}", which is not one of Providers`,
        });
    }
    if (config.Images.Enabled) {
      if (!config.Images.Provider)
        ctx.addIssue({ code: 'custom', path: ['Images', 'Provider'], message: 'is required while Images:Enabled is true' });
      if (!config.Images.Model)
        ctx.addIssue({ code: 'custom', path: ['Images', 'Model'], message: 'is required while Images:Enabled is true' });
      if (config.Images.MaxImagesPerRequest < 1)
        ctx.addIssue({ code: 'custom', path: ['Images', 'MaxImagesPerRequest'], message: 'must be at least 1' });
      // The image tool draws inside the model's turn; a tool that waits for approval is executed outside it, without the run.
      if (config.Approvals.RequiredTools.includes(IMAGE_TOOL_NAME))
        ctx.addIssue({
          code: 'custom',
          path: ['Approvals', 'RequiredTools'],
          message: `names ${IMAGE_TOOL_NAME}, which cannot wait for an approval yet`,
        });
      const provider = config.Images.Provider ? config.Providers[config.Images.Provider] : undefined;
      if (config.Images.Provider && !provider)
        ctx.addIssue({ code: 'custom', path: ['Images', 'Provider'], message: 'names no provider of Providers' });
      if (provider?.Kind === 'Anthropic')
        ctx.addIssue({
          code: 'custom',
          path: ['Images', 'Provider'],
          message: 'names a provider of Kind Anthropic, which has no image API (OpenAI, AzureOpenAI, OpenAICompatible or Demo can draw)',
        });
    }
    for (const issue of voiceIssues(config.Voice, config.Providers)) ctx.addIssue({ code: 'custom', ...issue });
    const api = config.Hangar.Api;
    if (api.Jwt.Enabled && !api.Jwt.JwksUri && !api.Jwt.Jwks) {
      ctx.addIssue({
        code: 'custom',
        path: ['Hangar', 'Api', 'Jwt', 'Jwks'],
        message: 'Jwks or JwksUri is required while Jwt:Enabled is true',
      });
    }
    if (api.Jwt.Jwks) {
      try {
        JSON.parse(api.Jwt.Jwks);
      } catch {
        ctx.addIssue({ code: 'custom', path: ['Hangar', 'Api', 'Jwt', 'Jwks'], message: 'must be a JSON Web Key Set' });
      }
    }
    if (api.AllowRemoteAccess && !api.AuthToken && !api.AuthorizationPolicy && !api.Jwt.Enabled) {
      ctx.addIssue({
        code: 'custom',
        path: ['Hangar', 'Api', 'AllowRemoteAccess'],
        message: 'cannot be true without Hangar:Api:AuthToken, Hangar:Api:Jwt or an authorization policy',
      });
    }
  });

export type HangarConfig = z.infer<typeof ConfigSchema>;
export type ProviderConfig = HangarConfig['Providers'][string];
export { SERVICE_NAMES };
