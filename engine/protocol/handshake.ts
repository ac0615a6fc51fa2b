import { z } from 'zod';
import { AgentDeviceSchema } from './events.js';

/**
 * The version of the wire between studio, coordinator and agents: every message schema in
 * engine/protocol (agentRequests, agentReplies, controlWire, handshake). Both ends of every
 * connection send it in the handshake and refuse a mismatch, so an agent bundle uploaded by an older
 * (or newer) studio fails at once with a message that says to redeploy, not obscurely mid-job.
 * Raise it with any change to a message a process from another version would misread.
 * 3: the hello travels after the proofs, in its own frame (the handshake's frames stay small).
 * 4: agents say their device slot and device; the model graph may hold layers tfjs-layers describes; rows carry masks.
 */
export const PROTOCOL_VERSION = 4;
/** What a peer that sends no version speaks: the unversioned wire before the handshake carried one. */
export const UNVERSIONED_PROTOCOL = 1;

/** The version a handshake frame carries, or UNVERSIONED_PROTOCOL for a peer from before versions. */
export function protocolOf(header: Record<string, unknown>): number {
  return typeof header.protocol === 'number' ? header.protocol : UNVERSIONED_PROTOCOL;
}

/** The refusal both ends give when the versions differ (`theirs` is the peer's). */
export function protocolMismatch(peer: string, theirs: number, ours = PROTOCOL_VERSION): string {
  return (
    `${peer} speaks Shoal wire protocol ${theirs}, this process speaks protocol ${ours}: they come from different Shoal versions. ` +
    `Redeploy the agent (deploy the job again from this studio or with \`shoal deploy\`, which uploads the current agent bundle) so that studio, coordinator and agents match.`
  );
}

/**
 * The handshake's frames (tag `__handshake`), in order: the listener's challenge, the dialler's
 * proof, the listener's proof, then the dialler's hello (who it is; it may be large, a state fetch names
 * every tensor, so it is sent only once both ends have proved the secret and lifted the small frame
 * limit of unauthenticated peers). Or a refusal naming why: a version mismatch, a wrong secret, or
 * `busy` (too many connections authenticating at once: the dialler tries again shortly).
 */
export const HandshakeFrameSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('challenge'), protocol: z.number().int(), nonce: z.string() }),
  z.object({ type: z.literal('auth'), protocol: z.number().int(), proof: z.string(), nonce: z.string() }),
  z.object({ type: z.literal('welcome'), proof: z.string() }),
  z.object({ type: z.literal('hello'), hello: z.record(z.string(), z.unknown()) }),
  z.object({ type: z.literal('refused'), message: z.string(), busy: z.boolean().optional() }),
]);
export type HandshakeFrame = z.infer<typeof HandshakeFrameSchema>;

/** Who connects to a coordinator, said in the handshake's hello. */
export const CoordinatorHelloSchema = z.discriminatedUnion('role', [
  /** An agent joining the job: where its peers reach it and what it runs on. */
  z.object({
    role: z.literal('agent'),
    host: z.string(),
    pid: z.number().int(),
    peerHost: z.string(),
    peerPort: z.number().int(),
    backend: z.string(),
    /** The rank the deploy started it for (the plan's device it is on); absent: any rank. */
    slot: z.number().int().min(0).optional(),
    device: AgentDeviceSchema.optional(),
  }),
  /** A studio or `shoal attach` following the event stream from event `since` on. */
  z.object({ role: z.literal('studio'), since: z.number().int().min(0).default(0) }),
  /** A controller asking for resizes (controlWire.ts). */
  z.object({ role: z.literal('control') }),
]);
export type CoordinatorHello = z.infer<typeof CoordinatorHelloSchema>;
export type AgentHello = Extract<CoordinatorHello, { role: 'agent' }>;

/** Who connects to an agent's peer listener: a peer linking up (by rank) or one fetching held state. */
export const PeerHelloSchema = z.union([
  z.object({ purpose: z.literal('state'), names: z.array(z.string()) }),
  z.object({ rank: z.number().int().min(0) }),
]);
export type PeerHello = z.infer<typeof PeerHelloSchema>;
