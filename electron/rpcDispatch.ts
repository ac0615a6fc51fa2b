import { describeIssues } from '../engine/protocol/describeIssues.js';
import { RpcCallSchema, STUDIO_API, STUDIO_STREAMS, type RpcCall, type RpcEvent, type RpcResult, type StudioApi } from '../engine/protocol/studioApi.js';

/**
 * The one place where an untrusted request from a renderer (WebSocket or IPC) becomes a StudioApi call.
 * The call and its parameters are parsed with the method's schemas from STUDIO_API, once: the services
 * receive checked values. Failures come back as readable messages and never as stack traces.
 */

/** A message safe to show a user: the error's message only, bounded in length. */
export function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : typeof error === 'string' ? error : 'Unknown error.';
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

async function invoke(api: StudioApi, call: RpcCall): Promise<unknown> {
  const parsed = STUDIO_API[call.method].params.safeParse(call.params);
  if (!parsed.success) throw new Error(`Bad parameters for ${call.method}: ${describeIssues(parsed.error.issues)}`);
  // The table ties each method's parameter schema to its signature (StudioApi is derived from it).
  const method = api[call.method] as (...params: unknown[]) => Promise<unknown>;
  return method.apply(api, parsed.data);
}

/** Forward every subscription of the table (job events) as RpcEvents; returns the function that stops them all. */
export function forwardStreams(api: StudioApi, send: (message: RpcEvent) => void): () => void {
  const stops = STUDIO_STREAMS.map((stream) => api[stream]((...message) => send({ kind: 'event', stream, message })));
  return () => {
    for (const stop of stops) stop();
  };
}

/** Parse a raw request and run it; always resolves to an RpcResult. */
export async function dispatchCall(api: StudioApi, raw: unknown): Promise<RpcResult> {
  const parsed = RpcCallSchema.safeParse(raw);
  if (!parsed.success) {
    const id = typeof raw === 'object' && raw !== null && Number.isInteger((raw as { id?: unknown }).id) ? (raw as { id: number }).id : -1;
    return { kind: 'result', id, ok: false, error: `Malformed request: ${describeIssues(parsed.error.issues)}` };
  }
  const call = parsed.data;
  try {
    const value = await invoke(api, call);
    // JSON has no undefined: a method that only acts answers null.
    return { kind: 'result', id: call.id, ok: true, value: value ?? null };
  } catch (error) {
    return { kind: 'result', id: call.id, ok: false, error: errorMessage(error) };
  }
}
