/**
 * The OpenAPI tags that group the routes, with their descriptions, in the order the document
 * lists them. A route's `tag` must be one of these, so no group goes undescribed.
 */
export const API_TAGS = {
  Agents: 'Agent definitions (stored or code-defined): create, version, validate, roll back, and run them.',
  Runs: 'Run records, their events as a resumable stream, cancellation, human approvals of tool calls, feedback scores and recorded inputs.',
  Sessions: 'Conversations kept across runs: their messages and state, branching and deletion.',
  Attachments: 'Files uploaded for runs (checked by signature and size), their descriptors and bytes.',
  Catalog: 'The configured models and the tools agents may use.',
  'Tool servers':
    'MCP tool servers of the tenant (streamable HTTP or SSE), their status and the tools discovered on them, which agents name as mcp:<server>/<tool>.',
  Exposure:
    'Agents served to other systems: as tools of an MCP server (Hangar:Exposure:Mcp:Agents) and as A2A agents (Hangar:Exposure:A2A:Agents); none by default, and only for callers with ExternalInvoke.',
  Knowledge:
    'Collections of documents (text, Markdown, PDF) cut into chunks and embedded, searched by meaning; agents search one through a knowledge:<collection> tool.',
  Evaluations:
    'Eval suites: cases with graders (exact, contains, regex, JSON Schema, a judge agent), runs of an agent version over every case (runs of kind Evaluation), results per case and aggregate, and two runs compared.',
  Experiments:
    'Weighted variants over an agent’s versions (sticky per session, runs labelled with their variant) and canaries whose share grows while their online score holds and that roll back when it does not; results per variant.',
  Images:
    'Images drawn by the configured image model (Images:Enabled), stored as attachments and priced per Pricing:Images; absent (404) while image generation is off.',
  Voice:
    'Speech in and out through the configured speech provider (Voice:Provider’s OpenAI speech API, or the ElevenLabs-style API at Voice:Endpoint), priced per Pricing:Voice; absent (404) while none is configured.',
  Workflows:
    'Versioned graphs of agent, human-input and transform steps with conditional edges, fan-out and fan-in, run in super steps with a checkpoint after each; pending questions answered from any instance; a run that lost its instance resumes from its last checkpoint.',
  Skills: 'Agent Skills (instructions, resources and scripts) stored in the database or on disk.',
  'Skill script grants': 'Grants that allow a skill’s scripts to run, with an optional expiry.',
  Quotas: 'Usage limits per tenant (runs, tokens, cost) over a period; a run over a limit is refused with 429.',
  Audit: 'The audit trail of changes and security-relevant actions.',
  'API keys': 'API keys of the caller’s tenant: a role and scopes capped by their creator’s; the key is shown once.',
  Tenants: 'Tenants, their enabled state and their own model providers (platform tenant only).',
  Webhooks: 'Webhook subscriptions (Standard Webhooks signatures) and their delivery attempts.',
  Schedules:
    'Cron schedules that queue runs of the tenant’s agents (kind Scheduled) in a time zone, one run per fire time across instances, and running one now.',
  Retention: 'How long each kind of record is kept, and purging it now (platform tenant only).',
  'Content protection': 'Encryption of stored content at rest, and sealing it again under the active key (platform tenant only).',
  'OpenAI compatible':
    'OpenAI’s Chat Completions, Responses, Conversations and Models routes on stored agents (`model` names an agent), for the official OpenAI clients and the Vercel AI SDK. Errors use OpenAI’s error body.',
  Operations: 'Prometheus metrics, diagnostics of the running deployment (when enabled) and the health of each configured model provider.',
  Console: 'The web console: a page served here that calls this API with the credential it asks for.',
  Meta: 'Service description, this document and health probes; none of them needs a credential.',
} as const;

export type ApiTag = keyof typeof API_TAGS;
