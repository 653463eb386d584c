import { randomUUID } from 'node:crypto';
import {
  conflict,
  HangarError,
  notFound,
  RECORD_NAME,
  RECORD_NAME_RULE,
  validationError,
  type Caller,
  type FieldError,
} from '@hangar/platform';
import type { AgentVersions } from '../clients/ports.js';
import type { EvaluationRepository } from './eval.repository.js';
import { graderErrors } from './graders.js';
import type { CaseResult, CaseStatus, EvalCase, GraderSpec, SuiteRecord, SuiteRunRecord } from './eval.model.js';

/** Limits of one suite: its cases are stored as one value and copied into each run of it. */
export const MAX_CASES = 1000;
const MAX_DESCRIPTION = 2000;
const MAX_INPUT = 100_000;
/** `GET /api/evals/online` is online evaluation's summary, so no suite can have that name. */
const RESERVED_NAMES = new Set(['online']);
/** How many runs of a suite a listing shows. */
const LISTED_RUNS = 100;

export interface SuiteInput {
  description: string;
  cases: Array<Omit<EvalCase, 'id' | 'graders'> & { id?: string; graders: GraderSpec[] }>;
}

export interface CaseComparison {
  caseId: string;
  base?: { status: CaseStatus; score: number };
  head?: { status: CaseStatus; score: number };
  change: 'Improved' | 'Regressed' | 'Unchanged' | 'Added' | 'Removed';
}

/** A case with its id and graders settled: `case-<n>` by default, and `exact` on `expected` when it names no grader. */
function settledCases(input: SuiteInput['cases']): { cases: EvalCase[]; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  const cases = input.map((entry, index): EvalCase => {
    const path = `cases[${index}]`;
    const id = entry.id ?? `case-${index + 1}`;
    if (!RECORD_NAME.test(id)) errors.push({ path: `${path}.id`, message: RECORD_NAME_RULE });
    else if (seen.has(id)) errors.push({ path: `${path}.id`, message: `"${id}" names another case too` });
    seen.add(id);
    if (!entry.input.trim()) errors.push({ path: `${path}.input`, message: 'is required' });
    if (entry.input.length > MAX_INPUT) errors.push({ path: `${path}.input`, message: `is over ${MAX_INPUT} characters` });
    const graders: GraderSpec[] = entry.graders.length ? entry.graders : entry.expected !== undefined ? [{ kind: 'exact' }] : [];
    if (!graders.length) errors.push({ path: `${path}.graders`, message: 'a case without an expected answer needs a grader' });
    const settled = { id, input: entry.input, parameters: entry.parameters, expected: entry.expected, graders };
    errors.push(...graderErrors(settled, path));
    return settled;
  });
  return { cases, errors };
}

const changeOf = (base: CaseResult | undefined, head: CaseResult | undefined): CaseComparison['change'] => {
  if (!base) return 'Added';
  if (!head) return 'Removed';
  const rank = (result: CaseResult) => (result.status === 'Passed' ? 2 : result.status === 'Failed' ? 1 : 0);
  if (rank(head) !== rank(base)) return rank(head) > rank(base) ? 'Improved' : 'Regressed';
  if (Math.abs(head.score - base.score) < 1e-9) return 'Unchanged';
  return head.score > base.score ? 'Improved' : 'Regressed';
};

