import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sender } from './sender.js';

/** A receiver that answers 204 after `delayMs` and notes how many requests it held at once. */
async function slowReceiver(delayMs: number) {
  let open = 0;
  let mostOpen = 0;
  let received = 0;
  const server = http.createServer((request, response) => {
    open++;
    received++;
    mostOpen = Math.max(mostOpen, open);
    request.resume();
    setTimeout(() => {
      open--;
      response.statusCode = 204;
      response.end();
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    stats: () => ({ mostOpen, received }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('Sender', () => {
  let receiver: Awaited<ReturnType<typeof slowReceiver>>;

  beforeAll(async () => {
    receiver = await slowReceiver(200);
  });
  afterAll(() => receiver.close());

  it('starts the time-out when an attempt has a connection, not while it waits behind others', async () => {
    // Four rounds of two: the last round starts some 600 ms after the first, past a 500 ms time-out that
    // each exchange (200 ms) keeps.
    const sender = new Sender({
      env: 'staging',
      timeoutMs: 500,
      connectionsPerOrigin: 2,
      payloads: { build: async (message) => ({ id: message.id }) },
    });
    const endpoint = Promise.resolve({ url: receiver.url, secrets: ['whsec_dGVzdHNlY3JldA=='] });
    try {
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          sender.attempt(
            { id: `msg_${i}`, merchantId: 'mch_a', eventName: 'TEST', subjectId: `s_${i}` },
            endpoint,
            Date.now(),
          ),
        ),
      );
      expect(outcomes.map((outcome) => outcome.error)).toEqual(Array(8).fill(null));
      expect(outcomes.every((outcome) => outcome.latencyMs < 500)).toBe(true);
      expect(receiver.stats()).toEqual({ mostOpen: 2, received: 8 });
    } finally {
      await sender.close();
    }
  });
});
