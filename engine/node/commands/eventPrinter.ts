import type { Confusion, ValidationResult } from '../../protocol/evaluation.js';
import type { JobEvent } from '../../protocol/events.js';

/**
 * One readable line for an event, or null for events a person need not see (info logs, most steps).
 * `validationSamples` 0 says the job has no validation set: its evaluations measured nothing, so
 * none of their figures is printed.
 */
export function describeEvent(event: JobEvent, validationSamples?: number): string | null {
  const validationText = (result: ValidationResult) => (validationSamples === 0 ? 'no validation set (--validation-split F or a val/ folder gives one)' : measuredText(result));
  switch (event.type) {
    case 'status':
      return `status: ${event.state}${event.message ? ` — ${event.message}` : ''}`;
    case 'agent':
      return `agent rank ${event.rank} on ${event.host} (pid ${event.pid}): stage ${event.stage}, replica ${event.replica}, backend ${event.backend}${event.device ? ` on ${event.device.gpu && event.device.kind === 'cpu' ? `the CPU (pinned GPU ${event.device.gpu.index} unused)` : event.device.gpu ? `GPU ${event.device.gpu.index} ${event.device.gpu.name} (${event.device.gpu.uuid})` : event.device.name}` : ''}`;
    case 'membership': {
      const replicas = new Set(event.agents.map((a) => a.replica)).size;
      const vnodes = event.agents.filter((a) => a.stage === 0 && a.shard === 0).map((a) => a.virtualNodes);
      const stages = new Set(event.agents.map((a) => a.stage)).size;
      const others = `${event.waiting?.length ? `, ${event.waiting.length} waiting (${event.waiting[0].reason})` : ''}${event.lost ? `, ${event.lost} lost so far` : ''}`;
      return `generation ${event.generation} from step ${event.step} (${event.reason}): ${event.agents.length} agents training${others}; ${stages} stage(s) × ${replicas} replica(s), virtual nodes [${vnodes.join(', ')}]`;
    }
    case 'step':
      return event.step % 25 === 0 ? `step ${event.step}  epoch ${event.epoch.toFixed(2)}  loss ${lossText(event.loss)}  ${event.samplesPerSec.toFixed(0)} samples/s` : null;
    case 'eval':
      return `eval after step ${event.step}: ${validationText(event)}`;
    case 'log':
      return event.level === 'info' ? null : `[${event.host}${event.rank === null ? '' : ` rank ${event.rank}`}] ${event.level}: ${event.message}`;
    case 'pipeline': {
      if (event.step % 25 !== 0) return null;
      const utilization = `utilization ${(event.utilization * 100).toFixed(0)}%`;
      // Delay, lr and correction are PipeMare's: a synchronous schedule (GPipe, 1F1B) has none of them.
      // Events from before `asynchronous` was sent tell by their neutral values.
      const asynchronous = event.asynchronous ?? !(event.delay === 0 && event.lrMultiplier === 1 && event.correction === 0);
      return asynchronous ? `  stage ${event.stage}: delay ${event.delay}, ${utilization}, lr ×${event.lrMultiplier.toFixed(3)}, correction ${event.correction.toExponential(2)}` : `  stage ${event.stage}: ${utilization}`;
    }
    case 'timeline':
      return null;
    case 'profile': {
      const { agents, layers, links } = event.profile;
      return `profiled ${new Set(layers.map((l) => l.id)).size} layers on ${agents.length} agents, ${links.length} links${event.path ? `: ${event.path}` : ''}`;
    }
    case 'checkpoint':
      return `checkpoint ${event.action} at step ${event.step}: ${event.path}`;
    case 'final':
      return `done: ${validationText(event)} after ${event.steps} steps in ${event.seconds.toFixed(1)} s (${event.samplesPerSec.toFixed(0)} samples/s, backend ${event.backends.join(', ')})${event.confusion ? `\n${confusionText(event.confusion)}` : ''}`;
  }
}

/** A NaN or infinite loss reaches here as null (JSON has no NaN): say what it means. */
function lossText(loss: number | null): string {
  return typeof loss === 'number' && Number.isFinite(loss) ? loss.toFixed(4) : 'not a number (training diverged: try a smaller --lr)';
}

/** Validation accuracy, loss and the model's metrics on one line. */
function measuredText(result: ValidationResult): string {
  const parts = [...(result.validationAccuracy === undefined ? [] : [`validation accuracy ${(result.validationAccuracy * 100).toFixed(2)}%`]), `validation loss ${result.validationLoss.toFixed(4)}`];
  for (const [name, value] of Object.entries(result.metrics ?? {})) {
    // The accuracy a classifier reports anyway is not said twice.
    if (name === 'accuracy' && value === result.validationAccuracy) continue;
    parts.push(`${name} ${/accuracy|(^|_)acc$/.test(name) ? `${(value * 100).toFixed(2)}%` : value.toFixed(4)}`);
  }
  return parts.join('  ');
}

/** Per-class accuracy, and the matrix itself when it fits a terminal (up to 12 classes). */
function confusionText(c: Confusion): string {
  const width = Math.max(5, ...c.classNames.map((n) => n.length));
  const lines = [`per-class validation accuracy (${c.output}, ${c.total} samples):`];
  const shown = 20;
  c.classNames.slice(0, shown).forEach((name, i) => {
    const a = c.perClassAccuracy[i];
    lines.push(`  ${name.padEnd(width)}  ${a === null ? '—' : `${(a * 100).toFixed(2)}%`}`);
  });
  if (c.classNames.length > shown) lines.push(`  … ${c.classNames.length - shown} more classes (all in the --json final line and the studio's run view)`);
  if (c.matrix && c.classNames.length <= 12) {
    const cells = Math.max(5, ...c.matrix.flat().map((v) => String(v).length), ...c.classNames.map((n) => Math.min(n.length, 8)));
    lines.push(`confusion matrix (rows: true class, columns: predicted):`);
    lines.push(`  ${''.padEnd(width)}  ${c.classNames.map((n) => n.slice(0, 8).padStart(cells)).join(' ')}`);
    c.matrix.forEach((row, i) => lines.push(`  ${c.classNames[i].padEnd(width)}  ${row.map((v) => String(v).padStart(cells)).join(' ')}`));
  } else if (c.note) lines.push(`  ${c.note}`);
  return lines.join('\n');
}

/** `--json`: every event as one JSON line; otherwise the readable lines. */
export function eventPrinter(json: boolean, validationSamples?: number): (event: JobEvent) => void {
  return (event) => {
    if (json) process.stdout.write(JSON.stringify(event) + '\n');
    else {
      const line = describeEvent(event, validationSamples);
      if (line) process.stdout.write(line + '\n');
    }
  };
}
