import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { DatasetDescription } from '../../engine/data/datasetDescription.js';
import type { ModelArrays } from '../../engine/data/modelArrays.js';
import { openJsonLines } from '../../engine/wire/data/jsonLines.js';

const root = mkdtempSync(join(tmpdir(), 'shoal-jsonl-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const seqModel = (length: number, vocab = 50, classes = 2): ModelArrays => ({
  inputs: [{ name: 'tokens_in', shape: [length], dtype: 'int32', range: [0, vocab - 1] }],
  targets: [{ name: 'logits', shape: [], dtype: 'int32', range: [0, classes - 1] }],
});
/** JSON Lines as json.dumps writes them, one object a line. */
function jsonl(name: string, rows: unknown[], extra: Partial<DatasetDescription> = {}, blankAfter = -1): DatasetDescription {
  const text = rows.map((r, i) => JSON.stringify(r) + (i === blankAfter ? '\n' : '')).join('\n') + '\n';
  writeFileSync(join(root, name), text);
  return { format: 'jsonl', source: join(root, name), ...extra };
}
const open = (d: DatasetDescription, arrays: ModelArrays) => openJsonLines(d.source, d, arrays, 1);

describe('JSON Lines reader', () => {
  it('pads and truncates token ids to the model length, at the end by default or the start as pad_sequences', () => {
    const rows = [{ tokens: [5, 6, 7], label: 1 }, { tokens: [1, 2, 3, 4, 5, 6], label: 0 }, { tokens: [], label: 1 }];
    const post = open(jsonl('post.jsonl', rows), seqModel(4));
    expect([...post.train.gather(['tokens_in', 'logits'], [0, 1, 2])]).toEqual([5, 6, 7, 0, 1, 1, 2, 3, 4, 0, 0, 0, 0, 0, 1]);
    expect(post.describe).toMatch(/tokens_in ← "tokens" \(lengths 0–6, cut to 4\)/);
    post.close();
    const pre = open(jsonl('pre.jsonl', rows, { preprocessing: { padding: 'pre', truncating: 'pre', padValue: 9 } }), seqModel(4));
    expect([...pre.train.gather(['tokens_in'], [0, 1, 2])]).toEqual([9, 5, 6, 7, 3, 4, 5, 6, 9, 9, 9, 9]);
    pre.close();
  });

  it('maps class names to ids sorted by name, reads per-input keys, skips blank lines and caches its index', () => {
    const rows = [{ q: [1, 2], a: [3], label: 'spam' }, { q: [4], a: [5, 6], label: 'ham' }, { q: [7, 8], a: [], label: 'eggs' }];
    const model: ModelArrays = {
      inputs: [{ name: 'q', shape: [2], dtype: 'int32', range: [0, 9] }, { name: 'a', shape: [2], dtype: 'int32', range: [0, 9] }],
      targets: [{ name: 'out', shape: [3], dtype: 'float32', range: [0, 1] }],
    };
    const d = jsonl('two.jsonl', rows, { outputs: [{ layer: 'out', key: 'label' }] }, 0);
    const data = open(d, model);
    expect(data.classes.out).toEqual(['eggs', 'ham', 'spam']);
    expect([...data.train.gather(['q', 'a', 'out'], [1, 0])]).toEqual([4, 0, 5, 6, 0, 1, 0, 1, 2, 3, 0, 0, 0, 1]);
    data.close();
    const again = open(d, model);
    expect(again.describe).toMatch(/index cached/);
    again.close();
  });

  it('gives a mask input the lines do not carry: 1 where its tokens are, 0 where padded, at the end or the start', () => {
    const masked: ModelArrays = {
      inputs: [{ name: 'input_ids', shape: [4], dtype: 'int32', range: [0, 49] }, { name: 'attention_mask', shape: [4], dtype: 'float32' }],
      targets: [{ name: 'logits', shape: [], dtype: 'int32', range: [0, 1] }],
    };
    const rows = [{ input_ids: [5, 6], logits: 0 }, { input_ids: [1, 2, 3, 4, 5, 6], logits: 1 }];
    const post = open(jsonl('mask.jsonl', rows), masked);
    expect([...post.train.gather(['input_ids', 'attention_mask'], [0, 1])]).toEqual([5, 6, 0, 0, 1, 1, 0, 0, 1, 2, 3, 4, 1, 1, 1, 1]);
    expect(post.describe).toContain('attention_mask ← 1 where "input_ids" has a token, 0 where padded');
    post.close();
    const pre = open(jsonl('mask-pre.jsonl', rows, { preprocessing: { padding: 'pre', truncating: 'pre' } }), masked);
    expect([...pre.train.gather(['input_ids', 'attention_mask'], [0, 1])]).toEqual([0, 0, 5, 6, 0, 0, 1, 1, 3, 4, 5, 6, 1, 1, 1, 1]);
    pre.close();
    // A mask the lines carry is read as they give it.
    const given = open(jsonl('mask-given.jsonl', [{ input_ids: [5, 6], attention_mask: [1, 0], logits: 0 }]), masked);
    expect([...given.train.gather(['attention_mask'], [0])]).toEqual([1, 0, 0, 0]);
    given.close();
    const two: ModelArrays = { ...masked, inputs: [...masked.inputs, { name: 'type_ids', shape: [4], dtype: 'int32', range: [0, 1] }] };
    expect(() => open(jsonl('mask-two.jsonl', [{ input_ids: [1], type_ids: [0], logits: 0 }]), two)).toThrow(/model input 'attention_mask' looks like a mask of 4, but 2 token inputs \('input_ids', 'type_ids'\).*add the key "attention_mask"/);
  });

  it('reports bad lines by number: invalid JSON, a missing key, an id outside the vocabulary, a label out of range', () => {
    expect(() => open(jsonl('bad.jsonl', []), seqModel(3))).toThrow(/no lines/);
    writeFileSync(join(root, 'broken.jsonl'), '{"tokens":[1],"label":0}\n{"tokens":[1,\n');
    expect(() => open({ format: 'jsonl', source: join(root, 'broken.jsonl') }, seqModel(3))).toThrow(/broken\.jsonl line 2: not valid JSON/);
    expect(() => open(jsonl('missing.jsonl', [{ tokens: [1], label: 0 }, { tokens: [2] }]), seqModel(3))).toThrow(/missing\.jsonl line 2: no "label"/);
    expect(() => open(jsonl('vocab.jsonl', [{ tokens: [1], label: 0 }, { tokens: [2, 77], label: 1 }]), seqModel(3))).toThrow(/vocab\.jsonl line 2: token id 77 in "tokens" is outside 0\.\.49/);
    expect(() => open(jsonl('label.jsonl', [{ tokens: [1], label: 0 }, { tokens: [2], label: 3 }]), seqModel(3))).toThrow(/label\.jsonl key "label" line 2: label 3, but model output 'logits' takes class ids 0\.\.1/);
    expect(() => open(jsonl('float.jsonl', [{ tokens: [1.5], label: 0 }]), seqModel(3))).toThrow(/float\.jsonl line 1: "tokens" holds 1\.5, not a token id/);
    expect(() => open(jsonl('nokey.jsonl', [{ text: [1], label: 0 }]), seqModel(3))).toThrow(/no key for model layer 'tokens_in': expected "tokens" or "input_ids" or "x" or "tokens_in"; the lines have "text", "label"/);
  });
});
