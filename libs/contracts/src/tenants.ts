/** A tenant id: 1–128 letters, digits, `.`, `_` or `-`, starting with a letter or digit. */
export const TENANT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Pub/sub channel on which governance announces a tenant that was stored or deleted: gateways drop
 * its status from their cache, run executors its providers.
 */
export const TENANT_CHANGES_CHANNEL = 'hangar.tenants.changed';

/**
 * Pub/sub channel on which governance announces that a tenant's quota rules changed (`{ id }`:
 * the tenant): run executors forget which of its agents no rule covers.
 */
export const QUOTA_CHANGES_CHANNEL = 'hangar.quotas.changed';

/** The message on TENANT_CHANGES_CHANNEL. */
export interface TenantChange {
  id: string;
}

/** The provider kinds a tenant may bind (the offline Demo provider stays global). */
export const TENANT_PROVIDER_KINDS = ['OpenAI', 'Anthropic', 'AzureOpenAI', 'OpenAICompatible'] as const;
