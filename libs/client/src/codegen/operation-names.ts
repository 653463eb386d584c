/** Lower-case words of an identifier or a tag: `listAgentVersions` → list, agent, versions; `API keys` → api, keys. */
function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word.toLowerCase());
}

const camelCase = (parts: string[]) => parts.map((part, index) => (index ? part[0].toUpperCase() + part.slice(1) : part)).join('');

const singular = (word: string) => (word.endsWith('ies') ? `${word.slice(0, -3)}y` : word.endsWith('s') ? word.slice(0, -1) : word);

/** The client's group for a tag: `Agents` → `agents`, `Skill script grants` → `skillScriptGrants`, `API keys` → `apiKeys`. */
export const groupName = (tag: string) => camelCase(words(tag));

/**
 * An operation's method in its tag's group: the operationId without the words that name the tag
 * (singular or plural; the whole tag, else its longest leading part), found after the first word (the verb).
 * `listAgentVersions` in Agents → `listVersions`; `createSkillScriptGrant` in "Skill script grants" →
 * `create`; `resealContent` in "Content protection" → `reseal`; `listModels` in Catalog stays `listModels`.
 */
export function methodName(operationId: string, tag: string): string {
  const id = words(operationId);
  const tagWords = words(tag).map(singular);
  for (let length = tagWords.length; length > 0; length--) {
    for (let start = 1; start + length <= id.length; start++) {
      const named = tagWords.slice(0, length).every((word, offset) => singular(id[start + offset]) === word);
      if (named) return camelCase([...id.slice(0, start), ...id.slice(start + length)]);
    }
  }
  return operationId;
}

export interface NamedOperation {
  operationId: string;
  tag: string;
}

/**
 * Group and method of every operation. Two operations of a group whose short names would be the
 * same both keep their whole operationId, so a new route never renames another one's method by its order.
 */
export function nameOperations<T extends NamedOperation>(operations: T[]): Array<T & { group: string; name: string }> {
  const named = operations.map((operation) => ({
    operation,
    key: `${groupName(operation.tag)}.${methodName(operation.operationId, operation.tag)}`,
  }));
  const uses = new Map<string, number>();
  for (const { key } of named) uses.set(key, (uses.get(key) ?? 0) + 1);
  return named.map(({ operation, key }) => {
    const [group, name] = key.split('.');
    return { ...operation, group, name: uses.get(key)! > 1 ? operation.operationId : name };
  });
}
