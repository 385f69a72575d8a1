/**
 * A pass-through in front of the sandbox gateway, over real HTTP on 127.0.0.1, that records every
 * authorization and look-up it forwards: how tests count what reached the gateway. It can also hold the
 * next authorization until the test lets it through (a gateway slow to answer), lose the answers of the
 * next ones (the gateway decides, and the decision never comes back, as in a real time-out), or answer
 * the next requests 502 itself, as a gateway's failing load balancer would.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request as httpRequest } from 'undici';

export interface Forwarded {
  idempotencyKey: string;
  /** The gateway answered it from its idempotency records, deciding nothing again. */
  replayed: boolean;
  body: string;
  /** Whether the answer went back to the caller, or was lost. */
  delivered: boolean;
}

export interface GatewayProxy {
  url: string;
  /** The authorizations forwarded, in the order the gateway answered them. */
  forwarded: Forwarded[];
  /** The idempotency keys looked up (`GET …/by-idempotency-key/<key>`), in order. */
  lookedUp: string[];
  /** How many authorizations it forwarded. */
  count(): number;
  /** Holds the next authorization: `arrived` resolves when it comes, `release()` forwards it. */
  holdNext(): { arrived: Promise<void>; release(): void };
  /** Forwards the next `count` authorizations but never answers them; the caller times out. */
  loseNextAnswers(count: number): void;
  /** Answers the next `count` requests of any kind 502 without forwarding them. */
  failNext(count: number): void;
  close(): Promise<void>;
}

export async function startGatewayProxy(target: string): Promise<GatewayProxy> {
  const forwarded: Forwarded[] = [];
  const lookedUp: string[] = [];
  let hold: { arrive(): void; released: Promise<void> } | undefined;
  let toLose = 0;
  let toFail = 0;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      if (toFail > 0) {
        toFail--;
        response.writeHead(502, { 'content-type': 'text/plain' });
        response.end('Bad Gateway');
        return;
      }
      const authorizing = request.method === 'POST';
      const lookup = /\/by-idempotency-key\/([^/?]+)/.exec(request.url ?? '');
      if (lookup?.[1]) lookedUp.push(decodeURIComponent(lookup[1]));
      const held = authorizing ? hold : undefined;
      if (held) {
        hold = undefined;
        held.arrive();
        await held.released;
      }
      const lose = authorizing && toLose > 0;
      if (lose) toLose--;
      const headers = { ...request.headers };
      delete headers.host;
      delete headers['content-length'];
      const answer = await httpRequest(`${target}${request.url}`, {
        method: request.method as 'POST',
        headers,
        body: Buffer.concat(chunks),
      });
      const body = await answer.body.text();
      if (authorizing) {
        forwarded.push({
          idempotencyKey: String(request.headers['idempotency-key']),
          replayed: answer.headers['idempotent-replayed'] === 'true',
          body,
          delivered: !lose,
        });
      }
      if (lose) return;
      response.writeHead(answer.statusCode, { 'content-type': String(answer.headers['content-type']) });
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    forwarded,
    lookedUp,
    count: () => forwarded.length,
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
    loseNextAnswers(count) {
      toLose += count;
    },
    failNext(count) {
      toFail += count;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
