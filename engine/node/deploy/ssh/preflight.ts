import type { SshHost } from '../../hosts/host.js';
import { measureClockSkew, type ClockSkew } from './clockSkew.js';
import { connectHost, type ConnectOptions } from './connectHost.js';
import { runRemote } from './exec.js';
import { mapBounded } from './mapBounded.js';
import { judgeClock, judgeFacts, type PreflightStep, type StepStatus, type StepVerdict } from './preflightChecks.js';
import { PROBE_SCRIPT, parseProbeOutput, type ProbeFacts } from './preflightProbe.js';
import { SshConnectError, whereOf, type SshErrorKind } from './sshErrors.js';

export interface PreflightEvent {
  /** The host's alias. */
  host: string;
  step: PreflightStep;
  status: StepStatus;
  detail: string;
}

export interface HostPreflight {
  host: string;
  where: string;
  /** No step failed (warnings allowed). */
  ok: boolean;
  /** The final verdict of each step that ran, in order. */
  steps: StepVerdict[];
  facts?: ProbeFacts;
  clock?: ClockSkew;
  /** Why the host could not be used at all (connection, host key, authentication). */
  error?: { kind: SshErrorKind; message: string };
}

export interface PreflightOptions extends ConnectOptions {
  onProgress?: (event: PreflightEvent) => void;
  /** Hosts checked at once; each holds an SSH session while it runs. */
  concurrency?: number;
}

/** Which step a connection error belongs to, so the progress shows where it stopped. */
const STEP_OF_ERROR: Record<SshErrorKind, PreflightStep> = {
  unreachable: 'reachable',
  timeout: 'reachable',
  dns: 'reachable',
  jump: 'reachable',
  protocol: 'reachable',
  'host-key-untrusted': 'hostKey',
  'host-key-changed': 'hostKey',
  'host-key-revoked': 'hostKey',
  auth: 'authenticated',
  'key-file': 'authenticated',
};

/** Connect to one host and check that it can run agents. Never throws: failures are in the result. */
export async function preflightHost(host: SshHost, options: PreflightOptions = {}): Promise<HostPreflight> {
  const steps: StepVerdict[] = [];
  const emit = (step: PreflightStep, status: StepStatus, detail: string) => {
    if (status !== 'running') steps.push({ step, status, detail });
    options.onProgress?.({ host: host.alias, step, status, detail });
  };
  const result = (extra: Partial<HostPreflight>): HostPreflight => ({
    host: host.alias,
    where: whereOf(host),
    ok: !steps.some((s) => s.status === 'fail'),
    steps,
    ...extra,
  });

  const via = host.jump.length > 0 ? ` via ${host.jump.map(whereOf).join(' → ')}` : '';
  emit('reachable', 'running', `connecting to ${whereOf(host)}${via}`);
  let conn;
  try {
    conn = await connectHost(host, options);
  } catch (err) {
    const e = err instanceof SshConnectError ? err : new SshConnectError('protocol', (err as Error).message, whereOf(host));
    const failedAt = STEP_OF_ERROR[e.kind];
    if (failedAt !== 'reachable') emit('reachable', 'ok', `${whereOf(host)}${via}`);
    if (failedAt === 'authenticated') emit('hostKey', 'ok', 'verified');
    emit(failedAt, 'fail', e.message);
    return result({ error: { kind: e.kind, message: e.message } });
  }
  try {
    emit('reachable', 'ok', `${whereOf(host)}${via}`);
    emit('hostKey', 'ok', `${conn.hostKey.keyType} ${conn.hostKey.fingerprint}${conn.hostKey.newlyTrusted ? ' (newly trusted)' : ''}`);
    emit('authenticated', 'ok', `as ${host.user}`);

    emit('os', 'running', 'probing the host');
    const probe = await runRemote(conn.client, 'sh -s', { stdin: PROBE_SCRIPT, timeoutMs: 60_000 });
    const facts = parseProbeOutput(probe.stdout);
    if (!facts.complete) {
      emit('os', 'fail', `the probe script did not finish (exit ${probe.code}): ${probe.stderr.trim().slice(0, 300) || 'no output'}. Is sh available on the host?`);
      return result({ facts });
    }
    for (const v of judgeFacts(facts, host.user)) emit(v.step, v.status, v.detail);

    emit('clock', 'running', 'comparing clocks');
    let clock: ClockSkew | undefined;
    try {
      clock = await measureClockSkew(conn.client);
      const v = judgeClock(clock);
      emit(v.step, v.status, v.detail);
    } catch (err) {
      emit('clock', 'warn', (err as Error).message);
    }
    return result({ facts, ...(clock ? { clock } : {}) });
  } catch (err) {
    // The session broke mid-probe: report it on the host, as its own failure.
    emit('os', 'fail', `the SSH session to ${whereOf(host)} failed during the checks: ${(err as Error).message}`);
    return result({});
  } finally {
    conn.close();
  }
}

/**
 * Preflight many hosts in parallel, at most `concurrency` (default 8) at a time. One host's failure or
 * slowness never stops the others; results come back in the order of `hosts`.
 */
export function preflightHosts(hosts: SshHost[], options: PreflightOptions = {}): Promise<HostPreflight[]> {
  return mapBounded(hosts, options.concurrency ?? 8, (h) => preflightHost(h, options));
}
