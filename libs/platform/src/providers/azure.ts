/**
 * Azure OpenAI's v1 surface (`{resource}/openai/v1/chat/completions`, `api-key` header, no dated
 * api-version): `Endpoint` may be the resource URL, its `/openai` path or the `/openai/v1` base.
 */
export function azureV1Base(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, '');
  if (/\/openai\/v1$/i.test(base)) return base;
  return /\/openai$/i.test(base) ? `${base}/v1` : `${base}/openai/v1`;
}
