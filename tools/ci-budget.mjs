// CI's time against its budget: `.ci/run` passes each phase's seconds and this machine's speed,
// measured at the start and the end of the run by `speed` (a fixed single-core workload, in ms).
// The figures landed last are in .ci/budget.json; a run that took more than GROWTH_S over them,
// scaled to this run's machine speed, says so, and so does one over the budget.
import { pbkdf2Sync } from 'node:crypto';
import { readFileSync } from 'node:fs';

const BUDGET_FILE = new URL('../.ci/budget.json', import.meta.url);
const GROWTH_S = 120;

const [command, ...args] = process.argv.slice(2);

if (command === 'speed') {
  // Plain CPU on one core: what a slow day on a shared machine takes from every phase.
  const started = performance.now();
  pbkdf2Sync('hangar', 'ci-speed', 1_500_000, 64, 'sha256');
  console.log(Math.round(performance.now() - started));
} else if (command === 'report') {
  report(args);
} else {
  console.error('usage: ci-budget.mjs speed | report <speed ms at start> <speed ms at end> <phase>=<seconds>...');
  process.exit(2);
}

function report([startSpeed, endSpeed, ...phaseArgs]) {
  const budget = JSON.parse(readFileSync(BUDGET_FILE, 'utf8'));
  const phases = phaseArgs.map((arg) => {
    const [name, seconds] = arg.split('=');
    return { name, seconds: Number(seconds) };
  });
  const total = phases.reduce((sum, phase) => sum + phase.seconds, 0);
  const speedMs = (Number(startSpeed) + Number(endSpeed)) / 2;
  // Above 1, this machine ran the fixed workload slower than when the recorded figures were taken.
  const slowness = speedMs / budget.speedMs;
  const minutes = (seconds) => `${Math.floor(seconds / 60)} min ${String(Math.round(seconds % 60)).padStart(2, '0')} s`;
  const width = Math.max(...phases.map((phase) => phase.name.length), 5);
  console.log('\nCI phases (s; recorded figure scaled to this machine in brackets):');
  for (const phase of phases) {
    const recorded = budget.phases[phase.name];
    const scaled = recorded === undefined ? '' : ` (${Math.round(recorded * slowness)})`;
    console.log(`  ${phase.name.padEnd(width)}  ${String(Math.round(phase.seconds)).padStart(5)}${scaled}`);
  }
  const expected = budget.totalSeconds * slowness;
  console.log(
    `CI took ${minutes(total)} of its ${budget.budgetMinutes} min budget; machine speed ${speedMs.toFixed(0)} ms ` +
      `(recorded ${budget.speedMs} ms: ×${slowness.toFixed(2)}); the recorded ${minutes(budget.totalSeconds)} (${budget.recorded}) ` +
      `at this speed: ${minutes(expected)}`,
  );
  if (total - expected > GROWTH_S)
    console.log(`CI BUDGET: this run took ${minutes(total - expected)} more than the recorded figure at this machine's speed`);
  if (total / slowness > budget.budgetMinutes * 60)
    console.log(`CI BUDGET: at the recorded machine speed this run would take ${minutes(total / slowness)}, over ${budget.budgetMinutes} min`);
}
