import { agentFactory, defineAgent } from '@hangar/contracts';

/** Code-defined agents: read-only through the API, listed beside database agents. */
export const concierge = defineAgent({
  name: 'concierge',
  description: 'Answers questions about Hangar itself',
  instructions: 'You are the Hangar concierge. Answer briefly and tell the time when asked.',
  model: { provider: 'demo', model: 'echo' },
  tools: ['clock'],
});

export const greeter = agentFactory('greeter', ({ tenantId }) => ({ instructions: `Greet the members of tenant ${tenantId} warmly.` }), {
  description: 'Built per tenant at run time',
});
