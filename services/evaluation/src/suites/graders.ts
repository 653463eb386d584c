import { runInNewContext } from 'node:vm';
import { Ajv, type ValidateFunction } from 'ajv';
import { RECORD_NAME, type FieldError } from '@hangar/platform';
import { GRADER_KINDS, type EvalCase, type GraderResult, type GraderSpec } from './eval.model.js';

/** What a judge agent said of an answer: a score from 0 to 100 and why. */
export type Judge = (grader: Extract<GraderSpec, { kind: 'judge' }>, evalCase: EvalCase, output: string) => Promise<JudgeVerdict>;
export interface JudgeVerdict {
  score: number;
  reason: string;
  runId?: string;
}

/** A judge's passing score when its grader names none (as `OnlineEvaluation:LowScoreThreshold`'s default). */
export const DEFAULT_JUDGE_THRESHOLD = 60;

// Schemas are compiled once per distinct schema; strict off: a suite's schema may carry annotations ajv does not know.
const ajv = new Ajv({ strict: false, allErrors: false });
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 1000;

function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, validate);
  }
  return validate;
}

/** Why a case's graders cannot grade (each with its path in the suite), or none. */
export function graderErrors(evalCase: EvalCase, path: string): FieldError[] {
  return evalCase.graders.flatMap((grader, index): FieldError[] => {
    const at = `${path}.graders[${index}]`;
    switch (grader.kind) {
      case 'exact':
      case 'contains':
        return grader.value === undefined && evalCase.expected === undefined
          ? [{ path: `${at}.value`, message: 'is required when the case has no expected answer' }]
          : [];
      case 'regex':
        if (!grader.pattern) return [{ path: `${at}.pattern`, message: 'is required' }];
        try {
          new RegExp(grader.pattern, grader.flags);
          return [];
        } catch (error) {
          return [{ path: `${at}.pattern`, message: `is not a valid regular expression: ${(error as Error).message}` }];
        }
      case 'jsonSchema':
        if (!grader.schema || typeof grader.schema !== 'object') return [{ path: `${at}.schema`, message: 'is required' }];
        try {
          compileSchema(grader.schema);
          return [];
        } catch (error) {
          return [{ path: `${at}.schema`, message: `is not a valid JSON Schema: ${(error as Error).message}` }];
        }
      case 'judge':
        return [
          ...(RECORD_NAME.test(grader.agent ?? '') ? [] : [{ path: `${at}.agent`, message: 'must name an agent' }]),
          ...(grader.threshold === undefined || (grader.threshold >= 0 && grader.threshold <= 100)
            ? []
            : [{ path: `${at}.threshold`, message: 'must be from 0 to 100' }]),
        ];
      default:
        return [{ path: `${at}.kind`, message: `must be one of ${GRADER_KINDS.join(', ')}` }];
    }
  });
}

/** How long a suite's pattern may run on one answer: a pattern that backtracks without end must not hold the service. */
const REGEX_TIMEOUT_MS = 1000;

/** Whether `pattern` matches `text`, or undefined when it ran out of time (a context of its own, whose timeout interrupts the match). */
function regexMatches(pattern: string, flags: string | undefined, text: string): boolean | undefined {
  try {
    return runInNewContext('new RegExp(pattern, flags).test(text)', { pattern, flags, text }, { timeout: REGEX_TIMEOUT_MS }) as boolean;
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return undefined;
    throw error;
  }
}

const normalized = (text: string, ignoreCase: boolean | undefined) => (ignoreCase ? text.trim().toLowerCase() : text.trim());
const verdict = (kind: GraderSpec['kind'], passed: boolean, reason: string): GraderResult => ({
  kind,
  passed,
  score: passed ? 1 : 0,
  reason,
});

/** The grade of one answer by one grader; a judge is asked through `judge`. */
export async function grade(grader: GraderSpec, evalCase: EvalCase, output: string, judge: Judge): Promise<GraderResult> {
  switch (grader.kind) {
    case 'exact': {
      const expected = grader.value ?? evalCase.expected!;
      const passed = normalized(output, grader.ignoreCase) === normalized(expected, grader.ignoreCase);
      return verdict('exact', passed, passed ? 'the answer is the expected text' : 'the answer differs from the expected text');
    }
    case 'contains': {
      const expected = grader.value ?? evalCase.expected!;
      const passed = normalized(output, grader.ignoreCase).includes(normalized(expected, grader.ignoreCase));
      return verdict('contains', passed, passed ? 'the answer contains the expected text' : 'the expected text is not in the answer');
    }
    case 'regex': {
      const passed = regexMatches(grader.pattern, grader.flags, output);
      if (passed === undefined) return verdict('regex', false, `/${grader.pattern}/ took longer than ${REGEX_TIMEOUT_MS} ms on the answer`);
      return verdict('regex', passed, passed ? `the answer matches /${grader.pattern}/` : `the answer does not match /${grader.pattern}/`);
    }
    case 'jsonSchema': {
      let value: unknown;
      try {
        value = JSON.parse(output);
      } catch {
        return verdict('jsonSchema', false, 'the answer is not JSON');
      }
      const validate = compileSchema(grader.schema);
      if (validate(value)) return verdict('jsonSchema', true, 'the answer satisfies the schema');
      const [first] = validate.errors ?? [];
      return verdict(
        'jsonSchema',
        false,
        `the answer does not satisfy the schema: ${first?.instancePath || '/'} ${first?.message ?? ''}`.trim(),
      );
    }
    case 'judge': {
      const { score, reason } = await judge(grader, evalCase, output);
      const threshold = grader.threshold ?? DEFAULT_JUDGE_THRESHOLD;
      return { kind: 'judge', passed: score >= threshold, score: score / 100, reason };
    }
  }
}

/** The prompt a judge agent answers: the case, the answer and the rubric, asking for JSON. */
export function judgePrompt(grader: Extract<GraderSpec, { kind: 'judge' }>, evalCase: EvalCase, output: string): string {
  return [
    'Grade the answer an AI agent gave. Reply with JSON only: {"score": <0 to 100>, "reason": "<one sentence>"}.',
    grader.rubric ? `Rubric: ${grader.rubric}` : 'Rubric: how well the answer does what the input asks.',
    `Input: ${evalCase.input}`,
    ...(evalCase.expected !== undefined ? [`Expected answer: ${evalCase.expected}`] : []),
    `Answer: ${output}`,
  ].join('\n\n');
}

/** The score and reason in a judge's reply: its JSON object, or else the first number in it; undefined when it gave none. */
export function parseJudgeReply(reply: string): { score: number; reason: string } | undefined {
  const json = reply.match(/\{[\s\S]*\}/)?.[0];
  if (json) {
    try {
      const parsed = JSON.parse(json) as { score?: unknown; reason?: unknown };
      if (typeof parsed.score === 'number' && Number.isFinite(parsed.score)) {
        return { score: clampScore(parsed.score), reason: typeof parsed.reason === 'string' ? parsed.reason : '' };
      }
    } catch {
      // not JSON after all: look for a number below
    }
  }
  const number = reply.match(/-?\d+(\.\d+)?/)?.[0];
  return number === undefined ? undefined : { score: clampScore(Number(number)), reason: reply.trim().slice(0, 500) };
}

const clampScore = (score: number) => Math.min(100, Math.max(0, score));
