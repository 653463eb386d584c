// First: client libraries are patched for spans as they load (see instrumentation.ts).
import '@hangar/platform/instrumentation';
import { resolveLogFormat, runMain, runtimeFile } from '@hangar/platform';
import { allInOneModules } from './all-in-one.js';
import { startBanner } from './banner.js';
import { localAuthToken, LOCAL_TOKEN_FILE } from './local-token.js';

// Without HANGAR_CONFIG the trial configuration is used: the offline Demo provider and example code agents.
const env = { HANGAR_CONFIG: runtimeFile('config/all-in-one.yaml'), ...process.env };
const localToken = localAuthToken();
const running = await runMain('all-in-one', allInOneModules, { env, defaults: { Hangar: { Api: { AuthToken: localToken } } } });

const { config, modules, logger, engines } = running;
const url = `http://${config.Gateway.Host}:${modules.running.get('Gateway')?.httpPort}${config.Hangar.Api.Prefix}`;
const tokenFile = config.Hangar.Api.AuthToken === localToken ? LOCAL_TOKEN_FILE : undefined;
const stores = { sql: engines.storage.engine, events: engines.eventLog.kind, cache: engines.pubsub.kind };
if (resolveLogFormat(config.Logging.Format) === 'pretty') process.stdout.write(startBanner({ url, tokenFile, stores }));
else {
  logger.info({ url, stores }, `Hangar is serving ${url}/api/meta`);
  if (tokenFile) logger.info(`Bearer token: the contents of ${tokenFile}`);
}
