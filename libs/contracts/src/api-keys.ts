import { createHash } from 'node:crypto';

/** Pub/sub channel on which governance announces a revoked API key; every gateway drops it from its cache. */
export const API_KEY_REVOCATIONS_CHANNEL = 'hangar.api-keys.revoked';

/** The message on API_KEY_REVOCATIONS_CHANNEL: the key's id. */
export interface ApiKeyRevocation {
  id: string;
}

/** API keys read `hgk_` followed by base62 characters (API.md "API keys"). */
export const API_KEY_PREFIX = 'hgk_';

/** What the store keeps of a key and the gateway looks it up by: its SHA-256, hex. */
export const hashApiKey = (key: string) => createHash('sha256').update(key).digest('hex');
