import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../log.js';
import { engines, openTestDb } from '../test-support/db.js';
import { insertMerchantRow } from '../test-support/rows.js';
import { until } from '../test-support/wait.js';
import { Dispatcher } from '../webhooks/dispatcher.js';
import { insertMessages, newMessage } from '../webhooks/outbox.js';
import { WebhookRepo } from '../webhooks/repo.js';
import { WebhookDestinations } from '../webhooks/url-guard.js';
import { DbClock } from './clock.js';

const MINUTE_FAST = () => Date.now() + 60_000;
const fail = (error: unknown) => {
  throw error;
};

describe.each(engines())('DbClock on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  beforeAll(async () => {
    handle = await openTestDb(engine);
  });
  afterAll(() => handle.close());

  it("tells the database's time on a machine whose clock is a minute fast", async () => {
    const clock = new DbClock(handle.db, MINUTE_FAST);
    await clock.start(fail);
    clock.stop();
    if (engine === 'postgres') {
      // The server runs on this machine in the tests, so its clock is the right one.
      expect(Math.abs(clock.offsetMs + 60_000)).toBeLessThan(1_000);
      expect(Math.abs(clock.now() - Date.now())).toBeLessThan(1_000);
    } else {
      // SQLite is on this machine: its time is this machine's.
      expect(clock.offsetMs).toBe(0);
    }
  });
});

// Only PostgreSQL is shared by processes on several machines, whose clocks may disagree.
describe.each(engines().filter((engine) => engine === 'postgres'))(
  'webhook leases across machines whose clocks disagree, on %s',
  (engine) => {
    let handle: Awaited<ReturnType<typeof openTestDb>>;
    const MERCHANT = 'mch_clock';
    beforeAll(async () => {
      handle = await openTestDb(engine);
      await insertMerchantRow(handle.db, MERCHANT, { authorization_mode: 'merchant' });
    });
    afterAll(() => handle.close());

    it('leaves a message leased by another process alone, however fast its own clock runs', async () => {
      const requests: string[] = [];
      let answerFirst: (() => void) | undefined;
      const receiver = http.createServer((request, response) => {
        requests.push(String(request.headers['webhook-id']));
        request.resume();
        if (requests.length === 1) answerFirst = () => response.end('ok');
        else response.end('ok');
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      const dispatcher = (now: () => number) =>
        new Dispatcher({
          db: handle.db,
          log: createLogger('silent'),
          destinations: new WebhookDestinations('staging', { loopback: true }),
          timeoutMs: 5_000,
          retryDelaysMs: { default: [50], credentials: [50] },
          endpoints: {
            resolve: async () => ({ url, secrets: [`whsec_${Buffer.alloc(24).toString('base64')}`] }),
          },
          payloads: { build: async (message) => ({ eventName: message.eventName }) },
          pollIntervalMs: 50,
          now,
        });
      const message = (subjectId: string, leaseMs: number) =>
        newMessage(
          { merchantId: MERCHANT, eventName: 'PAYMENT_CREDENTIALS', subjectId, schedule: 'credentials' },
          Date.now(),
          leaseMs,
        );
      const fastClock = new DbClock(handle.db, MINUTE_FAST);
      await fastClock.start(fail);
      const holder = dispatcher(Date.now);
      const other = dispatcher(fastClock.now);
      try {
        await holder.start();
        const held = message('crq_held', holder.leaseMs);
        await insertMessages(handle.db.kysely, [held]);
        holder.committed([held]);
        await until(async () => answerFirst !== undefined);

        await other.start();
        // A message nobody holds: the other process's polls claim it, so they run while the first waits.
        const free = message('crq_free', 0);
        await insertMessages(handle.db.kysely, [free]);
        await until(async () => requests.includes(free.id));
        answerFirst?.();
        const repo = new WebhookRepo(handle.db);
        const delivered = await until(async () => {
          const message = await repo.get(MERCHANT, held.id);
          return message.state === 'DELIVERED' && message;
        });
        expect(delivered.attemptCount).toBe(1);
        expect(requests.filter((id) => id === held.id)).toHaveLength(1);
      } finally {
        answerFirst?.();
        await other.stop();
        await holder.stop();
        fastClock.stop();
        receiver.closeAllConnections();
        await new Promise<void>((resolve) => receiver.close(() => resolve()));
      }
    });
  },
);
