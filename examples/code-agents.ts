import { agentFactory, defineAgent } from '@hangar/contracts';

/** Code-defined agents: read-only through the API, listed beside database agents. */
export const concierge = defineAgent({
  name: 'concierge',
  description: 'Answers questions about Hangar itself',
  instructions: 'You are the Hangar concierge. Answer briefly and tell the time when asked.',
  model: { provider: 'demo', model: 'echo' },
  tools: ['clock'],
});

/** Built for each caller at run time: the tenant and user shape the definition. */
export const greeter = agentFactory(
  'greeter',
  ({ tenantId, userId }) => ({
    instructions: `Greet ${userId ?? 'the members'} of tenant ${tenantId} warmly.`,
    model: { provider: 'demo', model: 'echo' },
  }),
  { description: 'Built per tenant at run time' },
);
