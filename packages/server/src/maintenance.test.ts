import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AuditEvent } from './audit/index.js';
import { createLogger } from './log.js';
import { startMaintenance } from './maintenance.js';
import type { Services } from './server.js';

/** The sweeps' owners faked (each records its calls), and the log kept, to check what runs when. */
function fakeServices() {
  const calls: string[] = [];
  /** Events the fake trail has not handed out yet; each copy hands out all of them. */
  const uncopied: AuditEvent[] = [];
  let copies = 0;
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
    checkout: {
      sweep: sweep('checkout'),
      settleStalledPayments: async () => {
        calls.push('payments');
        return 1;
      },
    },
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
    audit: {
      copyNew: async (emit: (event: AuditEvent) => void) => {
        copies++;
        for (const event of uncopied.splice(0)) emit(event);
      },
    },
  } as unknown as Services;
  return { services, calls, uncopied, copies: () => copies };
}

function auditEvent(seq: number): AuditEvent {
  return {
    seq,
    at: Date.UTC(2026, 10, 26, 6, 0, seq),
    actor: 'operator:alice@ops1',
    action: 'api_key.revoked',
    merchantId: 'mch_1',
    subject: `key_${seq}`,
    details: { prefix: 'sk_test_Ab3x' },
    prevHash: 'a'.repeat(64),
    hash: 'b'.repeat(64),
  };
}

describe('maintenance, with the sweeps faked', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sweeps for retention and stalled payments at start, runs every sweep each 10 minutes, logs failures, and stops', async () => {
    const { services, calls } = fakeServices();
    const lines: string[] = [];
    const log = createLogger('info', { write: (line: string) => lines.push(line) } as never);
    const maintenance = startMaintenance(services, log);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toEqual(['retention', 'payments']);

    await vi.advanceTimersByTimeAsync(10 * 60_000 - 1);
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls.slice(2).sort()).toEqual(
      ['checkout', 'idempotency', 'orders', 'payments', 'rateLimits', 'retention', 'shopperAuth'].sort(),
    );
    const logged = lines.map((line) => JSON.parse(line) as { msg: string; messages?: number });
    expect(logged.filter((line) => line.msg === 'order expiry sweep failed')).toHaveLength(1);
    expect(
      logged.filter((line) => line.msg.startsWith('deleted webhook messages')).map((line) => line.messages),
    ).toEqual([3, 3]);
    expect(
      logged.filter((line) => line.msg === 'finished the payments a stopped process left under way'),
    ).toHaveLength(2);

    await maintenance.stop();
    expect(calls.at(-1)).toBe('retention stopped');
    const count = calls.length;
    await vi.advanceTimersByTimeAsync(30 * 60_000);
    expect(calls).toHaveLength(count);
  });

  it('copies new audit events into the log at start and every 10 seconds, while it logs at info', async () => {
    const { services, uncopied } = fakeServices();
    const lines: string[] = [];
    const log = createLogger('info', { write: (line: string) => lines.push(line) } as never);
    uncopied.push(auditEvent(1), auditEvent(2));
    const maintenance = startMaintenance(services, log);
    await vi.advanceTimersByTimeAsync(0);
    const audited = () =>
      lines
        .map((line) => JSON.parse(line) as { msg: string; audit?: { seq: number; at: string } })
        .filter((line) => line.msg === 'audit event');
    expect(audited().map((line) => line.audit)).toEqual([
      { ...auditEvent(1), at: '2026-11-26T06:00:01.000Z' },
      { ...auditEvent(2), at: '2026-11-26T06:00:02.000Z' },
    ]);
    uncopied.push(auditEvent(3));
    await vi.advanceTimersByTimeAsync(9_999);
    expect(audited()).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(audited().map((line) => line.audit?.seq)).toEqual([1, 2, 3]);
    await maintenance.stop();

    // Logging at warn, it leaves the events for a process that logs them.
    const quiet = fakeServices();
    const stopped = startMaintenance(
      quiet.services,
      createLogger('warn', { write: () => undefined } as never),
    );
    await vi.advanceTimersByTimeAsync(60_000);
    expect(quiet.copies()).toBe(0);
    await stopped.stop();
  });
});
