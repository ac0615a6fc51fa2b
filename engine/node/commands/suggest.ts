import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { parseClusterSpec } from '../../cluster/parseClusterSpec.js';
import { withMeasuredLinks } from '../../cluster/measuredLinks.js';
import { clusterProfileFile, loadClusterProfile } from '../hosts/clusterProfile.js';
import type { ClusterSpec } from '../../cluster/spec.js';
import type { ModelGraph } from '../../model/graph.js';
import { registerUserLayers } from '../../wire/userLayers.js';
import { formatDiagnostics, hasErrors } from '../../plan/diagnostics.js';
import { presetPlan } from '../../plan/presets.js';
import { executionSupport } from '../../plan/executionSupport.js';
import { formatSuggestions } from '../../planner/formatSuggestions.js';
import { SAMPLES_PER_DEVICE, suggestPlans } from '../../planner/suggestPlans.js';
import { defaultLocalAgents } from '../jobs/localJob.js';
import { openModelWithWarnings } from '../modelRef.js';
import { fail, failUsage } from './fail.js';
import { readJsonFile } from './inputFiles.js';
import { intOption, localClusterOption } from './optionValues.js';

interface SuggestArgs {
  model: string;
  cluster: string;
  top?: number;
  globalBatch?: number;
  exhaustive: boolean;
  runnable: boolean;
  json: boolean;
  /** A stored SSH cluster whose surveyed links (shoal cluster test) replace the spec's inter-host links. */
  links?: string;
  /** The user's layer classes (`--layers FILE`, a module exporting register(tf)). */
  layers?: string;
}

function planCommandArgs(args: string[]): SuggestArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        model: { type: 'string' },
        cluster: { type: 'string' },
        top: { type: 'string' },
        'global-batch': { type: 'string' },
        exhaustive: { type: 'boolean' },
        runnable: { type: 'boolean' },
        json: { type: 'boolean' },
        links: { type: 'string' },
        layers: { type: 'string' },
      },
      allowPositionals: false,
    }));
  } catch (err) {
    failUsage(`${(err as Error).message.split('\n')[0].replace(/\.?$/, '.')} Usage: shoal plan --model <name|model.json> --cluster <cluster.json|local:N> [--top K] [--global-batch B] [--exhaustive] [--runnable] [--links <stored cluster>] [--layers FILE] [--json]`);
  }
  const positive = (key: string): number | undefined => {
    try {
      return intOption(values, key);
    } catch (err) {
      fail((err as Error).message);
    }
  };
  return {
    model: values.model ?? fail('--model is required: a built-in model (see `shoal models`) or a Keras / tfjs model.json file.'),
    cluster: values.cluster ?? fail('--cluster is required: a cluster spec file (see examples/clusters/) or local:N.'),
    top: positive('top'),
    globalBatch: positive('global-batch'),
    exhaustive: Boolean(values.exhaustive),
    // On this machine only what `shoal train` can run is useful; elsewhere show the best plans.
    runnable: Boolean(values.runnable) || /^local(:|$)/.test(values.cluster ?? ''),
    json: Boolean(values.json),
    links: values.links,
    ...(values.layers !== undefined ? { layers: values.layers } : {}),
  };
}

function readJson(file: string, what: string): unknown {
  try {
    return readJsonFile(file, what);
  } catch (err) {
    fail((err as Error).message);
  }
}

