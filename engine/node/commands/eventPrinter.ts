import type { JobEvent } from '../../protocol/events.js';

/** One readable line for an event, or null for events a person need not see (info logs, most steps). */
export function describeEvent(event: JobEvent): string | null {
  switch (event.type) {
    case 'status':
      return `status: ${event.state}${event.message ? ` — ${event.message}` : ''}`;
    case 'agent':
      return `agent rank ${event.rank} on ${event.host} (pid ${event.pid}): stage ${event.stage}, replica ${event.replica}, backend ${event.backend}`;
    case 'membership': {
      const replicas = new Set(event.agents.map((a) => a.replica)).size;
      const vnodes = event.agents.filter((a) => a.stage === 0 && a.shard === 0).map((a) => a.virtualNodes);
      return `generation ${event.generation} from step ${event.step} (${event.reason}): ${event.agents.length} agents, ${replicas} replica(s), virtual nodes [${vnodes.join(', ')}]`;
    }
    case 'step':
      return event.step % 25 === 0 ? `step ${event.step}  epoch ${event.epoch.toFixed(2)}  loss ${event.loss.toFixed(4)}  ${event.samplesPerSec.toFixed(0)} samples/s` : null;
    case 'eval':
      return `eval after step ${event.step}: ${event.testAccuracy === undefined ? '' : `test accuracy ${(event.testAccuracy * 100).toFixed(2)}%  `}test loss ${event.testLoss.toFixed(4)}`;
    case 'log':
      return event.level === 'info' ? null : `[${event.host}${event.rank === null ? '' : ` rank ${event.rank}`}] ${event.level}: ${event.message}`;
    case 'pipeline':
      return event.step % 25 === 0
        ? `  stage ${event.stage}: delay ${event.delay}, utilization ${(event.utilization * 100).toFixed(0)}%, lr ×${event.lrMultiplier.toFixed(3)}, correction ${event.correction.toExponential(2)}`
        : null;
    case 'timeline':
      return null;
    case 'profile': {
      const { agents, layers, links } = event.profile;
      return `profiled ${new Set(layers.map((l) => l.id)).size} layers on ${agents.length} agents, ${links.length} links${event.path ? `: ${event.path}` : ''}`;
    }
    case 'checkpoint':
      return `checkpoint ${event.action} at step ${event.step}: ${event.path}`;
    case 'final':
      return `done: ${event.testAccuracy === undefined ? `test loss ${event.testLoss?.toFixed(4)}` : `test accuracy ${(event.testAccuracy * 100).toFixed(2)}%`} after ${event.steps} steps in ${event.seconds.toFixed(1)} s (${event.samplesPerSec.toFixed(0)} samples/s, backend ${event.backends.join(', ')})`;
  }
}

/** `--json`: every event as one JSON line; otherwise the readable lines. */
export function eventPrinter(json: boolean): (event: JobEvent) => void {
  return (event) => {
    if (json) process.stdout.write(JSON.stringify(event) + '\n');
    else {
      const line = describeEvent(event);
      if (line) process.stdout.write(line + '\n');
    }
  };
}
