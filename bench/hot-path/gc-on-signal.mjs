// Preloaded (NODE_OPTIONS=--import) into the processes whose memory the idle-streams workload reads:
// SIGUSR2 runs a full garbage collection, so an RSS reading is not blurred by garbage not yet collected.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');
process.on('SIGUSR2', () => gc());
