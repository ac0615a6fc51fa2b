import type { ReactNode } from 'react';
import { Group, Panel, Separator, useDefaultLayout } from 'react-resizable-panels';
import './layout.css';

/**
 * The studio's panes: the graph above a tabbed lower pane (predicted timeline, Monitor) on the left,
 * the side column (train, plan, log) on the right, with splitters between them. Their sizes are kept
 * in localStorage (`react-resizable-panels` saves each group's layout under its id), so a reload
 * opens the panes as they were left. The graph never gets less than half of the window's height:
 * its minimum is given in `vh`, so it holds at any window size.
 */
const STORAGE_PREFIX = 'shoal.layout';

function storage(): Pick<Storage, 'getItem' | 'setItem'> | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined; // storage unavailable: the panes keep their defaults
  }
}

export function Workspace({ graph, lower, side }: { graph: ReactNode; lower: ReactNode; side: ReactNode }) {
  const columns = useDefaultLayout({ id: `${STORAGE_PREFIX}.columns`, storage: storage(), onlySaveAfterUserInteractions: true });
  const rows = useDefaultLayout({ id: `${STORAGE_PREFIX}.rows`, storage: storage(), onlySaveAfterUserInteractions: true });
  return (
    <Group
      orientation="horizontal"
      id="workspace-columns"
      className="workspace"
      data-testid="workspace"
      defaultLayout={columns.defaultLayout}
      onLayoutChanged={columns.onLayoutChanged}
    >
      <Panel id="main-pane" minSize="50%" className="workspace__main-pane">
        <Group orientation="vertical" id="workspace-rows" className="workspace__main" defaultLayout={rows.defaultLayout} onLayoutChanged={rows.onLayoutChanged}>
          <Panel id="graph-pane" minSize="52vh" defaultSize="66%" className="workspace__pane workspace__pane--graph">
            {graph}
          </Panel>
          <Separator className="splitter splitter--rows" data-testid="splitter-rows" aria-label="Resize the graph and the lower pane" />
          <Panel id="lower-pane" minSize="96px" className="workspace__pane workspace__pane--lower">
            {lower}
          </Panel>
        </Group>
      </Panel>
      <Separator className="splitter splitter--columns" data-testid="splitter-columns" aria-label="Resize the side column" />
      <Panel id="side-pane" defaultSize="380px" minSize="280px" maxSize="50%" groupResizeBehavior="preserve-pixel-size" className="workspace__pane workspace__pane--side">
        <aside className="workspace__side" aria-label="Train, plan and log">
          {side}
        </aside>
      </Panel>
    </Group>
  );
}
