/**
 * A pass-through in front of the sandbox gateway, over real HTTP on 127.0.0.1, that records the
 * `Idempotency-Key` of every authorization it forwards: how tests count what reached the gateway.
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
  close(): Promise<void>;
}

export async function startGatewayProxy(target: string): Promise<GatewayProxy> {
  const keys: string[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      if (request.method === 'POST') keys.push(String(request.headers['idempotency-key']));
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
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
