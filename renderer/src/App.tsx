import { useEffect } from 'react';
import { GraphView } from './graph/GraphView';
import { initStudio } from './store/actions';
import { FinalBanner } from './views/FinalBanner';
import { Header } from './views/Header';
import { LogPane } from './views/LogPane';
import { Monitor } from './views/Monitor';
import { PlanPanel } from './views/PlanPanel';
import { StatusLine } from './views/StatusLine';
import { TrainControls } from './views/TrainControls';

let started = false;

/** The studio window: model and graph on the left, plan and results on the right, live charts below. */
export function App() {
  useEffect(() => {
    // StrictMode runs effects twice in development; connect once per page.
    if (started) return;
    started = true;
    void initStudio();
  }, []);
  return (
    <div className="app">
      <Header />
      <main className="workspace">
        <div className="workspace__main">
          <GraphView />
          <Monitor />
        </div>
        <aside className="workspace__side">
          <PlanPanel />
          <TrainControls />
          <FinalBanner />
          <LogPane />
        </aside>
      </main>
      <StatusLine />
    </div>
  );
}
