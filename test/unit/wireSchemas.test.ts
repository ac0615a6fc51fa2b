import { describe, expect, it } from 'vitest';
import { AgentMessageSchema, REPLY_TO } from '../../engine/protocol/agentReplies.js';
import { AgentRequestSchema } from '../../engine/protocol/agentRequests.js';
import { ControlRequestSchema } from '../../engine/protocol/controlWire.js';
import { AgentConfigSchema } from '../../engine/protocol/processConfig.js';
import { parseHeader } from '../../engine/protocol/wireHeader.js';
import { parseConfig } from '../../agents/runtime/readConfig.js';

/** The wire's schemas: a bad header or config is refused with the message type and the field named. */
describe('wire schemas', () => {
  it('name the message type, the sender and the field of a bad header', () => {
    const bad = { type: 'stepDone', requestId: 3, rank: 1, step: 'seven', loss: 0.5, computeMs: 1, allReduceMs: 0 };
    expect(() => parseHeader(AgentMessageSchema, bad, 'rank 1 on local-1')).toThrow(/^Unreadable "stepDone" message from rank 1 on local-1: step: .*number/);
  });

  it('refuse a message type the union does not know', () => {
    expect(() => parseHeader(AgentRequestSchema, { type: 'teleport' }, 'the coordinator')).toThrow(/Unreadable "teleport" message from the coordinator/);
  });

  it('keep every field of a valid request and reply', () => {
    const step = parseHeader(AgentRequestSchema, { type: 'step', requestId: 9, step: 4, timeline: true }, 'the coordinator');
    expect(step).toEqual({ type: 'step', requestId: 9, step: 4, timeline: true });
    const reply = { type: 'aborted', requestId: 2, rank: null, step: 5, undone: false };
    expect(parseHeader(AgentMessageSchema, reply, 'an agent')).toEqual(reply);
  });

  it('pair every request that is answered with a reply type of the union', () => {
    const replyTypes = new Set(AgentMessageSchema.options.map((o) => o.shape.type.value));
    for (const reply of Object.values(REPLY_TO)) expect(replyTypes.has(reply)).toBe(true);
  });

  it('fill a resize request’s defaults and refuse negative ranks', () => {
    expect(ControlRequestSchema.parse({ type: 'resize', add: 2 })).toEqual({ type: 'resize', add: 2, remove: [] });
    expect(ControlRequestSchema.safeParse({ type: 'resize', remove: [-1] }).success).toBe(false);
  });

  it('refuse a process config that lacks a field, naming it', () => {
    expect(() => parseConfig(AgentConfigSchema, { secret: 's', bindHost: '127.0.0.1' }, 'agent')).toThrow(/agent configuration .*coordinator: .*Redeploy/);
  });
});
