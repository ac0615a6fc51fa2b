import { describe, expect, it } from 'vitest';
import { zooModel } from '../../engine/model/zoo.js';
import { intOption, joinNegativeValues, localAgentLimit, numberOption } from '../../engine/node/commands/optionValues.js';
import { planFileConflicts } from '../../engine/node/commands/planFileFlags.js';
import { runLength } from '../../engine/node/commands/train.js';
import { optimizerFrom } from '../../engine/node/trainingOptions.js';
import { presetPlan } from '../../engine/plan/presets.js';

/** Numbers on the command line are parsed strictly, and the message names option, value and what is accepted. */
describe('numeric options', () => {
  it.each([
    ['epochs', 'abc', /^--epochs "abc": not a number; expected a number above 0/],
    ['steps', '1.5', /^--steps "1.5": not a whole number; expected a whole number at least 1/],
    ['steps', '-5', /^--steps "-5": too small; expected a whole number at least 1/],
    ['checkpoint-every', '0', /^--checkpoint-every "0": too small/],
    ['checkpoint-every', 'abc', /^--checkpoint-every "abc": not a number/],
    ['lr', '1e400', /^--lr "1e400": too large to be a number \(it reads as Infinity\); expected a number above 0/],
    ['lr', '0', /^--lr "0": too small; expected a number above 0/],
    ['lr', '0x10', /^--lr "0x10": not a number/],
    ['validation-split', '1', /^--validation-split "1": too large; expected a number above 0 and below 1/],
  ])('--%s %s is refused', (key, value, message) => {
    const read = () => (['steps', 'checkpoint-every'].includes(key) ? intOption({ [key]: value }, key) : numberOption({ [key]: value }, key, key === 'validation-split' ? { above: 0, below: 1 } : { above: 0 }));
    expect(read).toThrow(message);
  });

  it('joins a negative number to the long option before it, so the strict checks see it', () => {
    expect(joinNegativeValues(['--steps', '-5', '--lr', '-.5', '--json'])).toEqual(['--steps=-5', '--lr=-.5', '--json']);
    // A short flag or a word after an option stays what it was.
    expect(joinNegativeValues(['--model', 'mlp', '-h', '--out', '-x'])).toEqual(['--model', 'mlp', '-h', '--out', '-x']);
  });

  it('accepts good values and absent options', () => {
    expect(intOption({ steps: ' 12 ' }, 'steps')).toBe(12);
    expect(numberOption({ lr: '1e-3' }, 'lr', { above: 0 })).toBe(0.001);
    expect(intOption({}, 'steps')).toBeUndefined();
  });

  it('train: how long, and every training option checked before anything runs', () => {
    expect(runLength({})).toEqual({ epochs: 5 });
    expect(runLength({ steps: '7' })).toEqual({ steps: 7 });
    expect(() => runLength({ steps: '7', epochs: '2' })).toThrow(/give one of them/);
    expect(() => optimizerFrom({ lr: '1e400' }, zooModel('mlp'), undefined)).toThrow(/--lr "1e400"/);
    expect(() => optimizerFrom({ momentum: '0.9' }, zooModel('mlp'), undefined)).toThrow(/go with --optimizer/);
  });

  it('the local agent cap reads its override strictly', () => {
    expect(localAgentLimit({})).toBe(64);
    expect(localAgentLimit({ SHOAL_MAX_LOCAL_AGENTS: '200' })).toBe(200);
    expect(() => localAgentLimit({ SHOAL_MAX_LOCAL_AGENTS: 'lots' })).toThrow(/SHOAL_MAX_LOCAL_AGENTS "lots": not a number/);
  });
});

describe('--plan-file beside flags that say otherwise', () => {
  const plan = presetPlan(zooModel('mlp'), 'pp1-dp1');

  it('names each disagreeing flag with the plan value', () => {
    const conflicts = planFileConflicts({ model: 'mlp', batch: '128', lr: '0.5', seed: '42' }, plan, 'mlp');
    expect(conflicts).toEqual(["--batch 128, but the plan's globalBatch is 64", "--lr 0.5, but the plan's optimizer.learningRate is 0.001"]);
  });

  it('passes flags that agree, and refuses another model or a preset', () => {
    expect(planFileConflicts({ batch: '64', lr: '0.001', optimizer: 'adam' }, plan, 'mlp')).toEqual([]);
    expect(planFileConflicts({ model: 'cnn', plan: 'pp2-dp1' }, plan, 'cnn')).toHaveLength(2);
  });
});
