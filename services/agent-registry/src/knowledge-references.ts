import { KnowledgeServiceDefinition, parseKnowledgeReference } from '@hangar/contracts';
import { createServiceClient, HangarError, type Caller, type Channel } from '@hangar/platform';
import type { ToolReferenceCheck } from './agent-registry.service.js';
import type { McpReferenceCheck } from './tool-servers/tool-server.service.js';

/**
 * Checks `knowledge:<collection>` tools against the knowledge service, each collection once: an
 * unknown collection is an error; one the service cannot answer for within `timeoutMs` is a
 * warning (the agent may still be saved; its run leaves the tool out if the collection is gone).
 */
export function knowledgeReferenceCheck(channel: Channel, timeoutMs: number): ToolReferenceCheck {
  const knowledge = createServiceClient(KnowledgeServiceDefinition, channel);
  const lookup = async (caller: Caller, collection: string): Promise<McpReferenceCheck> => {
    try {
      await knowledge.getCollection({ name: collection }, { caller, signal: AbortSignal.timeout(timeoutMs) });
      return { state: 'found' };
    } catch (error) {
      if (error instanceof HangarError && error.kind === 'notFound')
        return { state: 'missing', reason: `collection "${collection}" does not exist` };
      return { state: 'unverified', reason: `the knowledge service could not be asked: ${(error as Error).message}` };
    }
  };
  return async (caller, references) => {
    const checks = new Map<string, McpReferenceCheck>();
    const collections = new Map<string, Promise<McpReferenceCheck>>();
    for (const collection of references.map(parseKnowledgeReference)) {
      if (collection && !collections.has(collection)) collections.set(collection, lookup(caller, collection));
    }
    for (const reference of references) {
      const collection = parseKnowledgeReference(reference);
      checks.set(
        reference,
        collection
          ? await collections.get(collection)!
          : { state: 'missing', reason: 'a knowledge tool is written knowledge:<collection>' },
      );
    }
    return checks;
  };
}
