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
  if (!policy.allowPrivateNetworkTargets && (isPrivateAddress(parsed.hostname) || LOOPBACK_NAME.test(parsed.hostname)))
    return { ok: false, reason: `the target ${parsed.hostname} is a private network address` };
  return { ok: true, url: parsed };
}
