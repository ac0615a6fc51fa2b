import { Client, type ClientChannel, type ConnectConfig } from 'ssh2';
import { endpointLabel, type SshEndpoint, type SshHost } from '../../hosts/host.js';
import { authHandlerFor, type PassphrasePrompt } from './auth.js';
import { keyTypeOf } from './fingerprint.js';
import { HostKeyStore } from './hostKeys.js';
import { SshConnectError, explainSocketError, hostKeyError, timeoutError, whereOf } from './sshErrors.js';

/** What the user is asked when a host presents a key no store knows. */
export interface TrustRequest {
  /** `user@address:port` of the hop (a jump host or the target). */
  where: string;
  address: string;
  port: number;
  keyType: string;
  /** As `ssh-keygen -l` prints it: `SHA256:…`. */
  fingerprint: string;
}

export interface ConnectOptions {
  /** Decide on an unknown host key; true trusts it and records it in Shoal's store. Absent: refuse. */
  trustRequest?: (request: TrustRequest) => Promise<boolean> | boolean;
  passphrase?: PassphrasePrompt;
  /** Per hop, from TCP connect to authenticated; time spent waiting for trustRequest does not count. */
  timeoutMs?: number;
  hostKeys?: HostKeyStore;
}

export interface HostKeySeen {
  keyType: string;
  fingerprint: string;
  newlyTrusted: boolean;
}

export interface SshConnection {
  host: SshHost;
  /** The session on the target host. */
  client: Client;
  /** The target's host key as verified; newlyTrusted when the user trusted it during this connect. */
  hostKey: HostKeySeen;
  /** Close the target session and every jump session under it. */
  close(): void;
}

/**
 * Open an authenticated SSH session to `host`, through its ProxyJump chain, verifying every hop's host key.
 * Errors are SshConnectErrors that name the hop that failed.
 */
export async function connectHost(host: SshHost, options: ConnectOptions = {}): Promise<SshConnection> {
  const store = options.hostKeys ?? new HostKeyStore();
  const hops: SshEndpoint[] = [...host.jump, host];
  const clients: Client[] = [];
  let hostKey: HostKeySeen | undefined;
  const closeAll = () => [...clients].reverse().forEach((c) => c.end());
  for (let i = 0; i < hops.length; i++) {
    try {
      const sock = i === 0 ? undefined : await forwardThrough(clients[i - 1], hops[i - 1], hops[i]);
      const hop = await connectEndpoint(hops[i], sock, options, store);
      clients.push(hop.client);
      hostKey = hop.hostKey;
    } catch (err) {
      closeAll();
      const e = err instanceof SshConnectError ? err : new SshConnectError('protocol', (err as Error).message, whereOf(hops[i]));
      // A failure at a jump host says so, and which one, so the user does not debug the wrong machine.
      if (i < hops.length - 1 && e.kind !== 'jump')
        throw new SshConnectError(e.kind, `Jump host ${i + 1} of ${hops.length - 1} (${whereOf(hops[i])}) on the way to ${whereOf(host)}: ${e.message}`, e.where);
      throw e;
    }
  }
  const target = clients[clients.length - 1];
  return { host, client: target, hostKey: hostKey!, close: closeAll };
}

/** A TCP stream from the jump host `via` to `to`, to run the next SSH session over. */
function forwardThrough(client: Client, via: SshEndpoint, to: SshEndpoint): Promise<ClientChannel> {
  return new Promise((resolve, reject) => {
    client.forwardOut('127.0.0.1', 0, to.address, to.port, (err, stream) => {
      if (!err) return resolve(stream);
      reject(
        new SshConnectError(
          'jump',
          `Jump host ${whereOf(via)} could not open a connection to ${endpointLabel(to)}: ${err.message.replace(/^\(SSH\) /, '')}. Check that ${endpointLabel(to)} is up and reachable from the jump host, and that the jump host allows TCP forwarding.`,
          whereOf(via),
        ),
      );
    });
  });
}

function connectEndpoint(e: SshEndpoint, sock: ClientChannel | undefined, options: ConnectOptions, store: HostKeyStore): Promise<{ client: Client; hostKey: HostKeySeen }> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const auth = authHandlerFor(e, options.passphrase);
  return new Promise((resolve, reject) => {
    const client = new Client();
    let settled = false;
    // Set when we refused the host key, so the generic "Host denied" from ssh2 is replaced by ours.
    let refusal: SshConnectError | undefined;
    let hostKey: HostKeySeen | undefined;
    let timer: NodeJS.Timeout | undefined;
    const startTimer = () => {
      timer = setTimeout(() => fail(timeoutError(e, timeoutMs)), timeoutMs);
    };
    const fail = (err: SshConnectError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.destroy();
      reject(err);
    };
    client.once('ready', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ client, hostKey: hostKey! });
    });
    client.on('error', (err: Error & { code?: string; level?: string }) => fail(refusal ?? explainSocketError(err, e, auth.tried(), auth.missing())));
    client.once('close', () => fail(refusal ?? new SshConnectError('protocol', `${endpointLabel(e)} closed the connection before authentication finished.`, whereOf(e))));

    const hostVerifier = (key: Buffer, verify: (valid: boolean) => void): void => {
      const verdict = store.check(e.address, e.port, key);
      if (verdict.kind === 'known') {
        hostKey = { keyType: keyTypeOf(key), fingerprint: verdict.fingerprint, newlyTrusted: false };
        return verify(true);
      }
      if (verdict.kind !== 'unknown' || !options.trustRequest) {
        refusal = hostKeyError(e, verdict);
        return verify(false);
      }
      // A person may be reading the fingerprint: the handshake clock stops while they decide.
      clearTimeout(timer);
      const request: TrustRequest = { where: whereOf(e), address: e.address, port: e.port, keyType: verdict.keyType, fingerprint: verdict.fingerprint };
      Promise.resolve()
        .then(() => options.trustRequest!(request))
        .then((trusted) => {
          // Recorded before the handshake goes on, so a failed write refuses rather than trusts unrecorded.
          if (trusted === true) store.trust(e.address, e.port, key);
          return trusted === true;
        })
        .then(
          (trusted) => {
            if (trusted) hostKey = { keyType: verdict.keyType, fingerprint: verdict.fingerprint, newlyTrusted: true };
            else refusal = hostKeyError(e, verdict);
            if (!settled) startTimer();
            verify(trusted);
          },
          (err: Error) => {
            refusal = new SshConnectError('host-key-untrusted', `Trusting the host key of ${endpointLabel(e)} failed: ${err.message}`, whereOf(e));
            verify(false);
          },
        );
    };
    const preferred = store.preferredAlgorithms(e.address, e.port);
    const config: ConnectConfig = {
      host: e.address,
      port: e.port,
      username: e.user,
      // Our own timer replaces ssh2's readyTimeout, which would also run while the user reads a fingerprint.
      readyTimeout: 0,
      keepaliveInterval: 15_000,
      keepaliveCountMax: 4,
      hostVerifier,
      authHandler: auth.handler,
      ...(sock ? { sock } : {}),
      // Ask first for the key types already on record, so a known host is not reported as changed
      // merely because it also has a key of another type. (ssh2 applies remove, then prepend.)
      ...(preferred.length > 0 ? { algorithms: { serverHostKey: { remove: preferred, prepend: preferred } } as unknown as ConnectConfig['algorithms'] } : {}),
    };
    startTimer();
    client.connect(config);
  });
}
