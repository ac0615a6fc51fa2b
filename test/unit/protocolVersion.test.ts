import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../engine/protocol/handshake.js';
import { Connection } from '../../engine/wire/connection.js';
import { connectAuthenticated, listenAuthenticated } from '../../engine/wire/handshake.js';

/**
 * The handshake's protocol version: a studio or coordinator meeting an agent bundle from another Shoal
 * version (or the reverse) refuses it at once, naming both versions and saying to redeploy the agent.
 * The other end is played by hand here, as an older or newer Shoal would speak.
 */
const servers: Server[] = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));

async function listen(refused: string[]): Promise<number> {
  const server = await listenAuthenticated('127.0.0.1', 0, 'secret', () => {}, (_peer, reason) => refused.push(reason));
  servers.push(server);
  return (server.address() as { port: number }).port;
}

/** A raw framed connection to `port`, speaking the handshake by hand. */
async function dial(port: number): Promise<Connection> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return new Connection(socket, 'listener');
}

describe('the handshake protocol version', () => {
  it('a listener refuses an agent from before versions, naming both and saying to redeploy', async () => {
    const refused: string[] = [];
    const conn = await dial(await listen(refused));
    await conn.receive('__handshake');
    // What an agent bundle of the unversioned wire sends: no `protocol` field.
    conn.send({ type: 'auth', tag: '__handshake', proof: 'x', nonce: 'y', hello: { role: 'agent' } });
    const answer = await conn.receive('__handshake');
    expect(answer.header.type).toBe('refused');
    expect(String(answer.header.message)).toMatch(new RegExp(`protocol 1, this process speaks protocol ${PROTOCOL_VERSION}.*Redeploy the agent`));
    expect(refused[0]).toMatch(/Redeploy the agent/);
  });

  it('a listener refuses a newer protocol the same way', async () => {
    const refused: string[] = [];
    const conn = await dial(await listen(refused));
    await conn.receive('__handshake');
    conn.send({ type: 'auth', tag: '__handshake', protocol: PROTOCOL_VERSION + 1, proof: 'x', nonce: 'y', hello: {} });
    const answer = await conn.receive('__handshake');
    expect(String(answer.header.message)).toMatch(new RegExp(`protocol ${PROTOCOL_VERSION + 1}, this process speaks protocol ${PROTOCOL_VERSION}`));
  });

  it('a dialler refuses a listener of another version before proving anything', async () => {
    const server = createServer((socket: Socket) => {
      // An older coordinator: its challenge carries no version.
      new Connection(socket, 'dialler').send({ type: 'challenge', tag: '__handshake', nonce: 'n' });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    await expect(connectAuthenticated('127.0.0.1', port, 'secret', { role: 'agent' })).rejects.toThrow(
      new RegExp(`127\\.0\\.0\\.1:${port} speaks Shoal wire protocol 1, this process speaks protocol ${PROTOCOL_VERSION}.*Redeploy the agent`),
    );
  });

  it('ends of the same version still connect', async () => {
    const port = await listen([]);
    const conn = await connectAuthenticated('127.0.0.1', port, 'secret', {});
    expect(conn.closed).toBe(false);
    conn.close();
  });
});
