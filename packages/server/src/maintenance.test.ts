import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from './log.js';
import { startMaintenance } from './maintenance.js';
import type { Services } from './server.js';

/** The sweeps' owners faked (each records its calls), and the log kept, to check what runs when. */
function fakeServices() {
  const calls: string[] = [];
  const sweep =
    (name: string, fails = false) =>
    async () => {
      calls.push(name);
      if (fails) throw new Error(`${name} refused`);
    };
  const services = {
    config: { retentionDays: 30 },
    idempotency: { sweep: sweep('idempotency') },
    orders: { expireDue: sweep('orders', true) },
    shopperAuth: { sweep: sweep('shopperAuth') },
    checkout: { sweep: sweep('checkout') },
    rateLimits: { sweep: sweep('rateLimits') },
    retention: {
      sweep: async () => {
        calls.push('retention');
        return { messages: 3, credentialsRequests: 2, orders: 1 };
      },
      stop: async () => {
        calls.push('retention stopped');
      },
    },
  } as unknown as Services;
  return { services, calls };
}

describe('maintenance, with the sweeps faked', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sweeps for retention at start, runs every sweep each 10 minutes, logs failures, and stops', async () => {
    const { services, calls } = fakeServices();
    const lines: string[] = [];
    const log = createLogger('info', { write: (line: string) => lines.push(line) } as never);
    const maintenance = startMaintenance(services, log);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toEqual(['retention']);

    await vi.advanceTimersByTimeAsync(10 * 60_000 - 1);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls.slice(1).sort()).toEqual(
      ['checkout', 'idempotency', 'orders', 'rateLimits', 'retention', 'shopperAuth'].sort(),
    );
    const logged = lines.map((line) => JSON.parse(line) as { msg: string; messages?: number });
    expect(logged.filter((line) => line.msg === 'order expiry sweep failed')).toHaveLength(1);
    expect(
      logged.filter((line) => line.msg.startsWith('deleted webhook messages')).map((line) => line.messages),
    ).toEqual([3, 3]);

    await maintenance.stop();
    expect(calls.at(-1)).toBe('retention stopped');
    const count = calls.length;
    await vi.advanceTimersByTimeAsync(30 * 60_000);
    expect(calls).toHaveLength(count);
  });
});
