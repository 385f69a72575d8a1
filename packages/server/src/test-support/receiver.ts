/**
 * A real webhook receiver for tests: an HTTP server on 127.0.0.1 that records every request and answers
 * with the statuses it is told to, in order. `next()` resolves when a request arrives, so tests await
 * deliveries instead of sleeping.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  /** The name the client asked for in TLS (SNI); undefined over plain HTTP. */
  servername?: string;
  body: string;
  receivedAt: number;
}

/** The body of a received webhook, once its signature verifies under `secret` (it throws otherwise). */
export function verifiedBody<T>(secret: string, webhook: ReceivedWebhook): T {
  return new Webhook(secret).verify(webhook.body, {
    'webhook-id': String(webhook.headers['webhook-id']),
    'webhook-timestamp': String(webhook.headers['webhook-timestamp']),
    'webhook-signature': String(webhook.headers['webhook-signature']),
  }) as T;
}

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** Statuses to answer with, used in order; 200 once they run out. */
  respondWith(...statuses: number[]): void;
  /** Resolves with the n-th request (1-based) once it has arrived. */
  nth(n: number): Promise<ReceivedWebhook>;
  next(): Promise<ReceivedWebhook>;
  close(): Promise<void>;
}

/**
 * `tls`: answer https with this certificate and key (see tls.ts), at `https://localhost:<port>`, the name
 * its certificates are for; the server still listens on 127.0.0.1 only.
 */
export async function startReceiver(
  options: { port?: number; path?: string; tls?: { cert: string; key: string } } = {},
): Promise<Receiver> {
  const received: ReceivedWebhook[] = [];
  const waiters: { n: number; resolve(webhook: ReceivedWebhook): void }[] = [];
  let statuses: number[] = [];
  const handle = (request: http.IncomingMessage, response: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const webhook = {
        headers: request.headers,
        servername: 'servername' in request.socket ? (request.socket.servername as string) : undefined,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      };
      received.push(webhook);
      response.statusCode = statuses.shift() ?? 200;
      response.end('ok');
      for (const waiter of waiters.filter((w) => w.n <= received.length)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(received[waiter.n - 1] as ReceivedWebhook);
      }
    });
  };
  const server = options.tls ? https.createServer(options.tls, handle) : http.createServer(handle);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const nth = (n: number) =>
    new Promise<ReceivedWebhook>((resolve) => {
      const hit = received[n - 1];
      if (hit) resolve(hit);
      else waiters.push({ n, resolve });
    });
  return {
    url: options.tls
      ? `https://localhost:${port}${options.path ?? '/webhooks'}`
      : `http://127.0.0.1:${port}${options.path ?? '/webhooks'}`,
    port,
    received,
    respondWith: (...next) => {
      statuses = next;
    },
    nth,
    next: () => nth(received.length + 1),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
