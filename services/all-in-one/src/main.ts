import { runMain } from '@hangar/platform';
import { allInOneModules } from './all-in-one.js';
import { localAuthToken } from './local-token.js';

// Without HANGAR_CONFIG the trial configuration is used: the offline Demo provider and example code agents.
const env = { HANGAR_CONFIG: 'config/all-in-one.yaml', ...process.env };
const localToken = localAuthToken();
const running = await runMain('all-in-one', allInOneModules, { env, defaults: { Hangar: { Api: { AuthToken: localToken } } } });

const { config, modules, logger } = running;
const url = `http://${config.Gateway.Host}:${modules.running.get('Gateway')?.httpPort}${config.Hangar.Api.Prefix}`;
logger.info({ url }, `Hangar is serving ${url}/api/meta`);
if (config.Hangar.Api.AuthToken === localToken) logger.info('Bearer token: the contents of .hangar/auth-token');
