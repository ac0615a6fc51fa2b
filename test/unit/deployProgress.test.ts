import { describe, expect, test } from 'vitest';
import { DeployProgress } from '../../engine/node/deployProgress.js';
import { HostKeyQuestions } from '../../engine/node/hosts/hostKeyQuestions.js';

describe('deploy progress as the studio shows it', () => {
  test("each host's steps keep their latest state and bounded progress lines; one host's failure stays its own", () => {
    const progress = new DeployProgress(['h2', 'h3']);
    progress.update({ target: 'h2', step: 'connect', status: 'running', detail: 'connecting' });
    progress.update({ target: 'h2', step: 'connect', status: 'ok', detail: 'Linux x64, Node v20' });
    progress.update({ target: 'h3', step: 'connect', status: 'fail', detail: 'h3 (me@10.0.0.3:22), connect: Cannot reach 10.0.0.3:22' });
    for (let i = 0; i <= 30; i++) progress.update({ target: 'h2', step: 'upload', status: 'progress', detail: `uploading ${i} of 30.0 MiB` });
    progress.update({ target: 'h2', step: 'upload', status: 'ok', detail: 'uploaded to ~/.shoal/agent/abc' });
    progress.update({ target: 'h2', step: 'ready', status: 'ok', detail: 'ready' });
    const [h2, h3] = progress.view();
    expect(h2).toMatchObject({ host: 'h2', ok: true });
    expect(h2.error).toBeUndefined();
    expect(h2.steps.map((s) => `${s.step} ${s.status}`)).toEqual(['connect ok', 'upload ok', 'ready ok']);
    const upload = h2.steps[1];
    expect(upload.progress).toHaveLength(20);
    expect(upload.progress?.at(-1)).toBe('uploading 30 of 30.0 MiB');
    expect(h3).toMatchObject({ host: 'h3', ok: false, error: 'h3 (me@10.0.0.3:22), connect: Cannot reach 10.0.0.3:22' });
    // The view is a copy: a caller polling it cannot change the record.
    upload.progress?.push('x');
    expect(progress.view()[0].steps[1].progress).toHaveLength(20);
  });

  test("the launcher's verdict settles hosts that never reported a failed step", () => {
    const progress = new DeployProgress(['a', 'b']);
    progress.settle([
      { target: 'a', ok: true },
      { target: 'b', ok: false, error: 'b: refused' },
    ]);
    expect(progress.view()).toEqual([
      { host: 'a', steps: [], ok: true },
      { host: 'b', steps: [], ok: false, error: 'b: refused' },
    ]);
  });
});

describe('host-key questions of a deploy', () => {
  const request = (address: string, fingerprint: string) => ({ where: `me@${address}:22`, address, port: 22, keyType: 'ssh-ed25519', fingerprint });

  test('each key is asked once and answered by id; a second answer is refused; closing refuses what waits', async () => {
    let n = 0;
    const questions = new HostKeyQuestions(() => `trust-${++n}`);
    const first = questions.ask(request('10.0.0.2', 'SHA256:a'));
    const same = questions.ask(request('10.0.0.2', 'SHA256:a'));
    const other = questions.ask(request('10.0.0.3', 'SHA256:b'));
    expect(questions.prompts().map((p) => `${p.id} ${p.where} ${p.fingerprint}`)).toEqual(['trust-1 me@10.0.0.2:22 SHA256:a', 'trust-2 me@10.0.0.3:22 SHA256:b']);
    expect(questions.answer('trust-1', true)).toBe(true);
    expect(await first).toBe(true);
    expect(await same).toBe(true);
    expect(questions.answer('trust-1', false)).toBe(false);
    questions.refuseAll();
    expect(await other).toBe(false);
    expect(questions.prompts()).toEqual([]);
  });
});
