import { describe, expect, it } from 'vitest';
import type { AttemptOutcome, AttemptSender, MessageForPayload, WebhookEndpoint } from './sender.js';
import { LoopLoad, SpreadSender } from './spread-sender.js';

/** A fake sender (the boundary faked: no thread, no HTTP) whose attempts end when the test says. */
function holdingSender() {
  const held: ((outcome: AttemptOutcome) => void)[] = [];
  const sender: AttemptSender = {
    start: async () => undefined,
    attempt: () => new Promise<AttemptOutcome>((resolve) => held.push(resolve)),
    close: async () => undefined,
  };
  return { sender, held };
}

const message = (id: string): MessageForPayload => ({
  id,
  merchantId: 'mch_1',
  eventName: 'PAYMENT_CREDENTIALS',
  subjectId: `crq_${id}`,
});
const endpoint: Promise<WebhookEndpoint> = Promise.resolve({ url: 'http://127.0.0.1:1/', secrets: ['s'] });
const ok: AttemptOutcome = { statusCode: 200, latencyMs: 1, error: null, timedOut: false };

describe('SpreadSender (fake senders)', () => {
  it('gives each attempt to the sender with the fewest under way', async () => {
    const a = holdingSender();
    const b = holdingSender();
    const spread = new SpreadSender([a.sender, b.sender], { mainThreadBusy: () => false });
    const first = ['m1', 'm2', 'm3', 'm4'].map((id) => spread.attempt(message(id), endpoint, 0));
    expect([a.held.length, b.held.length]).toEqual([2, 2]);

    // Alternating: m1 and m3 went to the first sender. Once they end it has none under way.
    a.held[0]?.(ok);
    a.held[1]?.(ok);
    await Promise.all([first[0], first[2]]);
    void spread.attempt(message('m5'), endpoint, 0);
    void spread.attempt(message('m6'), endpoint, 0);
    expect([a.held.length, b.held.length]).toEqual([4, 2]);
  });

  it('gives every attempt to the first sender while the main thread is busy', () => {
    const a = holdingSender();
    const b = holdingSender();
    let busy = true;
    const spread = new SpreadSender([a.sender, b.sender], { mainThreadBusy: () => busy });
    for (const id of ['m1', 'm2', 'm3']) void spread.attempt(message(id), endpoint, 0);
    expect([a.held.length, b.held.length]).toEqual([3, 0]);
    busy = false;
    void spread.attempt(message('m4'), endpoint, 0);
    expect([a.held.length, b.held.length]).toEqual([3, 1]);
  });

  it('passes each outcome back unchanged', async () => {
    const a = holdingSender();
    const spread = new SpreadSender([a.sender]);
    const outcome = spread.attempt(message('m1'), endpoint, 0);
    a.held[0]?.({ statusCode: 500, latencyMs: 3, error: 'HTTP 500', timedOut: false });
    expect(await outcome).toEqual({ statusCode: 500, latencyMs: 3, error: 'HTTP 500', timedOut: false });
  });
});

describe('LoopLoad', () => {
  it('measures the event loop busy while code runs and idle while it waits', async () => {
    const load = new LoopLoad();
    load.sample();
    const until = performance.now() + 50;
    while (performance.now() < until);
    expect(load.sample()).toBeGreaterThan(0.9);
    // 250 ms: long beside what else may run on this loop meanwhile (a garbage collection, a timer of
    // another test file in this worker), which counts as busy.
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(load.sample()).toBeLessThan(0.5);
  });
});
