import { context, createContextKey, ROOT_CONTEXT } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inRunContext } from '../src/traces/run-tracing.js';

/** inRunContext is `yield*` with the run's context active inside: same values, same endings. */
const RUN = createContextKey('run');
const runContext = ROOT_CONTEXT.setValue(RUN, 'r1');
const manager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  context.setGlobalContextManager(manager.enable());
});
afterAll(() => {
  context.disable();
});

async function* inner(log: string[]): AsyncGenerator<string, string> {
  try {
    for (let index = 0; index < 3; index += 1) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      log.push(`step ${index} in ${String(context.active().getValue(RUN))}`);
      try {
        yield `value ${index}`;
      } catch (error) {
        log.push(`caught ${(error as Error).message}`);
      }
    }
    return 'done';
  } finally {
    log.push('closed');
  }
}

describe('inRunContext', () => {
  it('yields what the inner generator yields and returns its value, the run context active inside', async () => {
    const log: string[] = [];
    const wrapped = inRunContext(runContext, inner(log));
    const values: string[] = [];
    let result: IteratorResult<string, string>;
    while (!(result = await wrapped.next()).done) values.push(result.value);
    expect(values).toEqual(['value 0', 'value 1', 'value 2']);
    expect(result.value).toBe('done');
    expect(log).toEqual(['step 0 in r1', 'step 1 in r1', 'step 2 in r1', 'closed']);
    expect(context.active().getValue(RUN)).toBeUndefined();
  });

  it('closes the inner generator when the caller stops reading, and throws a throw into it', async () => {
    const stopped: string[] = [];
    const early = inRunContext(runContext, inner(stopped));
    await early.next();
    await early.return('stopped');
    expect(stopped).toEqual(['step 0 in r1', 'closed']);

    const thrown: string[] = [];
    const wrapped = inRunContext(runContext, inner(thrown));
    await wrapped.next();
    expect((await wrapped.throw(new Error('boom'))).value).toBe('value 1');
    expect(thrown).toEqual(['step 0 in r1', 'caught boom', 'step 1 in r1']);
    await wrapped.return('stopped');
  });
});
