import type { HangarConfig } from '../config/schema.js';
import { namedSecret } from '../config/secrets.js';
import { createContentCipher, PLAIN_CONTENT, PROTECTED_COLUMNS, type ContentCipher, type ProtectedColumn } from './content-cipher.js';

const KEY_PREFIX = 'Hangar:ContentKeys:';

/**
 * The content cipher a process's configuration describes (SPEC Limits "Content protection"); every
 * service process and all-in-one build it, so `ContentProtection:Enabled` alone switches it on.
 * Configured keys stay readable while it is off (rows sealed earlier still open). A key that is
 * missing, outside `Hangar:ContentKeys:` or not 32 bytes stops the start, naming it.
 */
export function contentCipherFrom(config: HangarConfig): ContentCipher {
  const { Enabled, ActiveKeyId, Keys, Columns } = config.ContentProtection;
  const keys = new Map<string, Buffer>();
  for (const [id, name] of Object.entries(Keys)) {
    const value = namedSecret(config.Hangar.ContentKeys, KEY_PREFIX, KEY_PREFIX, name);
    if (value === undefined)
      throw new Error(`ContentProtection:Keys:${id} names "${name}", which is not a configured key under ${KEY_PREFIX}`);
    const key = Buffer.from(value, 'base64');
    if (key.length !== 32) throw new Error(`${name} (ContentProtection:Keys:${id}) must be base64 of 32 bytes; it holds ${key.length}`);
    keys.set(id, key);
  }
  if (!Enabled) return keys.size ? createContentCipher({ keys, columns: new Set() }) : PLAIN_CONTENT;
  if (!ActiveKeyId) throw new Error('ContentProtection:Enabled is true but ContentProtection:ActiveKeyId is not set');
  if (!keys.has(ActiveKeyId)) throw new Error(`ContentProtection:ActiveKeyId "${ActiveKeyId}" is not one of ContentProtection:Keys`);
  const unknown = (Columns ?? []).filter((column) => !(PROTECTED_COLUMNS as readonly string[]).includes(column));
  if (unknown.length) throw new Error(`ContentProtection:Columns: ${unknown.join(', ')} (must be among ${PROTECTED_COLUMNS.join(', ')})`);
  return createContentCipher({ activeKeyId: ActiveKeyId, keys, columns: new Set((Columns ?? PROTECTED_COLUMNS) as ProtectedColumn[]) });
}
