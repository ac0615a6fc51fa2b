import { useMemo } from 'react';
import { useStudio } from '../store/studioStore';
import { predictJob } from './jobPrediction';
import type { JobPrediction } from './jobPrediction';

/** The predicted step of the current job's plan, recomputed only when the plan or the profile changes. */
export function useJobPrediction(): JobPrediction | undefined {
  const plan = useStudio((s) => s.job?.plan);
  const agents = useStudio((s) => s.job?.agents ?? 0);
  const profile = useStudio((s) => s.job?.metrics.profile);
  const model = useStudio((s) => s.model);
  return useMemo(() => (plan && model ? predictJob(plan, model, agents, profile) : undefined), [plan, model, agents, profile]);
}
