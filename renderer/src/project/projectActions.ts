import { create } from 'zustand';
import type { DataRef } from '../../../engine/protocol/trainingSetup';
import { parseProject, projectFileName, PROJECT_EXTENSION, PROJECT_VERSION, type Project } from '../../../engine/protocol/project';
import { loadPlan, useEditor } from '../editor/editorStore';
import { importedKey, useModelFiles } from '../model/modelFiles';
import { selectModel, showModel } from '../store/actions';
import { CLUSTER_CHOICES, type ClusterChoice } from '../store/clusters';
import { choiceFromRef, dataRefOf } from '../store/dataChoice';
import { isActive } from '../store/metrics';
import { PRESETS, useStudio, type PresetName } from '../store/studioStore';
import { downloadText, pickFile } from '../shell/download';
import { notify } from '../shell/shellStore';

/**
 * Save and open `.shoal.json` projects: the model (zoo name, or the imported graph), the plan as edited
 * and the cluster reference. Saving downloads the file (both shells are browser pages); opening reads
 * a picked file. The last few projects are kept in localStorage with their contents, so Recent reopens
 * them without a file dialog.
 */
const RECENT_KEY = 'shoal.recentProjects';
const MAX_RECENT = 8;
/** Projects larger than this are listed in Recent without their contents (localStorage is small). */
const MAX_RECENT_TEXT = 512 * 1024;

export interface RecentProject {
  name: string;
  savedAt: string;
  model: string;
  /** The project itself, when small enough to keep. */
  text?: string;
}

interface ProjectState {
  /** The open project's name (from the file or the last save); the model's name until then. */
  name?: string;
  recent: RecentProject[];
}

function readRecent(): RecentProject[] {
  try {
    const parsed = JSON.parse(localStorage.getItem(RECENT_KEY) ?? '[]') as unknown;
    return Array.isArray(parsed) ? (parsed as RecentProject[]).filter((r) => typeof r?.name === 'string').slice(0, MAX_RECENT) : [];
  } catch {
    return [];
  }
}

export const useProject = create<ProjectState>()(() => ({ recent: readRecent() }));

function remember(project: Project, text: string): void {
  const entry: RecentProject = { name: project.name, savedAt: project.savedAt, model: modelLabel(project), text: text.length <= MAX_RECENT_TEXT ? text : undefined };
  const recent = [entry, ...useProject.getState().recent.filter((r) => r.name !== project.name)].slice(0, MAX_RECENT);
  useProject.setState({ recent, name: project.name });
  try {
    localStorage.setItem(RECENT_KEY, JSON.stringify(recent));
  } catch {
    // Storage full or unavailable: keep the list for this window only.
    try {
      localStorage.setItem(RECENT_KEY, JSON.stringify(recent.map((r) => ({ ...r, text: undefined }))));
    } catch {
      // Nothing more to do.
    }
  }
}

const modelLabel = (project: Project) => (project.model.kind === 'zoo' ? project.model.name : project.model.fileName);

/** The open design as a project document, or a reason it cannot be saved yet. */
export function currentProject(name?: string): Project | string {
  const studio = useStudio.getState();
  const editor = useEditor.getState();
  if (!studio.model || !studio.modelName) return 'Open a model first: there is nothing to save yet.';
  const imported = useModelFiles.getState().imported;
  const model: Project['model'] =
    imported && imported.key === studio.modelName ? { kind: 'file', fileName: imported.fileName, graph: imported.graph as never } : { kind: 'zoo', name: studio.modelName };
  return {
    format: 'shoal-project',
    version: PROJECT_VERSION,
    name: name ?? useProject.getState().name ?? (model.kind === 'zoo' ? model.name : model.fileName.replace(/\.json$/i, '')),
    savedAt: new Date().toISOString(),
    model,
    plan: editor.plan,
    planSource: editor.source || undefined,
    planEdited: editor.edited,
    cluster: { kind: 'builtin', name: studio.cluster, agents: studio.agents },
    training: { epochs: studio.epochs, ...trainingData() },
  };
}

/** The Data section's choice as a project keeps it: a complete data reference, and the loss when one is picked. */
function trainingData(): { data?: DataRef; loss?: string } {
  const { data } = useStudio.getState();
  const ref = dataRefOf(data);
  return { ...('ref' in ref ? { data: ref.ref } : {}), ...(data.loss ? { loss: data.loss } : {}) };
}

export function saveProject(): void {
  const project = currentProject();
  if (typeof project === 'string') return notify('error', project);
  const text = JSON.stringify(project, null, 2) + '\n';
  downloadText(projectFileName(project.name), text);
  remember(project, text);
  notify('ok', `Saved ${projectFileName(project.name)} (model ${modelLabel(project)}, ${project.plan ? `${project.plan.stages.length}-stage plan` : 'no plan'}).`);
}

/** Apply a project to the studio: model, cluster and plan, in that order (a model change resets the plan). */
export async function applyProject(text: string, fileName: string): Promise<boolean> {
  const parsed = parseProject(text, fileName);
  if (!parsed.ok) {
    notify('error', parsed.problem);
    return false;
  }
  const { project } = parsed;
  const studio = useStudio.getState();
  if (studio.job && isActive(studio.job.metrics.state)) {
    notify('error', `A job is running; stop it before opening ${fileName}.`);
    return false;
  }
  if (project.cluster.kind === 'builtin' && (CLUSTER_CHOICES as readonly string[]).includes(project.cluster.name)) {
    studio.set({ cluster: project.cluster.name as ClusterChoice, agents: project.cluster.agents });
  }
  if (project.training) studio.set({ epochs: project.training.epochs });
  if (project.model.kind === 'zoo') {
    const zooName = project.model.name;
    if (!studio.models.some((m) => m.name === zooName)) {
      notify('error', `${fileName} uses model "${modelLabel(project)}", which this studio does not have.`);
      return false;
    }
    await selectModel(zooName);
  } else {
    const graph = parsed.graph!;
    const key = importedKey(project.model.fileName);
    useModelFiles.setState({ imported: { key, fileName: project.model.fileName, graph, notes: [] }, problem: undefined, notes: undefined });
    showModel(key, graph);
  }
  // After the model, which sets its default data.
  if (project.training) useStudio.getState().set({ data: choiceFromRef(useStudio.getState().data, project.training.data, project.training.loss) });
  // The preset picker shows where the plan came from when that was a preset.
  if (project.planSource && (PRESETS as readonly string[]).includes(project.planSource)) useStudio.getState().set({ preset: project.planSource as PresetName });
  if (project.plan) loadPlan(project.plan, project.planSource ?? project.name, true);
  if (project.planEdited) useEditor.setState({ edited: true });
  remember(project, text);
  const stored = project.cluster.kind === 'stored' ? ` Its cluster "${project.cluster.name}" is an SSH cluster: pick it under Clusters.` : '';
  notify('ok', `Opened ${project.name} (model ${modelLabel(project)}).${stored}`);
  return true;
}

export async function openProjectFile(): Promise<void> {
  const file = await pickFile(`${PROJECT_EXTENSION},.json,application/json`);
  if (!file) return;
  let text: string;
  try {
    text = await file.text();
  } catch (error) {
    return notify('error', `${file.name} could not be read (${(error as Error).message}).`);
  }
  await applyProject(text, file.name);
}

export async function openRecent(name: string): Promise<void> {
  const entry = useProject.getState().recent.find((r) => r.name === name);
  if (!entry?.text) return notify('error', `"${name}" was too large to keep in the recent list; open its ${projectFileName(name)} file instead.`);
  await applyProject(entry.text, projectFileName(name));
}
