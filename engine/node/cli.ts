import { parseArgs } from 'node:util';
import { zooEntries, zooModel } from '../model/zoo.js';
import { formatDiagnostics, hasErrors } from '../plan/diagnostics.js';
import { parsePlan, type Plan } from '../plan/plan.js';
import { DEFAULT_OPTIMIZER, presetPlan } from '../plan/presets.js';
import { validatePlan } from '../plan/validate.js';
import { executionSupport } from '../plan/executionSupport.js';
import { parseClusterName } from '../cluster/cluster.js';
import type { JobEvent } from '../protocol/events.js';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultLocalAgents, LocalJob } from './jobs/localJob.js';

const USAGE = `shoal — hybrid-parallel training with TensorFlow.js

Usage:
  shoal train --model <name> [--cluster local:N] [--plan pp2-dp2 | --plan-file plan.json]
              [--epochs E | --steps S] [--batch B] [--micro-batches M] [--lr X] [--seed N] [--out DIR] [--json]
  shoal plan  --model <name> [--plan pp2-dp2] [--cluster local:N]   print a plan as JSON and check it
  shoal models                                                      list the built-in models

Defaults: --cluster local (one agent per core, at least 2), --plan pp1-dp1, --epochs 5.
--out DIR writes the trained parameters there (params.bin + params.json).
With --json, train prints one JSON object per line and ends with {"final": true, "testAccuracy": …}.`;

function fail(message: string): never {
  process.stderr.write(`shoal: ${message}\n`);
  process.exit(1);
}

function buildPlan(values: Record<string, string | boolean | undefined>): Plan {
  const model = zooModel(String(values.model ?? fail('--model is required (try `shoal models`).')));
  if (values['plan-file']) {
    const file = String(values['plan-file']);
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      fail(`Cannot read the plan file ${file}: ${(err as Error).message}`);
    }
    return parsePlan(json);
  }
  const number = (key: string) => (values[key] === undefined ? undefined : Number(values[key]));
  const lr = number('lr');
  return presetPlan(model, String(values.plan ?? 'pp1-dp1'), {
    globalBatch: number('batch'),
    microBatches: number('micro-batches'),
    seed: number('seed'),
    optimizer: lr === undefined ? undefined : { ...DEFAULT_OPTIMIZER, learningRate: lr },
  });
}

function describe(event: JobEvent): string | null {
  switch (event.type) {
    case 'status':
      return `status: ${event.state}${event.message ? ` — ${event.message}` : ''}`;
    case 'agent':
      return `agent rank ${event.rank} on ${event.host} (pid ${event.pid}): stage ${event.stage}, replica ${event.replica}, backend ${event.backend}`;
    case 'step':
      return event.step % 25 === 0 ? `step ${event.step}  epoch ${event.epoch.toFixed(2)}  loss ${event.loss.toFixed(4)}  ${event.samplesPerSec.toFixed(0)} samples/s` : null;
    case 'eval':
      return `eval after step ${event.step}: test accuracy ${(event.testAccuracy * 100).toFixed(2)}%  test loss ${event.testLoss.toFixed(4)}`;
    case 'log':
      return event.level === 'info' ? null : `[${event.host}${event.rank === null ? '' : ` rank ${event.rank}`}] ${event.level}: ${event.message}`;
    case 'final':
      return `done: test accuracy ${(event.testAccuracy * 100).toFixed(2)}% after ${event.steps} steps in ${event.seconds.toFixed(1)} s (${event.samplesPerSec.toFixed(0)} samples/s, backend ${event.backends.join(', ')})`;
  }
}

async function train(values: Record<string, string | boolean | undefined>): Promise<void> {
  const plan = buildPlan(values);
  const cluster = parseClusterName(String(values.cluster ?? 'local'), defaultLocalAgents());
  const json = Boolean(values.json);
  const steps = values.steps === undefined ? undefined : Number(values.steps);
  const epochs = values.epochs === undefined ? (steps === undefined ? 5 : undefined) : Number(values.epochs);
  const job = new LocalJob({
    model: zooModel(plan.model),
    plan,
    agents: cluster.agents,
    epochs,
    steps,
    outDir: values.out === undefined ? undefined : resolve(String(values.out)),
    onEvent: (event) => {
      if (json) process.stdout.write(JSON.stringify(event) + '\n');
      else {
        const line = describe(event);
        if (line) process.stdout.write(line + '\n');
      }
    },
  });
  const stop = () => void job.stop();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await job.start();
    await job.exited();
  } catch (err) {
    fail((err as Error).message);
  }
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  const { values } = parseArgs({
    args: rest,
    options: {
      model: { type: 'string' },
      cluster: { type: 'string' },
      plan: { type: 'string' },
      'plan-file': { type: 'string' },
      epochs: { type: 'string' },
      steps: { type: 'string' },
      batch: { type: 'string' },
      'micro-batches': { type: 'string' },
      lr: { type: 'string' },
      seed: { type: 'string' },
      json: { type: 'boolean' },
      out: { type: 'string' },
    },
    allowPositionals: false,
  });
  if (command === 'train') return train(values);
  if (command === 'models') {
    for (const m of zooEntries()) process.stdout.write(`${m.name.padEnd(8)} ${String(m.params).padStart(9)} params  ${m.description}\n`);
    return;
  }
  if (command === 'plan') {
    const plan = buildPlan(values);
    const cluster = parseClusterName(String(values.cluster ?? 'local'), defaultLocalAgents());
    process.stdout.write(JSON.stringify(plan, null, 2) + '\n');
    const diagnostics = [...validatePlan(plan, zooModel(plan.model), cluster.spec), ...executionSupport(plan)];
    if (hasErrors(diagnostics)) fail(formatDiagnostics(diagnostics));
    if (diagnostics.length) process.stderr.write(formatDiagnostics(diagnostics) + '\n');
    return;
  }
  process.stdout.write(USAGE + '\n');
  if (command && command !== 'help' && command !== '--help') process.exit(2);
}

main().catch((err: Error) => fail(err.message));