/** Eval suites and their runs: the rules; SQL in the repository, execution in the suite worker. */
export function createEvaluationService(deps: {
  repository: EvaluationRepository;
  agents: AgentVersions;
  /** Tells this instance's worker that a suite run is waiting (any instance would take it at its next poll). */
  wake(): void;
  /** Stops this instance's cases of a canceled suite run at once (another holder stops at its next heartbeat). */
  stopCanceled(id: string): void;
}) {
  const { repository } = deps;

  async function suiteOf(caller: Caller, name: string): Promise<SuiteRecord> {
    const suite = RECORD_NAME.test(name) ? await repository.getSuite(caller.tenantId, name) : undefined;
    if (!suite) throw notFound(`eval suite "${name}" not found`);
    return suite;
  }

  /** A suite run of the caller's tenant (of `suite`, when named). */
  async function runOf(caller: Caller, id: string, suite?: string) {
    const found = await repository.getRun(caller.tenantId, id);
    if (!found || (suite !== undefined && found.run.suite !== suite)) throw notFound(`eval run "${id}" not found`);
    return found;
  }

  return {
    async putSuite(caller: Caller, name: string, input: SuiteInput): Promise<{ suite: SuiteRecord; created: boolean }> {
      const errors: FieldError[] = [];
      if (!RECORD_NAME.test(name)) errors.push({ path: 'name', message: RECORD_NAME_RULE });
      else if (RESERVED_NAMES.has(name)) errors.push({ path: 'name', message: `"${name}" is reserved (GET /api/evals/${name})` });
      if (input.description.length > MAX_DESCRIPTION)
        errors.push({ path: 'description', message: `is over ${MAX_DESCRIPTION} characters` });
      if (input.cases.length === 0) errors.push({ path: 'cases', message: 'a suite needs a case' });
      if (input.cases.length > MAX_CASES) errors.push({ path: 'cases', message: `at most ${MAX_CASES} cases` });
      const { cases, errors: caseErrors } = settledCases(input.cases.slice(0, MAX_CASES));
      errors.push(...caseErrors);
      if (errors.length) throw validationError(`eval suite "${name}" is not valid`, errors);
      return repository.putSuite(caller.tenantId, name, input.description, cases);
    },

    getSuite: suiteOf,

    listSuites: (caller: Caller) => repository.listSuites(caller.tenantId),

    async deleteSuite(caller: Caller, name: string): Promise<void> {
      if (!RECORD_NAME.test(name) || !(await repository.deleteSuite(caller.tenantId, name)))
        throw notFound(`eval suite "${name}" not found`);
    },

    /**
     * Queues a run of the suite over the agent at `agentVersion` (its current version when absent),
     * pinned now so that a change of the agent meanwhile does not change what is measured. Every
     * judge agent the suite names must exist, or nothing is queued.
     */
    async startRun(caller: Caller, suiteName: string, agentName: string, agentVersion?: number): Promise<SuiteRunRecord> {
      const suite = await suiteOf(caller, suiteName);
      const judges = [
        ...new Set(suite.cases.flatMap((entry) => entry.graders.flatMap((grader) => (grader.kind === 'judge' ? [grader.agent] : [])))),
      ];
      const [pinned, ...judged] = await Promise.allSettled([
        deps.agents.pin(caller, agentName, agentVersion),
        ...judges.map((judge) => deps.agents.pin(caller, judge)),
      ]);
      if (pinned.status === 'rejected') throw pinned.reason;
      const missing = judges.filter((_, index) => judged[index].status === 'rejected');
      const unreachable = judged.find(
        (result) => result.status === 'rejected' && !(result.reason instanceof HangarError && result.reason.status === 404),
      );
      if (unreachable) throw (unreachable as PromiseRejectedResult).reason;
      if (missing.length) {
        throw validationError(
          `eval suite "${suiteName}" names judge agents that do not exist`,
          missing.map((judge) => ({ path: 'cases.graders.agent', message: `agent "${judge}" not found` })),
        );
      }
      const run = await repository.createRun({
        id: randomUUID(),
        tenantId: caller.tenantId,
        suite,
        agentName,
        agentVersion: pinned.value,
        caller,
      });
      deps.wake();
      return run;
    },

    getRun: (caller: Caller, id: string) => runOf(caller, id),

    /**
     * Cancels a queued or running suite run: no case of it starts after this, and the cases under
     * way are canceled with their runs. The summary stays that of the cases done. Canceling it again
     * answers it as it is; a run that ended otherwise is 409.
     */
    async cancelRun(caller: Caller, id: string): Promise<SuiteRunRecord> {
      // The cancel is scoped to the tenant, so another tenant's run is left as it is and read as 404 below.
      if (await repository.cancelRun(caller.tenantId, id)) deps.stopCanceled(id);
      const { run } = await runOf(caller, id);
      if (run.status !== 'Canceled') throw conflict(`eval run "${id}" already ended ${run.status}`);
      return run;
    },

    async listRuns(caller: Caller, suiteName: string): Promise<SuiteRunRecord[]> {
      await suiteOf(caller, suiteName);
      return repository.listRuns(caller.tenantId, suiteName, LISTED_RUNS);
    },

    /** Two runs of the suite side by side, case by case (by case id): what improved and what regressed. */
    async compare(caller: Caller, suiteName: string, baseId: string, headId: string) {
      const [base, head] = await Promise.all([runOf(caller, baseId, suiteName), runOf(caller, headId, suiteName)]);
      const baseCases = new Map(base.results.map((result) => [result.caseId, result]));
      const headCases = new Map(head.results.map((result) => [result.caseId, result]));
      const ids = [...new Set([...baseCases.keys(), ...headCases.keys()])];
      const cases = ids.map((caseId): CaseComparison => {
        const before = baseCases.get(caseId);
        const after = headCases.get(caseId);
        return {
          caseId,
          base: before && { status: before.status, score: before.score },
          head: after && { status: after.status, score: after.score },
          change: changeOf(before, after),
        };
      });
      return { base: base.run, head: head.run, cases };
    },
  };
}

export type EvaluationService = ReturnType<typeof createEvaluationService>;
