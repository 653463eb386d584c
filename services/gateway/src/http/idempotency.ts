import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { governancePb } from '@hangar/contracts';
import { HangarError, validationError, type Caller } from '@hangar/platform';
import type { GatewayContext } from '../gateway.context.js';
import type { HandlerResult } from './route.js';

const { IdempotencyOutcome } = governancePb;
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

/**
 * `Idempotency-Key` on a POST with a JSON body (Stripe semantics, API.md): the first response for
 * a key is stored for a day and replayed for the same request with `Idempotent-Replayed: true`;
 * the key with another request is 422, and while the first is executing 409. A request that ends
 * in an error releases the key, so a retry executes again. Keys are scoped to tenant + route.
 */
export async function withIdempotency(
  key: string,
  scope: string,
  request: Request,
  response: Response,
  caller: Caller,
  context: GatewayContext,
  execute: () => Promise<HandlerResult>,
): Promise<HandlerResult | undefined> {
  const { MaxKeyLength } = context.config.Idempotency;
  if (key.length > MaxKeyLength || !PRINTABLE_ASCII.test(key)) {
    throw validationError('the Idempotency-Key header is not valid', [
      { path: 'Idempotency-Key', message: `must be 1-${MaxKeyLength} printable ASCII characters without spaces` },
    ]);
  }
  const fingerprint = createHash('sha256')
    .update(JSON.stringify({ path: request.path, query: request.query, body: request.body ?? null }))
    .digest('hex');
  const target = { scope, key };
  const begun = await context.governance.beginIdempotentRequest(
    { ...target, fingerprint, inProgressTimeoutMs: context.config.Hangar.Api.IdempotencyInProgressTimeout },
    { caller },
  );
  switch (begun.outcome) {
    case IdempotencyOutcome.IDEMPOTENCY_OUTCOME_REPLAY: {
      const stored = begun.response!;
      response.status(stored.status).set(stored.headers).set('Idempotent-Replayed', 'true');
      if (stored.body) response.type('application/json').send(stored.body);
      else response.end();
      return undefined;
    }
    case IdempotencyOutcome.IDEMPOTENCY_OUTCOME_IN_PROGRESS:
      throw new HangarError('conflict', `a request with Idempotency-Key "${key}" is still in progress`, {}, 'idempotency_in_progress');
    case IdempotencyOutcome.IDEMPOTENCY_OUTCOME_MISMATCH:
      throw new HangarError(
        'unprocessable',
        `Idempotency-Key "${key}" was already used with a different request`,
        {},
        'idempotency_key_reuse',
      );
  }
  let result: HandlerResult;
  try {
    result = await execute();
  } catch (error) {
    await context.governance.releaseIdempotentRequest(target, { caller }).catch(() => {});
    throw error;
  }
  if (result.sent) {
    await context.governance.releaseIdempotentRequest(target, { caller }).catch(() => {});
    return result;
  }
  const body = result.body === undefined ? '' : JSON.stringify(result.body);
  await context.governance
    .completeIdempotentRequest({ ...target, response: { status: result.status, headers: result.headers ?? {}, body } }, { caller })
    .catch((error) => context.logger.warn({ err: error, scope, key }, 'idempotent response could not be stored; the key was released'));
  return result;
}
