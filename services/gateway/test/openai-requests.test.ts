import { HangarError } from '@hangar/platform';
import { describe, expect, it } from 'vitest';
import { openAIErrorBody } from '../src/http/openai-error.js';
import { problemBody } from '../src/http/problem.js';
import { checkRequestFields, turnsOfChatMessages, turnsOfResponseInput } from '../src/routes/openai/openai-requests.js';
import { responseIdOf, runIdOfResponse } from '../src/routes/openai/response-objects.js';

/** The rules of the OpenAI-compatible routes that need no gateway: what a request may bring, ids, error bodies. */

const fieldErrorOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(HangarError);
    return { status: (error as HangarError).status, path: ((error as HangarError).extensions.errors as any[])?.[0]?.path };
  }
  throw new Error('expected a refusal');
};

describe('request fields', () => {
  const fields = { handled: ['model', 'messages'], ignored: ['temperature', 'seed'], refused: { tools: 'tools come from the agent' } };

  it('names the ignored fields present, skipping null and absent ones', () => {
    expect(checkRequestFields({ model: 'a', messages: [], temperature: 0.1, seed: null }, fields)).toEqual(['temperature']);
  });

  it('refuses a field that would change the agent, and an unknown one, naming it', () => {
    expect(fieldErrorOf(() => checkRequestFields({ model: 'a', tools: [] }, fields))).toEqual({ status: 400, path: 'tools' });
    expect(fieldErrorOf(() => checkRequestFields({ model: 'a', bananas: 1 }, fields))).toEqual({ status: 400, path: 'bananas' });
  });
});

describe('conversation turns', () => {
  it('reads chat messages: developer is a system turn, text parts are joined', () => {
    expect(
      turnsOfChatMessages([
        { role: 'developer', content: 'be brief' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        { role: 'assistant', content: null },
      ]),
    ).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'ab' },
      { role: 'assistant', content: '' },
    ]);
  });

  it('refuses tool turns, assistant tool calls, non-text parts and an empty conversation', () => {
    expect(fieldErrorOf(() => turnsOfChatMessages([{ role: 'tool', content: 'x', tool_call_id: '1' }]))).toEqual({
      status: 400,
      path: 'messages[0].role',
    });
    expect(fieldErrorOf(() => turnsOfChatMessages([{ role: 'assistant', content: '', tool_calls: [{}] }])).path).toBe('messages[0].role');
    expect(fieldErrorOf(() => turnsOfChatMessages([{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }])).path).toBe(
      'messages[0].content[0].type',
    );
    expect(fieldErrorOf(() => turnsOfChatMessages([])).path).toBe('messages');
  });

  it('reads Responses input: a string, or message items with input_text/output_text parts', () => {
    expect(turnsOfResponseInput('hi')).toEqual([{ role: 'user', content: 'hi' }]);
    expect(
      turnsOfResponseInput([
        { role: 'user', content: [{ type: 'input_text', text: 'q' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'a' }] },
      ]),
    ).toEqual([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a' },
    ]);
    expect(fieldErrorOf(() => turnsOfResponseInput([{ type: 'function_call_output', call_id: '1', output: 'x' }])).path).toBe('input[0]');
    // An earlier answer referred to by its item id is resolved by the route.
    expect(turnsOfResponseInput([{ type: 'item_reference', id: 'msg_1' }])).toEqual([{ reference: 'msg_1' }]);
  });
});

describe('response ids', () => {
  it('spell a run id as resp_ and 32 hex digits and read it back; anything else names no run', () => {
    const runId = '0b3f2c1e-5a6d-4e7f-8a9b-0c1d2e3f4a5b';
    expect(responseIdOf(runId)).toBe('resp_0b3f2c1e5a6d4e7f8a9b0c1d2e3f4a5b');
    expect(runIdOfResponse(responseIdOf(runId))).toBe(runId);
    for (const other of ['resp_xyz', 'resp_0B3F2C1E5A6D4E7F8A9B0C1D2E3F4A5B', runId, 'chatcmpl-0b3f2c1e5a6d4e7f8a9b0c1d2e3f4a5b', ''])
      expect(runIdOfResponse(other)).toBeUndefined();
  });
});

describe('OpenAI error body', () => {
  const request = { originalUrl: '/v1/chat/completions' } as any;

  it('keeps the status’s meaning in type, the errorType as code and the first invalid field as param', () => {
    const invalid = problemBody(request, 400, 'validation_failed', 'the request body is not valid', {
      errors: [{ path: 'messages', message: 'is required' }],
    });
    expect(openAIErrorBody(invalid)).toEqual({
      error: {
        message: 'the request body is not valid: messages is required',
        type: 'invalid_request_error',
        code: 'validation_failed',
        param: 'messages',
      },
    });
    const types = [401, 403, 404, 429, 503].map((status) => openAIErrorBody(problemBody(request, status, 'x', 'd')).error.type);
    expect(types).toEqual(['authentication_error', 'permission_error', 'invalid_request_error', 'rate_limit_error', 'server_error']);
  });
});
