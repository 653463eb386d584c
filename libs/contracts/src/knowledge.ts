/** An agent's `tools` entry that gives its model a search over one of the tenant's knowledge collections. */
export const KNOWLEDGE_REFERENCE_PREFIX = 'knowledge:';

/** The collection a `knowledge:<collection>` reference names, or undefined for any other entry. */
export function parseKnowledgeReference(reference: string): string | undefined {
  if (!reference.startsWith(KNOWLEDGE_REFERENCE_PREFIX)) return undefined;
  const collection = reference.slice(KNOWLEDGE_REFERENCE_PREFIX.length);
  return collection || undefined;
}
