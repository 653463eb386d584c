import { allInOneModules } from '@hangar/all-in-one';
import { parseSseFrames, startHangar, startMockOpenAI, TEST_TOKEN, type HangarUnderTest, type MockOpenAI } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The provider kinds on their own wire formats, against the mock upstream over real HTTP: OpenAI
 * (chat completions, bearer key), Anthropic (Messages events, x-api-key, required max_tokens) and
 * Azure OpenAI (v1 surface under /openai/v1, api-key header, deployment as model).
 */

let mock: MockOpenAI;
let hangar: HangarUnderTest;

async function runFrames(agentName: string, message: string) {
  const response = await fetch(`${hangar.url}/api/agents/${agentName}/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message }),
  });
  expect(response.status).toBe(200);
  return parseSseFrames(await response.text());
}

const streamedText = (frames: Array<{ event?: string; data: any }>) =>
  frames
    .filter((frame) => frame.event === 'update' && frame.data.type === 'text-delta')
    .map((frame) => frame.data.text)
    .join('');

const lastCallTo = (model: string) => mock.requests.filter((request) => request.model === model).at(-1)!;

beforeAll(async () => {
  mock = await startMockOpenAI();
  const origin = new URL(mock.url).origin;
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Providers: {
        openai: { Kind: 'OpenAI', Endpoint: mock.url, ApiKey: 'sk-openai-test' },
        anthropic: { Kind: 'Anthropic', Endpoint: mock.url, ApiKey: 'sk-ant-test' },
        azure: { Kind: 'AzureOpenAI', Endpoint: origin, ApiKey: 'azure-test-key', DefaultDeployment: 'default-deployment' },
        responses: { Kind: 'OpenAICompatible', Endpoint: mock.url, ApiKey: 'compat-key', EnableResponsesSurface: true },
      },
      Pricing: { Currency: 'USD', anthropic: { 'claude-priced': { Input: 3, Output: 15, CachedInput: 0.3 } } },
    },
  });
  for (const [name, provider, model, tools] of [
    ['via-openai', 'openai', 'gpt-test', []],
    ['via-anthropic', 'anthropic', 'claude-test', []],
    ['anthropic-priced', 'anthropic', 'claude-priced', []],
    ['anthropic-tools', 'anthropic', 'claude-tools', ['clock']],
    ['via-azure', 'azure', 'my-deployment', []],
    ['azure-tools', 'azure', 'azure-tools', ['clock']],
    ['via-responses', 'responses', 'resp-model', ['clock']],
  ] as const) {
    const created = await hangar.request('POST', '/api/agents', {
      body: { name, instructions: 'Answer briefly.', model: { provider, model }, tools },
    });
    expect(created.status, created.text).toBe(201);
  }
  const created = await hangar.request('POST', '/api/agents', {
    body: {
      name: 'anthropic-then-azure',
      model: { provider: 'anthropic', model: 'claude-down', fallbacks: [{ provider: 'azure', model: 'rescue-deployment' }] },
    },
  });
  expect(created.status, created.text).toBe(201);
  const clockThenAnswer = (request: { messages: Array<{ role: string }> }) =>
    request.messages.some((message) => message.role === 'tool')
      ? { text: 'It is tea time.' }
      : { toolCall: { name: 'clock', args: { timeZone: 'Europe/London' } } };
  mock.script('gpt-test', [{ text: 'openai says hi', usage: { prompt: 12, completion: 3, cached: 4, reasoning: 1 } }]);
  mock.script('claude-test', [{ text: 'anthropic says hi', usage: { prompt: 20, completion: 4 } }]);
  mock.script('claude-priced', [{ text: 'priced', usage: { prompt: 1000, completion: 100, cached: 400 } }]);
  mock.script('claude-tools', clockThenAnswer);
  mock.script('azure-tools', clockThenAnswer);
  mock.script('my-deployment', [{ text: 'azure says hi', usage: { prompt: 8, completion: 3 } }]);
  mock.script('resp-model', (request) =>
    request.messages.some((message) => message.role === 'tool')
      ? { text: 'Responses surface answer.', usage: { prompt: 30, completion: 4, cached: 10, reasoning: 2 } }
      : { toolCall: { name: 'clock', args: { timeZone: 'UTC' } } },
  );
  mock.script('claude-down', [{ status: 529 }]);
  mock.script('rescue-deployment', [{ text: 'rescued by azure' }]);
});

afterAll(async () => {
  await hangar?.stop();
  await mock?.close();
});

describe('OpenAI', () => {
  it('streams chat completions with a bearer key and takes cached and reasoning tokens from the report', async () => {
    const frames = await runFrames('via-openai', 'hello openai');
    expect(streamedText(frames)).toBe('openai says hi');
    expect(frames.at(-1)!.data.usage).toEqual({
      inputTokens: 12,
      outputTokens: 3,
      cachedInputTokens: 4,
      reasoningTokens: 1,
      totalTokens: 15,
    });
    const call = lastCallTo('gpt-test');
    expect(call.protocol).toBe('openai-chat');
    expect(call.path).toBe('/v1/chat/completions');
    expect(call.headers.authorization).toBe('Bearer sk-openai-test');
    expect(call.raw).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });
});

describe('Anthropic', () => {
  it('speaks the Messages protocol: x-api-key, version header, system apart, max_tokens from DefaultMaxOutputTokens', async () => {
    const frames = await runFrames('via-anthropic', 'hello claude');
    expect(streamedText(frames)).toBe('anthropic says hi');
    expect(frames.at(-1)!.data).toMatchObject({ status: 'Completed', usage: { inputTokens: 20, outputTokens: 4, totalTokens: 24 } });
    const call = lastCallTo('claude-test');
    expect(call.protocol).toBe('anthropic-messages');
    expect(call.path).toBe('/v1/messages');
    expect(call.headers['x-api-key']).toBe('sk-ant-test');
    expect(call.headers['anthropic-version']).toEqual(expect.any(String));
    expect(call.headers.authorization).toBeUndefined();
    expect(call.raw).toMatchObject({ stream: true, max_tokens: 4096, system: [{ type: 'text', text: 'Answer briefly.' }] });
    expect(call.raw.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hello claude' }] }]);
  });

  it('counts cache reads as cached input and prices them by the SPEC rule', async () => {
    const done = (await runFrames('anthropic-priced', 'price me')).at(-1)!.data;
    expect(done.usage).toMatchObject({ inputTokens: 1000, cachedInputTokens: 400, outputTokens: 100 });
    expect(done.cost.currency).toBe('USD');
    expect(done.cost.input).toBeCloseTo((600 * 3) / 1e6, 12);
    expect(done.cost.cachedInput).toBeCloseTo((400 * 0.3) / 1e6, 12);
    expect(done.cost.output).toBeCloseTo((100 * 15) / 1e6, 12);
  });

  it('runs the tool loop with tool_use and tool_result blocks', async () => {
    const frames = await runFrames('anthropic-tools', 'what time is it in London?');
    const updates = frames.filter((frame) => frame.event === 'update').map((frame) => frame.data);
    expect(updates[0]).toMatchObject({ type: 'tool-call', toolName: 'clock', args: { timeZone: 'Europe/London' } });
    expect(streamedText(frames)).toBe('It is tea time.');
    const [first, second] = mock.requests.filter((request) => request.model === 'claude-tools').slice(-2);
    expect(first.raw.tools).toEqual([expect.objectContaining({ name: 'clock', input_schema: expect.any(Object) })]);
    const toolUse = second.raw.messages[1].content.find((block: any) => block.type === 'tool_use');
    const toolResult = second.raw.messages[2].content.find((block: any) => block.type === 'tool_result');
    expect(toolUse).toMatchObject({ name: 'clock', input: { timeZone: 'Europe/London' } });
    expect(toolResult.tool_use_id).toBe(toolUse.id);
    expect(JSON.stringify(toolResult.content)).toContain('Europe/London');
  });

  it('falls back from an overloaded Anthropic model to an Azure deployment', async () => {
    const frames = await runFrames('anthropic-then-azure', 'anyone there?');
    expect(streamedText(frames)).toBe('rescued by azure');
    const record = await hangar.request('GET', `/api/runs/${frames.at(-1)!.data.runId}`);
    expect(record.body).toMatchObject({ status: 'Completed', modelProvider: 'azure', model: 'rescue-deployment' });
    expect(mock.callsTo('claude-down')).toBeGreaterThanOrEqual(1);
  });
});

describe('Azure OpenAI', () => {
  it('calls the v1 surface under /openai/v1 with the api-key header and the deployment as model', async () => {
    const frames = await runFrames('via-azure', 'hello azure');
    expect(streamedText(frames)).toBe('azure says hi');
    expect(frames.at(-1)!.data.usage).toMatchObject({ inputTokens: 8, outputTokens: 3 });
    const call = lastCallTo('my-deployment');
    expect(call.protocol).toBe('openai-chat');
    expect(call.path).toBe('/openai/v1/chat/completions');
    expect(call.headers['api-key']).toBe('azure-test-key');
    expect(call.headers.authorization).toBeUndefined();
  });

  it('runs the tool loop over the Azure surface', async () => {
    const frames = await runFrames('azure-tools', 'time?');
    expect(streamedText(frames)).toBe('It is tea time.');
    const second = lastCallTo('azure-tools');
    expect(second.messages.find((message) => message.role === 'tool')?.content).toContain('Europe/London');
  });
});

describe('OpenAI-compatible with EnableResponsesSurface', () => {
  it('calls /responses, runs the tool loop with function_call items and reads usage from response.completed', async () => {
    const frames = await runFrames('via-responses', 'time via responses?');
    expect(streamedText(frames)).toBe('Responses surface answer.');
    expect(frames.at(-1)!.data.usage).toMatchObject({ cachedInputTokens: 10, reasoningTokens: 2 });
    const calls = mock.requests.filter((request) => request.model === 'resp-model').slice(-2);
    expect(calls.map((call) => [call.protocol, call.path])).toEqual([
      ['openai-responses', '/v1/responses'],
      ['openai-responses', '/v1/responses'],
    ]);
    expect(calls[0].headers.authorization).toBe('Bearer compat-key');
    expect(calls[0].raw.tools).toEqual([expect.objectContaining({ type: 'function', name: 'clock' })]);
    const output = calls[1].raw.input.find((item: any) => item.type === 'function_call_output');
    expect(output.call_id).toBe('call_' + (mock.requests.indexOf(calls[0]) + 1));
    expect(output.output).toContain('"timeZone":"UTC"');
  });
});
