import type { HangarClient } from '@hangar/client';
import { href } from './router.js';
import { Status, formatTime, type Column } from './ui.js';

/**
 * A route group the console manages with one generic page: list, read, write as JSON, delete, and
 * the group's own actions. Each entry calls the typed client, so a renamed route fails the build.
 */
export interface ResourceKind {
  path: string;
  title: string;
  noun: string;
  summary: string;
  list(client: HangarClient): Promise<any[]>;
  keyOf(item: any): string;
  columns: Column[];
  get?(client: HangarClient, key: string): Promise<unknown>;
  /** A new one (or a replacement, for kinds addressed by name) from a JSON body. */
  write?: {
    byName: boolean;
    template: Record<string, unknown>;
    send(client: HangarClient, body: any, name: string): Promise<unknown>;
    /** The body fields an existing one is edited with (the rest of what GET returns is the server's), or a choice by what it is. */
    editable?: string[] | ((current: any) => string[]);
  };
  remove?: { label: string; send(client: HangarClient, key: string): Promise<unknown> };
  actions?: ResourceAction[];
  /** A list under one resource (a webhook's deliveries, a collection's documents). */
  related?: { title: string; list(client: HangarClient, key: string): Promise<any[]>; columns: Column[]; linkTo?(item: any): string };
}

/** A button on one resource's page; with `body` it is a JSON form whose body it sends. */
export interface ResourceAction {
  label: string;
  body?: Record<string, unknown>;
  send(client: HangarClient, key: string, body?: unknown): Promise<unknown>;
  /** A link to the console page of what the answer names (a run it started). */
  link?: { label: string; to(answer: any): string };
}

const yesNo = (value: boolean) => (value ? 'yes' : 'no');

