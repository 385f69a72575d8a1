import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTimeout, Sender } from './sender.js';
import { WebhookDestinations } from './url-guard.js';

/** Starts `server` on a free port of 127.0.0.1: its base URL, and a close that drops open connections. */
async function listening(server: http.Server): Promise<{ base: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A staging Sender whose payload is the message id. */
function testSender(timeoutMs: number, connectionsPerOrigin: number): Sender {
  return new Sender({
    destinations: new WebhookDestinations('staging', { loopback: true }),
    timeoutMs,
    connectionsPerOrigin,
    payloads: { build: async (message) => ({ id: message.id }) },
  });
}

/**
 * A receiver that answers 204 after `delayMs`, notes how many requests it held at once and, for each,
 * its `webhook-timestamp` and when it arrived (ms since the epoch).
 */
async function slowReceiver(delayMs: number) {
  let open = 0;
  let mostOpen = 0;
  let received = 0;
  const arrivals: { timestamp: number; at: number }[] = [];
  const server = http.createServer((request, response) => {
    open++;
    received++;
    arrivals.push({ timestamp: Number(request.headers['webhook-timestamp']), at: Date.now() });
    mostOpen = Math.max(mostOpen, open);
    request.resume();
    setTimeout(() => {
      open--;
      response.statusCode = 204;
      response.end();
    }, delayMs);
  });
  const { base, close } = await listening(server);
  return { url: `${base}/hooks`, stats: () => ({ mostOpen, received }), arrivals, close };
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
    const sender = testSender(500, 2);
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

  it('sends nothing for an attempt whose connection came after its send-by time, and says so', async () => {
    // One connection, 300 ms an exchange: the second attempt gets the connection some 300 ms after it
    // was made, past its send-by time of 100 ms; the third, with room to spare, goes out after it.
    const slow = await slowReceiver(300);
    const sender = testSender(5_000, 1);
    const endpoint = Promise.resolve({ url: slow.url, secrets: ['whsec_dGVzdHNlY3JldA=='] });
    try {
      const attemptedAt = Date.now();
      const send = (i: number, sendBy?: number) =>
        sender.attempt(
          { id: `msg_${i}`, merchantId: 'mch_a', eventName: 'TEST', subjectId: `s_${i}` },
          endpoint,
          attemptedAt,
          sendBy,
        );
      const [first, late, spare] = await Promise.all([
        send(0),
        send(1, attemptedAt + 100),
        send(2, attemptedAt + 60_000),
      ]);
      expect(first).toEqual({ statusCode: 204, latencyMs: expect.any(Number), error: null, timedOut: false });
      expect(late).toEqual({
        statusCode: null,
        latencyMs: 0,
        error: 'Not sent: it waited for a connection to the receiver past its lease.',
        timedOut: false,
        leaseRanOut: true,
      });
      expect(spare?.error).toBeNull();
      expect(slow.stats().received).toBe(2);
    } finally {
      await sender.close();
      await slow.close();
    }
  });

  it('signs each attempt when it leaves, not when it began to wait for a connection', async () => {
    // One connection, three attempts, 1.1 s each: the third leaves some 2.2 s after it was made.
    const slow = await slowReceiver(1_100);
    const sender = testSender(5_000, 1);
    const endpoint = Promise.resolve({ url: slow.url, secrets: ['whsec_dGVzdHNlY3JldA=='] });
    try {
      const attemptedAt = Date.now();
      const outcomes = await Promise.all(
        Array.from({ length: 3 }, (_, i) =>
          sender.attempt(
            { id: `msg_${i}`, merchantId: 'mch_a', eventName: 'TEST', subjectId: `s_${i}` },
            endpoint,
            attemptedAt,
          ),
        ),
      );
      expect(outcomes.map((outcome) => outcome.error)).toEqual([null, null, null]);
      expect(slow.arrivals).toHaveLength(3);
      // Whole seconds: each timestamp is within a second of its request's arrival.
      for (const { timestamp, at } of slow.arrivals)
        expect(timestamp).toBeGreaterThanOrEqual(Math.floor(at / 1000) - 1);
      expect(slow.arrivals[2]?.timestamp).toBeGreaterThan(Math.floor(attemptedAt / 1000));
    } finally {
      await sender.close();
      await slow.close();
    }
  });

  it('ends unsent the attempts that waited half a time-out behind one that timed out; newer ones keep their turn', async () => {
    // The first request hangs; every later one is answered at once.
    const ids: string[] = [];
    let firstArrived!: () => void;
    const arrived = new Promise<void>((resolve) => {
      firstArrived = resolve;
    });
    const hanging = http.createServer((request, response) => {
      ids.push(String(request.headers['webhook-id']));
      request.resume();
      if (ids.length === 1) firstArrived();
      else response.writeHead(204).end();
    });
    const server = await listening(hanging);
    const endpoint = Promise.resolve({
      url: `${server.base}/hooks`,
      secrets: ['whsec_dGVzdHNlY3JldA=='],
    });
    const sender = testSender(1_000, 1);
    const attempt = (id: string) =>
      sender.attempt({ id, merchantId: 'mch_a', eventName: 'TEST', subjectId: id }, endpoint, Date.now());
    try {
      const first = attempt('msg_first');
      await arrived;
      // Waits the whole time-out behind the hanging one.
      const behind = attempt('msg_behind');
      // Begins to wait 700 ms later: some 300 ms before the time-out, less than half of it.
      const later = new Promise<void>((resolve) => setTimeout(resolve, 700)).then(() => attempt('msg_later'));

      expect(await first).toMatchObject({ statusCode: null, error: 'No complete response within 1000 ms.' });
      const refused = await behind;
      expect(refused).toEqual({
        statusCode: null,
        latencyMs: 0,
        error: 'Not sent: an earlier attempt to this receiver got no complete response within 1000 ms.',
        timedOut: true,
      });
      expect(isTimeout(refused.error)).toBe(true);
      expect(await later).toMatchObject({ statusCode: 204, error: null });
      expect(ids).toEqual(['msg_first', 'msg_later']);
    } finally {
      await sender.close();
      await server.close();
    }
  });

  it('decides on the status line: a 2xx whose body trickles past the deadline is delivered, a 500 is not; both count as timed out', async () => {
    const trickling = http.createServer((request, response) => {
      request.resume();
      if (request.url === '/quick') {
        response.writeHead(204).end();
        return;
      }
      response.writeHead(request.url === '/ok' ? 200 : 500);
      response.write('accepted');
      setTimeout(() => response.end('.'), 1_000);
    });
    const server = await listening(trickling);
    const sender = testSender(300, 2);
    const attempt = (path: string) =>
      sender.attempt(
        { id: `msg${path.replace('/', '_')}`, merchantId: 'mch_a', eventName: 'TEST', subjectId: 's' },
        Promise.resolve({ url: `${server.base}${path}`, secrets: ['whsec_dGVzdHNlY3JldA=='] }),
        Date.now(),
      );
    try {
      const [ok, failed] = await Promise.all([attempt('/ok'), attempt('/fail')]);
      // Delivered, but the receiver held the connection for the whole time-out: it gets a slow receiver's
      // share of delivery slots, as one that never answers does.
      expect(ok).toMatchObject({ statusCode: 200, error: null, timedOut: true });
      expect(ok.latencyMs).toBeLessThan(1_000);
      expect(failed).toMatchObject({ statusCode: 500, error: 'HTTP 500', timedOut: true });
      const answeredAtOnce = await sender.attempt(
        { id: 'msg_quick', merchantId: 'mch_a', eventName: 'TEST', subjectId: 's' },
        Promise.resolve({ url: `${server.base}/quick`, secrets: ['whsec_dGVzdHNlY3JldA=='] }),
        Date.now(),
      );
      expect(answeredAtOnce).toEqual({
        statusCode: 204,
        latencyMs: expect.any(Number),
        error: null,
        timedOut: false,
      });
    } finally {
      await sender.close();
      await server.close();
    }
  });
});
