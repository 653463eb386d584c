import { isPrivateAddress } from './addresses.js';

/** Names that always mean this machine (RFC 6761), refused at save like the addresses they stand for. */
const LOOPBACK_NAME = /^(.+\.)?localhost\.?$/i;

export interface EgressPolicy {
  /** Private, loopback, link-local… targets allowed (Egress:AllowPrivateNetworkTargets or a feature's own key). */
  allowPrivateNetworkTargets: boolean;
  /** Plain http: allowed. */
  allowInsecureHttp: boolean;
}

/** Why a target was refused; `reason` is a sentence fit for a 400 problem detail or a delivery log. */
export class EgressRefusedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'EgressRefusedError';
  }
}

/**
 * Save-time check of a target URL. WHATWG URL parsing canonicalizes every IPv4 spelling (2130706433,
 * 0x7f.1, 0177.0.0.1 are all 127.0.0.1) and IPv6 text, so the range check sees the address a socket
 * would. Host names are not resolved here: the client checks what they resolve to on every connection.
 */
export function checkEgressTarget(url: string, policy: EgressPolicy): { ok: true; url: URL } | { ok: false; reason: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'the target is not a valid absolute URL' };
  }
  const schemes = policy.allowInsecureHttp ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(parsed.protocol))
    return { ok: false, reason: `the target must use ${schemes.join(' or ')} (it uses ${parsed.protocol})` };
  // Credentials in a URL end up in logs and in the receiver's; they belong in headers.
  if (parsed.username || parsed.password) return { ok: false, reason: 'the target URL must not carry a user name or password' };
  if (!policy.allowPrivateNetworkTargets && isPrivateHost(parsed.hostname))
    return { ok: false, reason: `the target ${parsed.hostname} is a private network address` };
  return { ok: true, url: parsed };
}

/**
 * Save-time check of a service the platform sends its credentials to (a tenant's model provider, a
 * tool server): `https:`, or plain `http:` to a private target while private targets are allowed (a
 * sidecar next to Hangar, where nothing crosses a network). Host names are not resolved, so for
 * `http:` only an IP literal or a localhost name counts as private: a name could answer public.
 */
export function checkServiceEndpoint(
  url: string,
  settings: Pick<EgressPolicy, 'allowPrivateNetworkTargets'>,
): { ok: true; url: URL } | { ok: false; reason: string } {
  const target = checkEgressTarget(url, { allowPrivateNetworkTargets: settings.allowPrivateNetworkTargets, allowInsecureHttp: true });
  if (!target.ok || target.url.protocol === 'https:') return target;
  if (settings.allowPrivateNetworkTargets && isPrivateHost(target.url.hostname)) return target;
  return {
    ok: false,
    reason: settings.allowPrivateNetworkTargets
      ? `the target must use https: (plain http: only for a private IP address or localhost, and ${target.url.hostname} is neither)`
      : 'the target must use https: (plain http: only for a private target while Egress:AllowPrivateNetworkTargets is on)',
  };
}

function isPrivateHost(hostname: string): boolean {
  return isPrivateAddress(hostname) || LOOPBACK_NAME.test(hostname);
}
