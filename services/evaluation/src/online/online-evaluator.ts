import { createHash } from 'node:crypto';
import type { Caller, Logger } from '@hangar/platform';
import type { CaseRunner, JudgedRun, RunRecords } from '../clients/ports.js';
import { judgePrompt, parseJudgeReply } from '../suites/graders.js';
import type { OnlineRepository } from './online.repository.js';

export interface OnlineEvaluationSettings {
  enabled: boolean;
  sampleRate: number;
  maxScoresPerHour: number;
  /** Empty: every agent. */
  agentNames: string[];
  judgeAgent: string | null;
  judgeTimeoutMs: number;
  windowMs: number;
  lowScoreThreshold: number;
  minSampleSize: number;
}

/** The name of the run score online evaluation saves. */
export const ONLINE_SCORE_NAME = 'online';
/** Runs online evaluation never samples: its own judges' runs and eval suites' runs. */
const UNSAMPLED_KINDS = new Set(['Evaluation']);

/** The same answer for a run on every instance and every delivery: the run id's hash against the rate. */
export function sampled(runId: string, rate: number): boolean {
  if (rate <= 0) return false;
  if (rate >= 1) return true;
  return createHash('sha256').update(runId).digest().readUInt32BE(0) / 0x1_0000_0000 < rate;
}

/**
 * Online evaluation (OnlineEvaluation:*): each completed run heard on the run events log is sampled
 * by `SampleRate` (among `AgentNames`, never an Evaluation run), claimed once, counted against the
 * tenant's `MaxScoresPerHour`, and judged by the judge agent within `JudgeTimeout`; the score is
 * saved on the run as source `Evaluator` and kept here for the summary per agent.
 */
export function createOnlineEvaluator(deps: {
  repository: OnlineRepository;
  runner: CaseRunner;
  records: RunRecords;
  logger: Logger;
  settings: OnlineEvaluationSettings;
}) {
  const { repository, runner, records, logger, settings } = deps;
  const active = settings.enabled && settings.sampleRate > 0 && settings.judgeAgent !== null;
  const eligible = (agentName: string) => settings.agentNames.length === 0 || settings.agentNames.includes(agentName);

  /** Judges one completed run; a judge that fails or gives no score leaves the run unscored (and its claim given up). */
  async function judge(event: { tenantId: string; runId: string; agentName: string }): Promise<void> {
    const caller: Caller = { tenantId: event.tenantId, actor: 'online-evaluation' };
    const run = await records.read(caller, event.runId);
    const output = run.output;
    if (UNSAMPLED_KINDS.has(run.kind) || run.status !== 'Completed' || output === undefined) return;
    if (!(await repository.claim({ ...event, agentVersion: run.agentVersion }))) return;
    if (!(await repository.reserve(event.tenantId, settings.maxScoresPerHour))) {
      await repository.release(event.runId);
      return;
    }
    try {
      await judgeClaimed(caller, event, { ...run, output });
    } catch (error) {
      // Given up, so that the event, delivered again, is judged then.
      await repository.release(event.runId).catch(() => {});
      throw error;
    }
  }

  async function judgeClaimed(caller: Caller, event: { runId: string }, run: JudgedRun & { output: string }): Promise<void> {
    const evalCase = { id: event.runId, input: run.input ?? '(not recorded)', parameters: {}, graders: [] };
    const grader = { kind: 'judge' as const, agent: settings.judgeAgent! };
    const verdict = await runner
      .run(
        caller,
        { agentName: grader.agent, input: judgePrompt(grader, evalCase, run.output), parameters: {} },
        AbortSignal.timeout(settings.judgeTimeoutMs),
      )
      .catch((error: Error) => ({ completed: false as const, error: error.message, output: '', runId: undefined }));
    const parsed = verdict.completed ? parseJudgeReply(verdict.output) : undefined;
    if (!parsed) {
      await repository.release(event.runId);
      logger.warn(
        { runId: event.runId, judge: grader.agent, error: verdict.completed ? 'no score in its reply' : verdict.error },
        'online evaluation: the judge gave no score',
      );
      return;
    }
    await records.score(caller, event.runId, { name: ONLINE_SCORE_NAME, value: parsed.score, comment: parsed.reason });
    await repository.record(event.runId, { score: parsed.score, reason: parsed.reason, judgeRunId: verdict.runId ?? null });
  }

  return {
    active,
    /** A run event from the log; anything but a sampled run's completion is ignored. */
    async heard(event: { type: string; tenantId: string; runId: string; agentName: string }): Promise<void> {
      if (!active || event.type !== 'run.completed' || !eligible(event.agentName) || !sampled(event.runId, settings.sampleRate)) return;
      await judge(event);
    },

    /** Each agent's scores over the window, with whether it runs low (enough samples, a mean below the threshold). */
    async summary(caller: Caller) {
      const agents = await repository.summary(caller.tenantId, new Date(Date.now() - settings.windowMs));
      return agents.map((agent) => ({
        ...agent,
        low: agent.samples >= settings.minSampleSize && agent.meanScore < settings.lowScoreThreshold,
      }));
    },
  };
}

export type OnlineEvaluator = ReturnType<typeof createOnlineEvaluator>;
