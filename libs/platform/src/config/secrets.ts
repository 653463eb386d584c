/**
 * The value of a secret that a stored record names by configuration key (`Hangar:WebhookSecrets:x`,
 * `Hangar:ProviderKeys:x`): undefined when the name is not under `allowedPrefix` (a prefix narrowed
 * after the record was stored cuts it off), not under `mapPath`, or not set. Key names compare
 * case-insensitively, like every configuration key.
 */
export function namedSecret(values: Record<string, string>, mapPath: string, allowedPrefix: string, name: string): string | undefined {
  if (!name.startsWith(allowedPrefix) || name.toLowerCase().indexOf(mapPath.toLowerCase()) !== 0) return undefined;
  const wanted = name.slice(mapPath.length).toLowerCase();
  if (!wanted) return undefined;
  return Object.entries(values).find(([key]) => key.toLowerCase() === wanted)?.[1];
}
