import { forbidden, type Caller } from '@hangar/platform';
import type { GatewayContext } from '../gateway.context.js';
import type { Principal } from './auth.js';

/**
 * Platform-wide settings (tenants, retention) are managed from the platform tenant (`DefaultTenantId`)
 * or with the static token, never from an ordinary tenant.
 */
export function requirePlatform(principal: Principal | undefined, caller: Caller, context: GatewayContext) {
  if (principal?.method !== 'token' && caller.tenantId !== context.config.DefaultTenantId)
    throw forbidden('this is managed from the platform tenant (DefaultTenantId) or with the static token');
}
