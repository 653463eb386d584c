import { decideRunApproval, listRunApprovals } from './run-approvals.routes.js';
import { streamRunEvents } from './run-events.routes.js';
import { deleteRunFeedback, listRunFeedback, saveRunFeedback } from './run-feedback.routes.js';
import { cancelRun, getRun, getRunInput, getRunTree, listRuns } from './run-records.routes.js';
import { runAgent } from './run-start.routes.js';
import { getRunTrace } from './run-trace.routes.js';

/** Every run route, in registration order (which is also their order in the OpenAPI document). */
export const runRoutes = [
  runAgent,
  listRuns,
  getRun,
  getRunTree,
  getRunTrace,
  cancelRun,
  saveRunFeedback,
  listRunFeedback,
  deleteRunFeedback,
  listRunApprovals,
  decideRunApproval,
  getRunInput,
  streamRunEvents,
];
