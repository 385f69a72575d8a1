/**
 * A pass-through in front of the sandbox gateway, over real HTTP on 127.0.0.1, that records the
 * `Idempotency-Key` of every authorization it forwards: how tests count what reached the gateway. It can
 * also hold the next authorization until the test lets it through: a gateway slow to answer.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request as httpRequest } from 'undici';

export interface GatewayProxy {
  url: string;
  /** The idempotency keys of the authorizations forwarded, in order. */
  keys: string[];
  /** How many authorizations it forwarded. */
  count(): number;
  /** Holds the next authorization: `arrived` resolves when it comes, `release()` forwards it. */
  holdNext(): { arrived: Promise<void>; release(): void };
  close(): Promise<void>;
}

export async function startGatewayProxy(target: string): Promise<GatewayProxy> {
  const keys: string[] = [];
  let hold: { arrive(): void; released: Promise<void> } | undefined;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      if (request.method === 'POST') {
        const held = hold;
        hold = undefined;
        if (held) {
          held.arrive();
          await held.released;
        }
        keys.push(String(request.headers['idempotency-key']));
      }
      const headers = { ...request.headers };
      delete headers.host;
      delete headers['content-length'];
      const forwarded = await httpRequest(`${target}${request.url}`, {
        method: request.method as 'POST',
        headers,
        body: Buffer.concat(chunks),
      });
      const body = Buffer.from(await forwarded.body.arrayBuffer());
      response.writeHead(forwarded.statusCode, { 'content-type': String(forwarded.headers['content-type']) });
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    keys,
    count: () => keys.length,
    holdNext() {
      let arrive = () => {};
      let release = () => {};
      const arrived = new Promise<void>((resolve) => {
        arrive = resolve;
      });
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      hold = { arrive, released };
      return { arrived, release };
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
