/**
 * Elasticity benchmark, side by side in one run:
 * - a fixed-step job on 2 agents, static, vs the same job where 2 more agents arrive half way
 *   (`resize --add 2` at step steps/2): job completion time;
 * - recovery: on 4 agents, one is SIGKILLed mid-run; seconds from the kill to the next completed step.
 *
 *   npm run bench -- elastic [--steps 60] [--pass-ms 20] [--real]
 *
 * Stages of fixed synthetic duration by default (each pass sleeps per virtual node): with 2 cores,
 * real compute on 4 agents would measure core contention rather than the elasticity; `--real`
 * trains MNIST `mlp` instead.
 */
import { zooModel } from '../engine/model/zoo.js';
import type { Plan } from '../engine/plan/plan.js';
import { presetPlan } from '../engine/plan/presets.js';
import { runJob } from './lib/jobRun.js';
import { report, type Column } from './lib/report.js';
import { args, numberFlag as flag } from './lib/args.js';

const steps = flag('steps', 60);
const passMs = flag('pass-ms', 20);
const real = args.includes('--real');

const model = zooModel('mlp');
const base = (dp: number): Plan => ({ ...presetPlan(model, `pp1-dp${dp}`, { globalBatch: 128, optimizer: { kind: 'sgd', learningRate: 0.05, momentum: 0.9 } }), virtualNodes: { total: 8 } });
const options = { syntheticStageMs: real ? undefined : { forward: passMs, backward: 2 * passMs }, rebalance: false };

const staticRun = await runJob(model, base(2), 2, steps, options);
let asked = false;
const elasticRun = await runJob(model, base(2), 2, steps, options, (e, job) => {
  if (!asked && e.type === 'step' && e.step === steps / 2 - 1) {
    asked = true;
    job.resize({ add: 2 }).catch((err) => console.error(err));
  }
});
let killedAt = 0;
let recoveredAt = 0;
await runJob(model, base(4), 4, steps, options, (e, _job, events) => {
  if (!killedAt && e.type === 'step' && e.step === steps / 2) {
    const victim = events.find((x) => x.type === 'agent' && x.rank === 2);
    if (victim?.type === 'agent') process.kill(victim.pid, 'SIGKILL');
    killedAt = performance.now();
  } else if (killedAt && !recoveredAt && e.type === 'step') recoveredAt = performance.now();
});

interface Row {
  measurement: string;
  seconds: number;
  note: string;
}
const grown = elasticRun.events.find((e) => e.type === 'membership' && e.agents.length === 4);
const rows: Row[] = [
  { measurement: `static, 2 agents, ${steps} steps`, seconds: staticRun.completionSeconds, note: '' },
  { measurement: `elastic, 2 → 4 agents at step ${steps / 2}`, seconds: elasticRun.completionSeconds, note: grown ? `grown at step ${grown.type === 'membership' ? grown.step : '?'}; ${(staticRun.completionSeconds / elasticRun.completionSeconds).toFixed(2)}× faster` : 'did not grow' },
  { measurement: 'recovery: SIGKILL → next completed step', seconds: (recoveredAt - killedAt) / 1000, note: '4 → 3 agents, the step in flight discarded and run again' },
];
const columns: Column<Row>[] = [
  { key: 'measurement', title: 'measurement' },
  { key: 'seconds', title: 'seconds', format: (v) => (v as number).toFixed(2) },
  { key: 'note', title: '' },
];
report('elastic', `Elastic data parallelism: MNIST mlp, 8 virtual nodes, global batch 128, ${real ? 'real training' : `synthetic passes of ${passMs}/${2 * passMs} ms per virtual node`}`, rows, columns, [
  'Completion time runs from the first step to the last, so the resize (state snapshot, new links, restore) is included.',
  'Recovery includes detecting the loss, aborting the step on the survivors, gathering their state, re-planning and re-running the step.',
], { staticSeconds: staticRun.completionSeconds, elasticSeconds: elasticRun.completionSeconds, recoverySeconds: (recoveredAt - killedAt) / 1000, synthetic: !real });
