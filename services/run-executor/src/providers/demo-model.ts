import type { LanguageModelV2, LanguageModelV2CallOptions, LanguageModelV2Prompt, LanguageModelV2StreamPart } from '@ai-sdk/provider';

/**
 * The offline `Demo` provider: deterministic, no network. It echoes the last user message, and
 * when the agent has the `clock` tool and the user asks for the time or date it calls the tool and
 * reports the result. Token counts are whitespace-separated words, so usage is predictable.
 */
const words = (text: string) => (text.trim() ? text.trim().split(/\s+/).length : 0);

function promptText(prompt: LanguageModelV2Prompt): string {
  return prompt
    .map((message) =>
      typeof message.content === 'string' ? message.content : message.content.map((part) => ('text' in part ? part.text : '')).join(' '),
    )
    .join(' ');
}

type Plan = { kind: 'text'; text: string } | { kind: 'tool'; toolName: string; input: string };

function plan(options: LanguageModelV2CallOptions): Plan {
  const last = options.prompt[options.prompt.length - 1];
  if (last?.role === 'tool') {
    const results = last.content.map((part) => JSON.stringify(part.output.type === 'json' ? part.output.value : part.output.value));
    return { kind: 'text', text: `The ${last.content[0]?.toolName ?? 'tool'} tool says: ${results.join(', ')}` };
  }
  const lastUser = [...options.prompt].reverse().find((message) => message.role === 'user');
  const text = lastUser ? promptText([lastUser]) : '';
  const hasClock = options.tools?.some((tool) => tool.name === 'clock');
  if (hasClock && /\b(time|date)\b/i.test(text)) return { kind: 'tool', toolName: 'clock', input: '{}' };
  return { kind: 'text', text: text ? `Echo: ${text}` : 'Hello from the Demo provider.' };
}

export function createDemoModel(modelId: string): LanguageModelV2 {
  const usageOf = (options: LanguageModelV2CallOptions, output: string) => {
    const inputTokens = words(promptText(options.prompt));
    const outputTokens = words(output);
    return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, cachedInputTokens: 0, reasoningTokens: 0 };
  };
  return {
    specificationVersion: 'v2',
    provider: 'demo',
    modelId,
    supportedUrls: {},
    async doGenerate(options) {
      const next = plan(options);
      if (next.kind === 'tool') {
        return {
          content: [{ type: 'tool-call', toolCallId: 'demo-call-1', toolName: next.toolName, input: next.input }],
          finishReason: 'tool-calls',
          usage: usageOf(options, next.input),
          warnings: [],
        };
      }
      return { content: [{ type: 'text', text: next.text }], finishReason: 'stop', usage: usageOf(options, next.text), warnings: [] };
    },
    async doStream(options) {
      const next = plan(options);
      const parts: LanguageModelV2StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      if (next.kind === 'tool') {
        parts.push({ type: 'tool-call', toolCallId: 'demo-call-1', toolName: next.toolName, input: next.input });
        parts.push({ type: 'finish', finishReason: 'tool-calls', usage: usageOf(options, next.input) });
      } else {
        parts.push({ type: 'text-start', id: 't' });
        for (const piece of next.text.match(/\S+\s*/g) ?? []) parts.push({ type: 'text-delta', id: 't', delta: piece });
        parts.push({ type: 'text-end', id: 't' });
        parts.push({ type: 'finish', finishReason: 'stop', usage: usageOf(options, next.text) });
      }
      return {
        stream: new ReadableStream<LanguageModelV2StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
}