export const RESOURCE_KINDS: ResourceKind[] = [
  {
    path: 'api-keys',
    title: 'API keys',
    noun: 'API key',
    summary: 'Keys with a role and scopes; the key itself is shown once, when it is made.',
    list: (client) => client.apiKeys.list(),
    keyOf: (key) => key.id,
    columns: [
      { label: 'Name', value: (key) => key.name },
      { label: 'Role', value: (key) => key.role },
      { label: 'Prefix', value: (key) => <code>{key.prefix}</code> },
      { label: 'Last used', value: (key) => formatTime(key.lastUsedAt) },
      { label: 'Revoked', value: (key) => formatTime(key.revokedAt) },
    ],
    get: (client, id) => client.apiKeys.get(id),
    write: { byName: false, template: { name: 'ci', role: 'Reader', scopes: [] }, send: (client, body) => client.apiKeys.create(body) },
    remove: { label: 'Revoke', send: (client, id) => client.apiKeys.revoke(id) },
  },
  {
    path: 'webhooks',
    title: 'Webhooks',
    noun: 'webhook',
    summary: 'Signed deliveries of run, agent, quota and approval events, with their attempts.',
    list: (client) => client.webhooks.list(),
    keyOf: (hook) => hook.name,
    columns: [
      { label: 'Name', value: (hook) => hook.name },
      { label: 'URL', value: (hook) => hook.url },
      { label: 'Events', value: (hook) => hook.events.join(', ') },
      { label: 'Enabled', value: (hook) => yesNo(hook.enabled) },
      { label: 'Failures', value: (hook) => hook.consecutiveFailures },
    ],
    get: (client, name) => client.webhooks.get(name),
    write: {
      byName: true,
      template: {
        url: 'https://example.com/hooks/hangar',
        events: ['run.completed'],
        secretKey: 'Hangar:WebhookSecrets:main',
        enabled: true,
      },
      send: (client, body, name) => client.webhooks.put(name, body),
      editable: ['url', 'events', 'headers', 'enabled', 'description'],
    },
    remove: { label: 'Delete', send: (client, name) => client.webhooks.delete(name) },
    actions: [{ label: 'Send a test event', send: (client, name) => client.webhooks.test(name) }],
    related: {
      title: 'Deliveries',
      list: (client, name) => client.webhooks.listDeliveries(name),
      columns: [
        { label: 'Event', value: (delivery) => delivery.eventType },
        { label: 'Status', value: (delivery) => <Status status={delivery.status} /> },
        { label: 'Attempt', value: (delivery) => delivery.attempt },
        { label: 'Answer', value: (delivery) => delivery.responseStatus ?? delivery.error ?? '—' },
        { label: 'Created', value: (delivery) => formatTime(delivery.createdAt) },
      ],
    },
  },
  {
    path: 'skills',
    title: 'Skills',
    noun: 'skill',
    summary: 'Instructions, resources and scripts agents can load; scripts run only under a grant.',
    list: (client) => client.skills.list(),
    keyOf: (skill) => skill.name,
    columns: [
      { label: 'Name', value: (skill) => skill.name },
      { label: 'Description', value: (skill) => skill.description },
      { label: 'Updated', value: (skill) => formatTime(skill.updatedAt) },
    ],
    get: (client, name) => client.skills.get(name),
    write: {
      byName: true,
      template: { description: 'What the skill is for', instructions: 'How to use it', resources: [], scripts: [] },
      // The body names the skill too; the name field is the one that counts.
      send: (client, body, name) => client.skills.put(name, { ...body, name }),
      editable: ['description', 'compatibility', 'instructions', 'resources', 'scripts'],
    },
    remove: { label: 'Delete', send: (client, name) => client.skills.delete(name) },
  },
  {
    path: 'skill-script-grants',
    title: 'Skill script grants',
    noun: 'grant',
    summary: 'Which skills may run their scripts in this tenant, and until when.',
    list: (client) => client.skillScriptGrants.list(),
    keyOf: (grant) => grant.skillName,
    columns: [
      { label: 'Skill', value: (grant) => grant.skillName },
      { label: 'Script', value: (grant) => grant.scriptName ?? 'every script' },
      { label: 'Status', value: (grant) => <Status status={grant.status} /> },
      { label: 'Expires', value: (grant) => formatTime(grant.expiresAt) },
    ],
    write: { byName: false, template: { skillName: 'a-skill' }, send: (client, body) => client.skillScriptGrants.create(body) },
    remove: { label: 'Revoke', send: (client, skillName) => client.skillScriptGrants.revoke(skillName) },
  },
  {
    path: 'schedules',
    title: 'Schedules',
    noun: 'schedule',
    summary: 'Runs started on a cron, in a time zone.',
    list: (client) => client.schedules.list(),
    keyOf: (schedule) => schedule.name,
    columns: [
      { label: 'Name', value: (schedule) => schedule.name },
      { label: 'Cron', value: (schedule) => <code>{schedule.cron}</code> },
      { label: 'Enabled', value: (schedule) => yesNo(schedule.enabled) },
      { label: 'Next', value: (schedule) => formatTime(schedule.nextFireAt) },
      { label: 'Last', value: (schedule) => formatTime(schedule.lastFireAt) },
    ],
    get: (client, name) => client.schedules.get(name),
    write: {
      byName: true,
      template: {
        handlerKey: 'agent-run',
        cron: '0 7 * * 1-5',
        timeZone: 'UTC',
        payload: { agentName: 'an-agent', message: 'Good morning' },
      },
      send: (client, body, name) => client.schedules.put(name, body),
      editable: ['handlerKey', 'cron', 'timeZone', 'payload', 'enabled'],
    },
    remove: { label: 'Delete', send: (client, name) => client.schedules.delete(name) },
    actions: [{ label: 'Run now', send: (client, name) => client.schedules.trigger(name) }],
  },
  {
    path: 'tool-servers',
    title: 'Tool servers',
    noun: 'tool server',
    summary: 'MCP servers whose tools agents may call.',
    list: (client) => client.toolServers.list(),
    keyOf: (server) => server.name,
    columns: [
      { label: 'Name', value: (server) => server.name },
      { label: 'URL', value: (server) => server.url },
      { label: 'Status', value: (server) => <Status status={server.status} /> },
      { label: 'Tools', value: (server) => server.tools.length },
      { label: 'Refreshed', value: (server) => formatTime(server.refreshedAt) },
    ],
    get: (client, name) => client.toolServers.get(name),
    write: {
      byName: true,
      template: { url: 'https://tools.example.com/mcp', transport: 'streamable-http' },
      send: (client, body, name) => client.toolServers.put(name, body),
      editable: ['url', 'transport', 'headers', 'enabled'],
    },
    remove: { label: 'Delete', send: (client, name) => client.toolServers.delete(name) },
    actions: [{ label: 'Discover tools again', send: (client, name) => client.toolServers.refresh(name) }],
  },
  {
    path: 'knowledge',
    title: 'Knowledge',
    noun: 'collection',
    summary: 'Collections of documents, chunked and embedded for retrieval.',
    list: (client) => client.knowledge.listCollections(),
    keyOf: (collection) => collection.name,
    columns: [
      { label: 'Name', value: (collection) => collection.name },
      { label: 'Embedding', value: (collection) => `${collection.embeddingProvider}/${collection.embeddingModel}` },
      { label: 'Documents', value: (collection) => collection.documents },
      { label: 'Chunks', value: (collection) => collection.chunks },
    ],
    get: (client, name) => client.knowledge.getCollection(name),
    write: {
      byName: true,
      template: { description: 'Product manuals', embeddingProvider: 'a-provider', embeddingModel: 'an-embedding-model' },
      send: (client, body, name) => client.knowledge.putCollection(name, body),
      editable: ['description', 'embeddingProvider', 'embeddingModel'],
    },
    remove: { label: 'Delete', send: (client, name) => client.knowledge.deleteCollection(name) },
    related: {
      title: 'Documents',
      list: (client, name) => client.knowledge.listDocuments(name),
      columns: [
        { label: 'Name', value: (document) => document.name },
        { label: 'Type', value: (document) => document.mediaType },
        { label: 'Chunks', value: (document) => document.chunks },
        { label: 'Added', value: (document) => formatTime(document.createdAt) },
      ],
    },
  },
  {
    path: 'workflows',
    title: 'Workflows',
    noun: 'workflow',
    summary: 'Versioned graphs of agent, input and transform steps, run in checkpointed super steps.',
    list: (client) => client.workflows.list(),
    keyOf: (workflow) => workflow.name,
    columns: [
      { label: 'Name', value: (workflow) => workflow.name },
      { label: 'Version', value: (workflow) => workflow.version },
      { label: 'Steps', value: (workflow) => workflow.steps.length },
      { label: 'Updated', value: (workflow) => formatTime(workflow.updatedAt) },
    ],
    get: (client, name) => client.workflows.get(name),
    write: {
      byName: true,
      template: {
        description: 'Draft, then a person approves',
        steps: [
          { id: 'draft', kind: 'agent', agent: 'an-agent' },
          { id: 'review', kind: 'input', prompt: 'Publish this draft?' },
        ],
        edges: [{ from: 'draft', to: 'review' }],
      },
      send: (client, body, name) => client.workflows.put(name, body),
      editable: ['description', 'steps', 'edges'],
    },
    remove: { label: 'Delete', send: (client, name) => client.workflows.delete(name) },
    actions: [
      {
        label: 'Run',
        body: { input: 'What the entry steps are given', parameters: {} },
        send: (client, name, body) => client.workflows.run(name, body as any),
        link: { label: 'Follow the workflow run', to: (answer) => href('runs', answer.workflowRunId) },
      },
    ],
  },
  {
    path: 'evals',
    title: 'Eval suites',
    noun: 'eval suite',
    summary: 'Cases with graders, run against an agent version; pass rate, score, cost and latency per suite run.',
    list: (client) => client.evaluations.listEvalSuites(),
    keyOf: (suite) => suite.name,
    columns: [
      { label: 'Name', value: (suite) => suite.name },
      { label: 'Version', value: (suite) => suite.version },
      { label: 'Description', value: (suite) => suite.description },
      { label: 'Updated', value: (suite) => formatTime(suite.updatedAt) },
    ],
    get: (client, name) => client.evaluations.getEvalSuite(name),
    write: {
      byName: true,
      template: {
        description: 'Answers we must not lose',
        cases: [{ input: 'What is the capital of France?', expected: 'Paris', graders: [{ kind: 'contains' }] }],
      },
      send: (client, body, name) => client.evaluations.putEvalSuite(name, body),
      editable: ['description', 'cases'],
    },
    remove: { label: 'Delete', send: (client, name) => client.evaluations.deleteEvalSuite(name) },
    actions: [
      {
        label: 'Run the suite',
        body: { agentName: 'an-agent' },
        send: (client, name, body) => client.evaluations.startEvalSuiteRun(name, body as any),
      },
    ],
    related: {
      title: 'Suite runs',
      list: (client, name) => client.evaluations.listEvalSuiteRuns(name),
      linkTo: (run) => href('eval-runs', run.id),
      // The first cell, when the run was asked for, links to the suite run's page.
      columns: [
        { label: 'Created', value: (run) => formatTime(run.createdAt) },
        { label: 'Agent', value: (run) => (run.agentVersion === null ? run.agentName : `${run.agentName} v${run.agentVersion}`) },
        { label: 'Status', value: (run) => <Status status={run.status} /> },
        { label: 'Cases', value: (run) => `${run.casesDone} of ${run.summary.cases}` },
        { label: 'Pass rate', value: (run) => `${Math.round(run.summary.passRate * 100)} %` },
        { label: 'Mean score', value: (run) => run.summary.meanScore.toFixed(2) },
      ],
    },
  },
  {
    path: 'experiments',
    title: 'Experiments',
    noun: 'experiment',
    summary: 'Versions of an agent sharing its runs by weight, or a canary rolled back on a low online score.',
    list: (client) => client.experiments.list(),
    keyOf: (experiment) => experiment.name,
    columns: [
      { label: 'Name', value: (experiment) => experiment.name },
      { label: 'Agent', value: (experiment) => experiment.agentName },
      { label: 'Status', value: (experiment) => <Status status={experiment.status} /> },
      { label: 'Reason', value: (experiment) => experiment.reason ?? '—' },
      { label: 'Started', value: (experiment) => formatTime(experiment.startedAt) },
    ],
    get: (client, name) => client.experiments.get(name),
    write: {
      byName: true,
      template: {
        agentName: 'an-agent',
        variants: [
          { version: 1, weight: 50 },
          { version: 2, weight: 50 },
        ],
      },
      send: (client, body, name) => client.experiments.put(name, body),
      // A canary's variants are its shares of the moment: it is edited as the canary it is.
      editable: (experiment) => (experiment.canary ? ['agentName', 'canary'] : ['agentName', 'variants']),
    },
    remove: { label: 'Delete', send: (client, name) => client.experiments.delete(name) },
    actions: [
      { label: 'Start', send: (client, name) => client.experiments.start(name) },
      { label: 'Stop', send: (client, name) => client.experiments.stop(name) },
    ],
    related: {
      title: 'Results per variant',
      list: async (client, name) => (await client.experiments.getResults(name)).variants,
      columns: [
        { label: 'Version', value: (variant) => variant.version },
        { label: 'Weight', value: (variant) => variant.weight },
        { label: 'Runs', value: (variant) => `${variant.runs} (${variant.completed} completed, ${variant.failed} failed)` },
        {
          label: 'Mean score',
          value: (variant) => (variant.meanScore === null ? '—' : `${variant.meanScore.toFixed(1)} of ${variant.scored}`),
        },
        { label: 'Cost', value: (variant) => variant.cost ?? '—' },
        { label: 'Latency p50', value: (variant) => `${Math.round(variant.latencyMsP50)} ms` },
      ],
    },
  },
  {
    path: 'tenants',
    title: 'Tenants',
    noun: 'tenant',
    summary: 'Tenants, from configuration and stored ones, with their own providers.',
    list: (client) => client.tenants.list(),
    keyOf: (tenant) => tenant.id,
    columns: [
      { label: 'Id', value: (tenant) => tenant.id },
      { label: 'Name', value: (tenant) => tenant.displayName },
      { label: 'Enabled', value: (tenant) => yesNo(tenant.enabled) },
      { label: 'Stored', value: (tenant) => yesNo(tenant.stored) },
    ],
    get: (client, id) => client.tenants.get(id),
    write: {
      byName: true,
      template: { displayName: 'Acme', enabled: true },
      send: (client, body, id) => client.tenants.put(id, body),
      editable: ['displayName', 'enabled', 'providers'],
    },
    remove: { label: 'Delete', send: (client, id) => client.tenants.delete(id) },
  },
];
