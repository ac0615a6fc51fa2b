import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dispatchCall } from '../../electron/rpcDispatch.js';
import { createStudioService, type StudioService } from '../../engine/node/api.js';
import { presetPlan } from '../../engine/plan/presets.js';
import type { JobEvent } from '../../engine/protocol/events.js';
import type { ImportModelRequest } from '../../engine/protocol/modelImport.js';
import { writeNpy } from '../../engine/wire/data/npy.js';
import { resnetBlock, saveLayersModel, tf, writeNpyData } from '../support/userModels.js';

/**
 * The studio's Train for a model opened in the renderer: the model.json and its weights handed over
 * through the API (stored in the data folder's model store), then trained on a NumPy folder by real
 * agent processes; a data folder that does not fit the model is refused, naming the file.
 */
const root = mkdtempSync(join(tmpdir(), 'shoal-studio-user-'));
const previous = process.env.SHOAL_DATA_DIR;
let request: ImportModelRequest;
const dataDir = join(root, 'data');
const badDir = join(root, 'bad-data');

beforeAll(async () => {
  process.env.SHOAL_DATA_DIR = join(root, 'shoal');
  await tf.setBackend('cpu');
  const saved = dirname(await saveLayersModel(resnetBlock(), join(root, 'saved')));
  request = {
    name: 'model.json',
    modelJson: JSON.parse(readFileSync(join(saved, 'model.json'), 'utf8')) as Record<string, unknown>,
    weights: [{ path: 'weights.bin', base64: readFileSync(join(saved, 'weights.bin')).toString('base64') }],
  };
  writeNpyData(dataDir, { x: { shape: [8, 8, 2], kind: 'float' }, y: { shape: [], kind: { classes: 3 } } }, 64);
  writeNpyData(badDir, { y: { shape: [], kind: { classes: 3 } } }, 64);
  writeNpy(join(badDir, 'x.npy'), new Float32Array(64 * 5), [64, 5]);
}, 60_000);

afterAll(() => {
  if (previous === undefined) delete process.env.SHOAL_DATA_DIR;
  else process.env.SHOAL_DATA_DIR = previous;
  rmSync(root, { recursive: true, force: true });
});

let service: StudioService | null = null;
afterEach(async () => {
  await service?.close();
  service = null;
});

describe('a model opened in the studio trains with Train', () => {
  it('imports model.json with its weights into the model store, once per content', async () => {
    service = createStudioService({ shell: 'web' });
    // Through the shells' dispatcher, as the renderer calls it.
    const result = await dispatchCall(service, { kind: 'call', id: 1, method: 'importModelFile', params: [request] });
    expect(result.ok).toBe(true);
    const graph = (result as { value: { name: string; source?: { modelFile: string } } }).value;
    const file = graph.source!.modelFile;
    expect(file).toMatch(new RegExp(`^${join(root, 'shoal', 'models')}/[0-9a-f]{32}/model\\.json$`));
    expect(graph.name).toBe('resnet_block');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dirname(file), 'weights.bin')).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(dirname(file), 'weights.bin')).toString('base64')).toBe(request.weights![0].base64);
    expect((await service.importModelFile(request)).source?.modelFile).toBe(file);
  });

  it('refuses a missing or short weights file and a malformed request, saying what to do', async () => {
    service = createStudioService({ shell: 'web' });
    await expect(service.importModelFile({ ...request, weights: [] })).rejects.toThrow(/names the weights file weights\.bin, which was not given: open the model\.json together with its \.bin files/);
    const short = Buffer.from(request.weights![0].base64, 'base64').subarray(4).toString('base64');
    await expect(service.importModelFile({ ...request, weights: [{ path: 'weights.bin', base64: short }] })).rejects.toThrow(/weights\.bin holds \d+ bytes, but model\.json's weightsManifest needs \d+/);
    const bad = await dispatchCall(service, { kind: 'call', id: 2, method: 'importModelFile', params: [{ ...request, weights: [{ path: '../escape.bin', base64: '' }] }] });
    expect(bad).toMatchObject({ ok: false, error: expect.stringMatching(/Bad parameters for importModelFile: 0\.weights\.0\.path: a weights file is a plain file name/) });
  });

  it('trains the imported model on a NumPy folder and reaches a final event; a bad folder names the file', async () => {
    service = createStudioService({ shell: 'web' });
    const graph = await service.importModelFile(request);
    const plan = { ...presetPlan(graph, 'pp2-dp1'), model: graph.source!.modelFile, globalBatch: 16, microBatches: 2 };
    await expect(service.startTraining({ plan, agents: 2, steps: 3, data: { kind: 'npy', dir: badDir } })).rejects.toThrow(/bad-data\/x\.npy: each sample has shape \(5,\).*expects \(8, 8, 2\)/);
    await expect(service.startTraining({ plan, agents: 2, steps: 3 })).rejects.toThrow(/needs data: choose a Dataset \(file or folder\), a NumPy folder or Synthetic under Data/);
    await expect(service.startTraining({ plan, agents: 2, steps: 3, data: { kind: 'npy', dir: 'relative/data' } })).rejects.toThrow(/not a full path/);
    await expect(service.startTraining({ plan: { ...plan, model: join(root, 'saved', 'model.json') }, agents: 2, steps: 3, data: { kind: 'npy', dir: dataDir } })).rejects.toThrow(/trains model files it imported/);

    const events: JobEvent[] = [];
    const ended = new Promise<JobEvent>((resolve) =>
      service!.onJobEvent((_, { event: e }) => {
        events.push(e);
        if (e.type === 'final' || (e.type === 'status' && e.state === 'failed')) resolve(e);
      }),
    );
    const { jobId } = await service.startTraining({ plan, agents: 2, steps: 3, data: { kind: 'npy', dir: dataDir, validationSplit: 0.25 }, loss: 'sparse_categorical_crossentropy' });
    const end = await ended;
    expect(end.type === 'status' ? end.message : 'final').toBe('final');
    expect(events.filter((e) => e.type === 'step')).toHaveLength(3);
    expect(events.some((e) => e.type === 'log' && /data: NumPy folder .*validation the last 16/.test(e.message))).toBe(true);
    expect((await service.listRuns()).find((r) => r.id === jobId)?.model).toBe(graph.source!.modelFile);
  });
});
