import { useEffect, useRef } from 'react';
import type { KeyboardEvent } from 'react';
import type { WeightSbp } from '../../../engine/plan/sbp';
import { weightLayout } from '../../../engine/plan/sbp';
import { useStudio } from '../store/studioStore';
import { mergeNext, moveTo, refusal, splitAt } from './commands';
import { applyEdit, openMenu, useEditor } from './editorStore';
import { mergeWithNext, moveLayers, selectionRun, setSharding, splitStageAt } from './planEdits';

interface Item {
  label: string;
  key?: string;
  disabled?: string;
  checked?: boolean;
  testId: string;
  run(): void;
}

function useItems(): { title: string; items: Item[] } | undefined {
  const menu = useEditor((s) => s.menu);
  const plan = useEditor((s) => s.plan);
  const model = useStudio((s) => s.model);
  if (!menu || !plan || !model) return undefined;
  const { ids } = menu;
  const run = selectionRun(plan, ids);
  const title = ids.length === 1 ? ids[0] : `${ids[0]} … ${ids[ids.length - 1]} (${ids.length} layers)`;
  if ('refused' in run) return { title, items: [{ label: run.refused, disabled: run.refused, testId: 'menu-none', run: () => undefined }] };
  const items: Item[] = plan.stages.flatMap((_, t) => {
    if (t === run.stage) return [];
    const key = t === run.stage + 1 ? ']' : t === run.stage - 1 ? '[' : undefined;
    return [{ label: `Move to stage ${t}`, key, disabled: refusal(moveLayers(plan, ids, t)), testId: `menu-move-${t}`, run: () => moveTo(ids, t) }];
  });
  items.push({ label: 'Split stage here', key: 'S', disabled: refusal(splitStageAt(plan, plan.stages[run.stage].layers[run.first])), testId: 'menu-split', run: () => splitAt(ids) });
  items.push({ label: `Merge stage ${run.stage} with next`, key: 'M', disabled: refusal(mergeWithNext(plan, run.stage)), testId: 'menu-merge', run: () => mergeNext(ids) });
  const layer = ids.length === 1 ? model.layers.find((l) => l.id === ids[0]) : undefined;
  const input = layer && model.layers.find((l) => l.id === layer.inputs[0]);
  const layout = layer && layer.params > 0 ? weightLayout(layer, input?.outputShape ?? []) : undefined;
  if (layer && layout) {
    const current = plan.sharding[layer.id]?.weight ?? 'B';
    const tp = plan.stages[run.stage].tensorParallel;
    const note = tp === 1 ? ` — stage ${run.stage} has tensor-parallel 1` : '';
    const option = (label: string, weight: WeightSbp, testId: string): Item => ({
      label: `${label}${weight === 'B' ? '' : note}`,
      checked: current === weight,
      testId,
      run: () => applyEdit(setSharding(plan, layer.id, weight)),
    });
    items.push(
      option('Replicate (B)', 'B', 'menu-shard-replicate'),
      option(`Column-parallel S(${layout.produced})`, `S(${layout.produced})`, 'menu-shard-column'),
      option(`Row-parallel S(${layout.contracted})`, `S(${layout.contracted})`, 'menu-shard-row'),
    );
  }
  return { title, items };
}

/** The context menu of the selected layers: move, split, merge, and (for weighted layers) sharding. */
export function LayerMenu() {
  const menu = useEditor((s) => s.menu);
  const content = useItems();
  const list = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!menu) return;
    list.current?.querySelector<HTMLButtonElement>('button:not(:disabled)')?.focus();
    const close = (e: globalThis.MouseEvent) => {
      if (!list.current?.contains(e.target as Node)) openMenu(undefined);
    };
    window.addEventListener('mousedown', close);
    return () => window.removeEventListener('mousedown', close);
  }, [menu]);
  if (!menu || !content) return null;
  const onKeyDown = (e: KeyboardEvent) => {
    const buttons = [...(list.current?.querySelectorAll<HTMLButtonElement>('button:not(:disabled)') ?? [])];
    const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
    if (e.key === 'Escape') openMenu(undefined);
    else if (e.key === 'ArrowDown') buttons[(at + 1) % buttons.length]?.focus();
    else if (e.key === 'ArrowUp') buttons[(at - 1 + buttons.length) % buttons.length]?.focus();
    else return;
    e.preventDefault();
    e.stopPropagation();
  };
  const left = Math.min(menu.x, window.innerWidth - 300);
  const top = Math.min(menu.y, window.innerHeight - 40 - 30 * (content.items.length + 1));
  return (
    <div ref={list} className="menu" role="menu" aria-label={`Layer ${content.title}`} data-testid="layer-menu" style={{ left, top }} onKeyDown={onKeyDown}>
      <div className="menu__title">{content.title}</div>
      {content.items.map((item, i) => (
        <button
          key={item.testId}
          type="button"
          role={item.checked === undefined ? 'menuitem' : 'menuitemradio'}
          aria-checked={item.checked}
          className={`menu__item${i > 0 && item.testId.startsWith('menu-shard') && !content.items[i - 1].testId.startsWith('menu-shard') ? ' menu__item--group' : ''}`}
          data-testid={item.testId}
          disabled={!!item.disabled}
          title={item.disabled}
          onClick={() => {
            item.run();
            openMenu(undefined);
          }}
        >
          <span className="menu__check" aria-hidden="true">{item.checked ? '●' : ''}</span>
          <span className="menu__label">{item.label}</span>
          {item.key && <kbd>{item.key}</kbd>}
        </button>
      ))}
    </div>
  );
}
