// Fails when buf lint finds a problem or when libs/contracts/src/generated is not what
// `buf generate` makes from proto/ (generated code is generated, never edited).
import { execFileSync } from 'node:child_process';

const run = (cmd, args) => execFileSync(cmd, args, { stdio: 'inherit' });
run('npx', ['buf', 'lint']);
run('npx', ['buf', 'generate']);
const drift = execFileSync('git', ['status', '--porcelain', '--', 'libs/contracts/src/generated'], { encoding: 'utf8' });
if (drift.trim()) {
  console.error(`Generated code is stale; run \`npm run proto:generate\` and commit:\n${drift}`);
  process.exit(1);
}
console.log('proto: lint clean, generated code up to date');
