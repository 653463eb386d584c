import { createHash, createHmac } from 'node:crypto';

/** The headers Hangar sets on a delivery itself; a subscription's own headers of these names are dropped. */
export const RESERVED_HEADER = /^(webhook-.*|content-type|content-length|host|user-agent)$/i;

/**
 * The Standard Webhooks headers of one attempt: `webhook-id` (stable across retries),
 * `webhook-timestamp` (seconds, this attempt) and `webhook-signature` `v1,<base64 HMAC-SHA256 of
 * "id.timestamp.body">`. The secret is `whsec_<base64>` (the bare base64 is accepted too).
 */
export function signatureHeaders(secret: string, id: string, body: string, now: Date): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000).toString();
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}

/** Whether a configured secret can sign: `whsec_` followed by base64 of at least 24 bytes, or that base64 alone. */
export function isUsableSecret(secret: string): boolean {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  return /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) && Buffer.from(encoded, 'base64').length >= 24;
}

/**
 * The webhook id of an event that happened elsewhere, derived from where it came from (a run's
 * event, an agent change…), so the same event offered twice by an at-least-once log gets one id.
 */
export function eventIdOf(source: string): string {
  return `evt_${createHash('sha256').update(source).digest('base64url').slice(0, 24)}`;
}
