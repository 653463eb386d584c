/** What a secret value is replaced by; `null` stays `null`, so an unset secret still reads as unset. */
export const MASK = '***';

/**
 * A key holding a secret, or a map of them, by its name: tokens, provider and voice API keys,
 * passwords, JWKS, `Hangar:ProviderKeys`, `Hangar:WebhookSecrets`, `Hangar:ContentKeys` and any
 * other `…Secrets` map, and `ContentProtection:Keys`. A name that only ends in "Prefix" (a
 * configuration-key prefix) is not one.
 */
const SECRET_KEY = /(token|secrets?|password|apikey|jwks|providerkeys|contentkeys|^keys)$/i;
const CONNECTION_STRING_KEY = /connectionstring$/i;

/**
 * The configuration with every secret masked, for GET /api/diagnostics: secret keys (whole subtree),
 * the password of any URL (`postgres://user:***@host/db`, an Endpoint with credentials), and the
 * `Password=` part of a key-value connection string.
 */
export function maskedConfiguration(config: unknown): unknown {
  return mask(config, false, '');
}

function mask(value: unknown, secret: boolean, key: string): unknown {
  if (value === null || value === undefined) return value ?? null;
  if (Array.isArray(value)) return value.map((item) => mask(item, secret, key));
  if (typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([name, item]) => [name, mask(item, secret || SECRET_KEY.test(name), name)]),
    );
  }
  if (secret) return MASK;
  if (typeof value !== 'string') return value;
  const withoutUrlPassword = maskUrlPassword(value);
  return CONNECTION_STRING_KEY.test(key) ? withoutUrlPassword.replace(/(password|pwd)\s*=\s*[^;]*/gi, `$1=${MASK}`) : withoutUrlPassword;
}

function maskUrlPassword(text: string): string {
  // scheme://user:password@host — parsed by hand, as a URL with an unknown scheme keeps its userinfo unparsed.
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/:@\s]*):[^@/\s]*@/i, `$1:${MASK}@`);
}
