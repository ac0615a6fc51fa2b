import { expect, test } from 'vitest';
import { describeEvent } from '../../engine/node/commands/eventPrinter.js';

/** GPipe and 1F1B have no delay, lr scaling or correction: those are PipeMare's, printed for asynchronous schedules only. */
test('a synchronous pipeline line says utilization only; an asynchronous one says delay, lr and correction too', () => {
  const sync = describeEvent({ type: 'pipeline', step: 25, stage: 1, delay: 0, utilization: 0.42, lrMultiplier: 1, correction: 0, asynchronous: false });
  expect(sync).toBe('  stage 1: utilization 42%');
  const async = describeEvent({ type: 'pipeline', step: 25, stage: 0, delay: 3, utilization: 0.9, lrMultiplier: 0.5, correction: 0.001, asynchronous: true });
  expect(async).toBe('  stage 0: delay 3, utilization 90%, lr ×0.500, correction 1.00e-3');
  // An asynchronous stage whose values happen to be neutral (the last stage) still says them.
  expect(describeEvent({ type: 'pipeline', step: 0, stage: 2, delay: 0, utilization: 1, lrMultiplier: 1, correction: 0, asynchronous: true })).toContain('delay 0');
  // A history written before `asynchronous` was sent: neutral values read as synchronous.
  expect(describeEvent({ type: 'pipeline', step: 50, stage: 0, delay: 0, utilization: 0.5, lrMultiplier: 1, correction: 0 })).toBe('  stage 0: utilization 50%');
});
