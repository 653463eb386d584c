// Fails when buf lint finds a problem, or when generated code is not what its generator makes now
// (generated code is generated, never edited): libs/contracts/src/generated from proto/ by `buf generate`,
// libs/client/src/generated from the gateway's routes by `npm run client:generate`.
import { execFileSync } from 'node:child_process';

const run = (cmd, args) => execFileSync(cmd, args, { stdio: 'inherit' });
run('npx', ['buf', 'lint']);
run('npx', ['buf', 'generate']);
run('npx', ['tsx', 'tools/generate-client.ts']);
const drift = execFileSync('git', ['status', '--porcelain', '--', 'libs/contracts/src/generated', 'libs/client/src/generated'], {
  encoding: 'utf8',
});
if (drift.trim()) {
  console.error(`Generated code is stale; run \`npm run proto:generate\` and \`npm run client:generate\`, and commit:\n${drift}`);
  process.exit(1);
}
console.log('proto: lint clean; generated contracts and client up to date');
