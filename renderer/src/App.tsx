import { useEffect } from 'react';
import { GraphView } from './graph/GraphView';
import { installBenchHook } from './bench/benchHook';
import { DeployedJobsPanel } from './deploy/DeployedJobsPanel';
import { DeployProgress } from './deploy/DeployProgress';
import { ModelFileDrop } from './model/ModelFileControls';
import { LowerPane } from './shell/LowerPane';
import { ShortcutSheet } from './shell/ShortcutSheet';
import { StudioMenu } from './shell/StudioMenu';
import { Workspace } from './shell/Workspace';
import { initStudio } from './store/actions';
import { AutoPlanPanel } from './views/AutoPlanPanel';
import { FinalBanner } from './views/FinalBanner';
import { Header } from './views/Header';
import { LogPane } from './views/LogPane';
import { MembershipPanel } from './views/MembershipPanel';
import { PlanPanel } from './views/PlanPanel';
import { StatusLine } from './views/StatusLine';
import { TrainControls } from './views/TrainControls';

let started = false;

/**
 * The studio window: the graph (the stage editor) above the predicted timeline and the Monitor (tabs),
 * train, plan, auto-plan and log in the side column; the panes resize with splitters (shell/Workspace).
 */
export function App() {
  useEffect(() => {
    // StrictMode runs effects twice in development; connect once per page.
    if (started) return;
    started = true;
    void initStudio().then(installBenchHook);
  }, []);
  return (
    <div className="app">
      <Header />
      <StudioMenu />
      <Workspace
        graph={<GraphView />}
        lower={<LowerPane />}
        side={
          <>
            <TrainControls />
            <DeployProgress />
            <FinalBanner />
            <MembershipPanel />
            <PlanPanel />
            <AutoPlanPanel />
            <DeployedJobsPanel />
            <LogPane />
          </>
        }
      />
      <StatusLine />
      <ModelFileDrop />
      <ShortcutSheet />
    </div>
  );
}
