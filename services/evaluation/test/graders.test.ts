import { describe, expect, it } from 'vitest';
import type { EvalCase, GraderSpec } from '../src/suites/eval.model.js';
import { grade, graderErrors, judgePrompt, parseJudgeReply, type Judge } from '../src/suites/graders.js';

const evalCase = (graders: GraderSpec[], expected?: string): EvalCase => ({
  id: 'c',
  input: 'What is 2 + 2?',
  parameters: {},
  expected,
  graders,
});
const noJudge: Judge = () => Promise.reject(new Error('no judge in this test'));
const graded = (grader: GraderSpec, output: string, expected?: string) => grade(grader, evalCase([grader], expected), output, noJudge);

describe('graders', () => {
  it('exact compares trimmed text, with the case’s expected answer by default and case-insensitively when asked', async () => {
    expect(await graded({ kind: 'exact' }, ' 4\n', '4')).toMatchObject({ passed: true, score: 1 });
    expect(await graded({ kind: 'exact', value: 'Four' }, 'four')).toMatchObject({ passed: false, score: 0 });
    expect(await graded({ kind: 'exact', value: 'Four', ignoreCase: true }, 'four')).toMatchObject({ passed: true });
  });

  it('contains looks for the text anywhere in the answer', async () => {
    expect(await graded({ kind: 'contains' }, 'It is 4, surely.', '4')).toMatchObject({ passed: true });
    expect(await graded({ kind: 'contains', value: 'FOUR', ignoreCase: true }, 'four it is')).toMatchObject({ passed: true });
    expect(await graded({ kind: 'contains', value: '5' }, 'It is 4.')).toMatchObject({
      passed: false,
      reason: 'the expected text is not in the answer',
    });
  });

  it('regex matches with its flags, and a pattern that backtracks without end fails after its bound instead of holding the process', async () => {
    expect(await graded({ kind: 'regex', pattern: '^answer: \\d+$', flags: 'i' }, 'ANSWER: 4')).toMatchObject({ passed: true });
    expect(await graded({ kind: 'regex', pattern: '^\\d+$' }, 'four')).toMatchObject({ passed: false });
    const started = performance.now();
    const stuck = await graded({ kind: 'regex', pattern: '^(a+)+$' }, `${'a'.repeat(40)}b`);
    expect(stuck).toMatchObject({ passed: false });
    expect(stuck.reason).toMatch(/took longer than 1000 ms/);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('jsonSchema reads the answer as JSON and names the first place it breaks the schema', async () => {
    const schema = { type: 'object', required: ['total'], properties: { total: { type: 'number' } } };
    expect(await graded({ kind: 'jsonSchema', schema }, '{"total": 4}')).toMatchObject({ passed: true });
    expect(await graded({ kind: 'jsonSchema', schema }, 'four')).toMatchObject({ passed: false, reason: 'the answer is not JSON' });
    const wrong = await graded({ kind: 'jsonSchema', schema }, '{"total": "4"}');
    expect(wrong.passed).toBe(false);
    expect(wrong.reason).toContain('/total must be number');
  });

  it('judge passes at its threshold (60 by default) and scores 0 … 1', async () => {
    const judge: Judge = async () => ({ score: 70, reason: 'close' });
    const grader: GraderSpec = { kind: 'judge', agent: 'judge' };
    expect(await grade(grader, evalCase([grader]), '4', judge)).toEqual({ kind: 'judge', passed: true, score: 0.7, reason: 'close' });
    const strict: GraderSpec = { kind: 'judge', agent: 'judge', threshold: 80 };
    expect(await grade(strict, evalCase([strict]), '4', judge)).toMatchObject({ passed: false, score: 0.7 });
  });

  it('reads a judge’s score from its JSON or its first number, clamped to 0 … 100, and nothing from a reply without one', () => {
    expect(parseJudgeReply('Sure! {"score": 85, "reason": "good"}')).toEqual({ score: 85, reason: 'good' });
    expect(parseJudgeReply('{"score": 140}')).toEqual({ score: 100, reason: '' });
    expect(parseJudgeReply('I give it 42 out of 100')).toEqual({ score: 42, reason: 'I give it 42 out of 100' });
    expect(parseJudgeReply('no opinion')).toBeUndefined();
  });

  it('asks the judge with the rubric, the input, the expected answer and the answer', () => {
    const prompt = judgePrompt({ kind: 'judge', agent: 'judge', rubric: 'Correct arithmetic.' }, evalCase([], '4'), 'four');
    expect(prompt).toContain('Rubric: Correct arithmetic.');
    expect(prompt).toContain('Input: What is 2 + 2?');
    expect(prompt).toContain('Expected answer: 4');
    expect(prompt).toContain('Answer: four');
  });

  it('names every grader that cannot grade, with its path', () => {
    const graders = [
      { kind: 'exact' },
      { kind: 'regex', pattern: '(' },
      { kind: 'jsonSchema', schema: { type: 'nonsense' } },
      { kind: 'judge', agent: '' },
      { kind: 'judge', agent: 'judge', threshold: 101 },
      { kind: 'vibes' },
    ] as GraderSpec[];
    expect(graderErrors(evalCase(graders), 'cases[0]').map((error) => error.path)).toEqual([
      'cases[0].graders[0].value',
      'cases[0].graders[1].pattern',
      'cases[0].graders[2].schema',
      'cases[0].graders[3].agent',
      'cases[0].graders[4].threshold',
      'cases[0].graders[5].kind',
    ]);
    expect(graderErrors(evalCase([{ kind: 'exact' }], '4'), 'cases[0]')).toEqual([]);
  });
});
