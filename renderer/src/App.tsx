import { useEffect } from 'react';
import { GraphView } from './graph/GraphView';
import { installBenchHook } from './bench/benchHook';
import { DeployedJobsPanel } from './deploy/DeployedJobsPanel';
import { DeployProgress } from './deploy/DeployProgress';
import { ModelFileDrop } from './model/ModelFileControls';
import { StudioMenu } from './shell/StudioMenu';
import { initStudio } from './store/actions';
import { AutoPlanPanel } from './views/AutoPlanPanel';
import { FinalBanner } from './views/FinalBanner';
import { Header } from './views/Header';
import { LogPane } from './views/LogPane';
import { MembershipPanel } from './views/MembershipPanel';
import { Monitor } from './views/Monitor';
import { PlanPanel } from './views/PlanPanel';
import { PredictedTimeline } from './views/PredictedTimeline';
import { StatusLine } from './views/StatusLine';
import { TrainControls } from './views/TrainControls';

let started = false;

/** The studio window: the graph (the stage editor) with its predicted timeline and live charts; plan, auto-plan and log beside. */
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
      <main className="workspace">
        <div className="workspace__main">
          <GraphView />
          <PredictedTimeline />
          <Monitor />
        </div>
        <aside className="workspace__side">
          <TrainControls />
          <DeployProgress />
          <FinalBanner />
          <MembershipPanel />
          <PlanPanel />
          <AutoPlanPanel />
          <DeployedJobsPanel />
          <LogPane />
        </aside>
      </main>
      <StatusLine />
      <ModelFileDrop />
    </div>
  );
}