/** A zoo name or a Keras / tfjs model file (its import diagnostics as text); a cluster file or local:N. */
async function resolvePlanInputs(modelArg: string, clusterArg: string, localAgents: number, layersFile?: string): Promise<{ model: ModelGraph; cluster: ClusterSpec; diagnostics?: string }> {
  // The one loader `shoal train` uses, so its refusals (and what the agents can run) are the same.
  let opened: ReturnType<typeof openModelWithWarnings>;
  try {
    if (layersFile !== undefined) await registerUserLayers(layersFile);
    opened = openModelWithWarnings(modelArg, layersFile === undefined ? undefined : resolve(layersFile));
  } catch (err) {
    fail((err as Error).message);
  }
  const model = opened.graph;
  const diagnostics = opened.warnings.length ? `${modelArg}:\n${formatDiagnostics(opened.warnings)}` : undefined;
  const cluster = /^local(:|$)/.test(clusterArg) ? localClusterOption(clusterArg, localAgents, (line) => process.stderr.write(`shoal: warning: ${line}\n`)).spec : parseClusterSpec(readJson(clusterArg, 'cluster'));
  return { model, cluster, ...(diagnostics ? { diagnostics } : {}) };
}

/** Refusals about the model itself, whatever the plan (see executionSupport). */
const MODEL_LEVEL = new Set(['model-not-trainable', 'layer-not-executable']);

/** `shoal plan` without a preset: search plans for a model (zoo or Keras file) on a cluster (file or local:N). */
export async function runSuggest(args: string[]): Promise<void> {
  const options = planCommandArgs(args);
  const inputs = await resolvePlanInputs(options.model, options.cluster, defaultLocalAgents(), options.layers);
  const { model, diagnostics } = inputs;
  const cluster = options.links ? measuredSpec(inputs.cluster, options.links) : inputs.cluster;
  if (diagnostics) process.stderr.write(diagnostics + '\n');
  if (options.runnable) {
    // What keeps the agents from training the model at all is said once, not by filtering every plan.
    const refusals = executionSupport(presetPlan(model, 'pp1-dp1'), model).filter((d) => MODEL_LEVEL.has(d.code));
    if (refusals.length) process.stderr.write(`The agents cannot train this model yet; plans are priced all the same:\n${formatDiagnostics(refusals)}\n`);
  }
  const tty = !options.json && process.stderr.isTTY;
  const result = suggestPlans(model, cluster, {
    top: options.top,
    globalBatch: options.globalBatch,
    exhaustive: options.exhaustive,
    accept: options.runnable ? (plan) => !hasErrors(executionSupport(plan, model).filter((d) => !MODEL_LEVEL.has(d.code))) : undefined,
    onProgress: tty ? (done, total) => process.stderr.write(`\rplanning: ${done}/${total} candidates`) : undefined,
  });
  if (tty) process.stderr.write('\r\x1b[K');
  const batch = options.globalBatch ?? SAMPLES_PER_DEVICE * cluster.devices.length;
  if (result.evaluated === 0) {
    fail(`No way to spread "${model.name}" over the ${cluster.devices.length} devices of "${cluster.name}" divides the global batch ${batch} evenly. Use a --global-batch that is a multiple of the device count.`);
  }
  if (result.suggestions.length === 0) {
    fail(`No plan for "${model.name}" fits in memory on "${cluster.name}" (${cluster.devices.length} devices, global batch ${batch}), even with ZeRO-3 and pipelining. Try a smaller --global-batch or a cluster with more memory.`);
  }
  if (options.json) {
    const { searchMs, suggestions } = result;
    process.stdout.write(JSON.stringify({ searchMs, suggestions }) + '\n');
  } else {
    process.stdout.write(formatSuggestions(result, `${model.name} on ${cluster.name}`, cluster) + '\n');
  }
}

/** The spec with the links `shoal cluster test` measured between the hosts of a stored cluster. */
function measuredSpec(spec: ClusterSpec, clusterName: string): ClusterSpec {
  const profile = loadClusterProfile(clusterName);
  if (!profile) fail(`Cluster ${clusterName} has no measured links yet (${clusterProfileFile(clusterName)}): run shoal cluster test ${clusterName} first.`);
  try {
    const measured = withMeasuredLinks(spec, profile);
    process.stderr.write(`links between hosts: as measured by shoal cluster test ${clusterName} at ${profile.measuredAt}\n`);
    return measured;
  } catch (err) {
    fail((err as Error).message);
  }
}
