import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { JobEvent } from '../../engine/protocol/events.js';
import { runAttachCommand } from '../../engine/node/commands/attach.js';
import { runDeployCommand } from '../../engine/node/commands/deploy.js';
import type { StartedProcess } from '../../engine/node/deploy/launcher.js';
import { saveClusterHosts } from '../../engine/node/hosts/clusterStore.js';
import { makeUserKey, type PrivateSshd, type UserKey, hostFor, startHostsWithHomes } from '../support/sshd.js';
import { useTempHome } from '../support/homes.js';
import { runCommand as run, jsonLines, endDeployTests } from '../support/commandRun.js';

/**
 * A deploy where one host is reached only through a ProxyJump host: the head (127.0.0.2) directly, the
 * second host (127.0.0.3) via a bastion (127.0.0.4) that is not part of the cluster. Preparing, starting,
 * following and cleaning up all go through the jump for that host; the job trains and finishes.
 */
let env: ReturnType<typeof useTempHome>;
let key: UserKey;
let head: PrivateSshd;
let inner: PrivateSshd;
let bastion: PrivateSshd;
let homes: string[];

beforeAll(async () => {
  env = useTempHome();
  process.env.SHOAL_DATA_DIR = join(env.home, 'data');
  key = makeUserKey(join(env.home, 'keys'), 'id_jump');
  let servers: PrivateSshd[];
  ({ servers, homes } = await startHostsWithHomes(['head', 'inner', 'bastion'], [key.publicKey]));
  [head, inner, bastion] = servers;
  saveClusterHosts('behind', [hostFor(head, 'head', key.path), hostFor(inner, 'inner', key.path, [{ address: bastion.address, port: bastion.port, user: bastion.user, identityFiles: [key.path] }])]);
});

afterAll(() => endDeployTests(homes, env));

const logins = (s: PrivateSshd) => readFileSync(join(s.dir, 'sshd.log'), 'utf8').split('\n').filter((l) => l.includes('Accepted publickey')).length;

describe('deploy through a jump host', () => {
  test('pp1-dp2 with one host behind ProxyJump: prepared and started through the bastion, trains, the final event arrives via attach', async () => {
    expect(logins(bastion)).toBe(0);
    const d = await run(runDeployCommand, '--cluster', 'behind', '--model', 'mlp', '--plan', 'pp1-dp2', '--steps', '20', '--eval-every', '20', '--trust-new', '--detach', '--json');
    expect(d.err).not.toContain('shoal deploy:');
    expect(d.code).toBe(0);
    // The inner host's progress says how it is reached; its upload went through the bastion.
    expect(d.err).toMatch(new RegExp(`^inner\\s+connect\\s+\\S+\\s+connecting to ${inner.user}@127\\.0\\.0\\.3:${inner.port} via ${bastion.user}@127\\.0\\.0\\.4:${bastion.port}`, 'm'));
    expect(d.err).toMatch(/^inner\s+upload\s+ok\s+uploaded to ~\/\.shoal\/agent\//m);
    expect(logins(bastion)).toBeGreaterThan(0);
    const deployed = jsonLines<{ type: string; jobId: string; processes: StartedProcess[] }>(d.out).find((e) => e.type === 'deployed')!;
    expect(deployed.processes.map((p) => `${p.target}:${p.name}`)).toEqual(['head:coordinator', 'head:agent-0', 'inner:agent-1']);

    const a = await run(runAttachCommand, deployed.jobId, '--json');
    expect(a.code).toBe(0);
    const events = jsonLines<JobEvent>(a.out);
    expect(new Set(events.filter((e) => e.type === 'agent').map((e) => (e as { host: string }).host))).toEqual(new Set(['head', 'inner']));
    expect(events.filter((e) => e.type === 'step')).toHaveLength(20);
    const final = events.find((e) => e.type === 'final') as Extract<JobEvent, { type: 'final' }>;
    expect(final).toMatchObject({ final: true, steps: 20 });
    expect(final.validationAccuracy).toBeGreaterThan(0);
    // The agent behind the jump host wrote its log on that host's own disk.
    expect(existsSync(join(homes[1], '.shoal', 'runs', deployed.jobId, 'agent-1.log'))).toBe(true);
    expect(existsSync(join(homes[0], '.shoal', 'runs', deployed.jobId, 'agent-1.log'))).toBe(false);
  });
});
