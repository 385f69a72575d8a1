import net from 'node:net';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../db/index.js';
import { createLogger } from '../log.js';
import { engines, openTestDb } from '../test-support/db.js';
import { memoryLogger } from '../test-support/log.js';
import { until } from '../test-support/wait.js';
import { NOTIFY_CHANNEL, WakeUps } from './wake-ups.js';

describe.each(engines())('wake-ups on %s', (engine) => {
  let db: Db;
  let close: () => Promise<void>;
  let url: string;
  const log = createLogger('silent');
  const open: WakeUps[] = [];

  beforeAll(async () => {
    ({ db, close, url } = await openTestDb(engine));
  });
  afterEach(async () => {
    for (const wakeUps of open.splice(0)) await wakeUps.unlisten();
  });
  afterAll(() => close());

  /** A listening WakeUps and how many times it has been woken. */
  async function listening() {
    const woken = { count: 0 };
    const wakeUps = new WakeUps({ db, log, onWake: () => woken.count++ });
    open.push(wakeUps);
    await wakeUps.listen();
    return { wakeUps, woken };
  }

  /** Notifies until the listener has been woken more than `seen` times. */
  function wokenAfter(notifier: WakeUps, woken: { count: number }, seen: number) {
    return until(async () => {
      await notifier.notify();
      return woken.count > seen;
    });
  }

  if (engine === 'sqlite') {
    it('does nothing on SQLite, where one process has the database', async () => {
      const { wakeUps, woken } = await listening();
      await wakeUps.notify();
      await wakeUps.notify();
      expect(woken.count).toBe(0);
    });
    return;
  }

  it("wakes every listener, another process's as well as its own", async () => {
    const first = await listening();
    const second = await listening();
    await wokenAfter(first.wakeUps, second.woken, 0);
    await until(async () => first.woken.count > 0);
  });

  it('listens again after its connection was cut, logging the loss and the return once each', async () => {
    const memory = memoryLogger();
    const woken = { count: 0 };
    const wakeUps = new WakeUps({ db, log: memory.log, onWake: () => woken.count++ });
    open.push(wakeUps);
    await wakeUps.listen();
    const notifier = new WakeUps({ db, log, onWake: () => undefined });
    await wokenAfter(notifier, woken, 0);

    const { rows } = await sql<{ ended: boolean }>`
      select pg_terminate_backend(pid) as ended from pg_stat_activity
      where datname = current_database() and query = ${`LISTEN ${NOTIFY_CHANNEL}`}`.execute(db.kysely);
    expect(rows.map((row) => row.ended)).toEqual([true]);

    const seen = woken.count;
    await wokenAfter(notifier, woken, seen);
    expect(memory.lines.map((line) => [line.level, line.msg, line.failedAttempts])).toEqual([
      [40, 'webhook LISTEN connection lost; listening again', undefined],
      [30, 'listening for webhook wake-ups again', 0],
    ]);
  });

  it('logs one warning for a server it cannot reach, however often it tries, and one line once it listens', async () => {
    // Refuses the first three connections, as a server that is down, then relays to the real one.
    const target = new URL(url);
    let attempts = 0;
    const relayed: net.Socket[] = [];
    const relay = net.createServer((client) => {
      attempts++;
      if (attempts <= 3) {
        client.destroy();
        return;
      }
      const upstream = net.connect(Number(target.port), target.hostname);
      for (const socket of [client, upstream]) {
        relayed.push(socket);
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const relayUrl = new URL(target);
    relayUrl.host = `127.0.0.1:${(relay.address() as net.AddressInfo).port}`;
    const viaRelay = createDb(relayUrl.toString());
    const memory = memoryLogger();
    const woken = { count: 0 };
    const wakeUps = new WakeUps({ db: viaRelay, log: memory.log, onWake: () => woken.count++ });
    try {
      await wakeUps.listen();
      await wokenAfter(new WakeUps({ db, log, onWake: () => undefined }), woken, 0);
      expect(attempts).toBeGreaterThan(3);
      expect(memory.lines.map((line) => [line.level, line.msg, line.failedAttempts])).toEqual([
        [40, expect.stringMatching(/^could not LISTEN for webhook wake-ups/), undefined],
        [30, 'listening for webhook wake-ups again', 3],
      ]);
    } finally {
      await wakeUps.unlisten();
      await viaRelay.close();
      for (const socket of relayed) socket.destroy();
      await new Promise((resolve) => relay.close(resolve));
    }
  });

  it('stops listening when told: a later notification wakes nobody', async () => {
    const { wakeUps, woken } = await listening();
    const other = await listening();
    await wokenAfter(other.wakeUps, woken, 0);
    await wakeUps.unlisten();

    const seen = woken.count;
    const othersSeen = other.woken.count;
    // The other listener hears this notification, so this one would have by then too.
    await wokenAfter(other.wakeUps, other.woken, othersSeen);
    expect(woken.count).toBe(seen);
  });
});
