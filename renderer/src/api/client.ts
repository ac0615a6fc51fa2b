import { describeIssues } from '../../../engine/protocol/describeIssues';
import { STUDIO_API, STUDIO_METHODS, STUDIO_STREAMS, type StudioCalls, type StudioMethod, type StudioStream } from '../../../engine/protocol/studioApi';
import { takeAccessToken } from './token';
import type { Transport } from './transport';
import { connectWebSocket } from './wsTransport';

export type StudioClient = StudioCalls & {
  shell: 'electron' | 'web';
  /** Called when the connection to the studio is lost for good. */
  onDisconnect(listener: (reason: string) => void): void;
};

function notUnderstood(what: string, error: { issues: Parameters<typeof describeIssues>[0] }): Error {
  return new Error(`The studio answered ${what} with data this page does not understand (${describeIssues(error.issues)}). Reload the page; if that does not help, the studio and this page are of different versions.`);
}

/**
 * The StudioApi over a transport, built from the table (STUDIO_API): one function per method, whose
 * result is checked against the method's result schema; errors are exceptions with the server's message.
 */
export function clientOver(transport: Transport): StudioClient {
  const call = async (method: StudioMethod, params: unknown[]): Promise<unknown> => {
    // JSON has no undefined: an optional parameter left out is not sent as null.
    while (params.length > 0 && params[params.length - 1] === undefined) params = params.slice(0, -1);
    const result = await transport.call(method, params);
    if (!result.ok) throw new Error(result.error);
    // A method that only acts answers null (JSON's undefined).
    const checked = STUDIO_API[method].result.safeParse(result.value ?? undefined);
    if (!checked.success) throw notUnderstood(method, checked.error);
    return checked.data;
  };
  const subscribe = (stream: StudioStream, listener: (...message: unknown[]) => void) =>
    transport.subscribe((event) => {
      if (event.stream !== stream) return;
      const checked = STUDIO_API[stream].message.safeParse(event.message);
      // A listener cannot be handed an error: a message it could not read is reported and skipped.
      if (checked.success) listener(...checked.data);
      else console.error(notUnderstood(stream, checked.error).message);
    });
  const calls = Object.fromEntries(STUDIO_METHODS.map((method) => [method, (...params: unknown[]) => call(method, params)]));
  const streams = Object.fromEntries(STUDIO_STREAMS.map((stream) => [stream, (listener: (...message: unknown[]) => void) => subscribe(stream, listener)]));
  // The entries are the table's, each typed by it (StudioCalls is derived from STUDIO_API).
  return { ...calls, ...streams, shell: transport.shell, onDisconnect: (listener: (reason: string) => void) => transport.onClose?.(listener) } as unknown as StudioClient;
}

/** Connect through Electron's bridge when present, else through the browser shell's WebSocket. */
export async function connectStudio(): Promise<StudioClient> {
  if (window.shoal) return clientOver(window.shoal);
  const token = takeAccessToken();
  if (!token) throw new Error('No access token in the page address. Open the full URL the studio printed (it ends in #token=…).');
  return clientOver(await connectWebSocket(token));
}
