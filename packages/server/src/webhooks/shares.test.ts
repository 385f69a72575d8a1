import { describe, expect, it } from 'vitest';
import type { LeasedMessage } from './repo.js';
import { ReceiverShares } from './shares.js';

const message = (id: string, merchantId = 'mch_a'): LeasedMessage => ({
  id,
  merchantId,
  eventName: 'PAYMENT_CREDENTIALS',
  subjectId: `crq_${id}`,
  schedule: 'credentials',
  attemptCount: 0,
  nextAttemptAt: 0,
  leaseUntil: Number.MAX_SAFE_INTEGER,
});

/** Starts attempts to the receiver while it may, and says how many started. */
function fill(shares: ReceiverShares, receiver: string): number {
  let started = 0;
  while (shares.hasSlot() && shares.mayStart(receiver)) {
    shares.started(receiver);
    started++;
  }
  return started;
}

describe('receiver shares', () => {
  it("counts a merchant against its webhook URL's origin, or against itself without a URL to dial", () => {
    const shares = new ReceiverShares({ concurrency: 8, perReceiver: 4, perSlowReceiver: 2 });
    expect(shares.receiverOf('mch_a')).toBeUndefined();
    expect(shares.learn('mch_a', 'https://hooks.example.com/a?x=1')).toBe('https://hooks.example.com');
    expect(shares.learn('mch_b', 'https://hooks.example.com:443/b')).toBe('https://hooks.example.com');
    expect(shares.learn('mch_c', 'https://hooks.example.com:8443/c')).toBe('https://hooks.example.com:8443');
    expect(shares.learn('mch_d', null)).toBe('mch_d');
    expect(shares.learn('mch_e', 'not a url')).toBe('mch_e');
    expect(shares.receiverOf('mch_b')).toBe('https://hooks.example.com');
    // A changed URL moves the merchant.
    expect(shares.learn('mch_b', 'https://other.example.com/b')).toBe('https://other.example.com');
    expect(shares.receiverOf('mch_b')).toBe('https://other.example.com');
  });

  it('gives a receiver its share, and a receiver whose attempt timed out the slow share until it answers', () => {
    const shares = new ReceiverShares({ concurrency: 16, perReceiver: 4, perSlowReceiver: 1 });
    expect(fill(shares, 'r')).toBe(4);
    for (let i = 0; i < 4; i++) {
      shares.answered('r', true);
      shares.ended('r');
    }
    expect(fill(shares, 'r')).toBe(1);
    shares.answered('r', false);
    shares.ended('r');
    expect(fill(shares, 'r')).toBe(4);
  });

  it('keeps the last share of slots for receivers with fewer than the slow share in flight', () => {
    const shares = new ReceiverShares({ concurrency: 8, perReceiver: 4, perSlowReceiver: 2 });
    expect(fill(shares, 'a')).toBe(4);
    // Four in use: b gets no more than its first two, nor does a once b has them.
    expect(fill(shares, 'b')).toBe(2);
    expect(fill(shares, 'c')).toBe(2);
    expect(shares.hasSlot()).toBe(false);
    expect(shares.mayStart('d')).toBe(true);
  });

  it('keeps nothing back when one receiver may have every slot', () => {
    const shares = new ReceiverShares({ concurrency: 4, perReceiver: 4, perSlowReceiver: 1 });
    expect(fill(shares, 'a')).toBe(4);
  });

  it('starts set-aside messages in order as their receiver gets room, and says when to claim again', () => {
    const shares = new ReceiverShares({ concurrency: 8, perReceiver: 2, perSlowReceiver: 1 });
    expect(fill(shares, 'r')).toBe(2);
    const waiting = ['m1', 'm2', 'm3'].map((id) => message(id));
    for (const queued of waiting) shares.setAside('r', queued);
    expect(shares.hasSetAside('r')).toBe(true);
    // A share's worth set aside: a claim leaves its merchants out.
    expect(shares.saturated()).toEqual(['mch_a']);

    const started: string[] = [];
    const start = (next: LeasedMessage, receiver: string) => {
      started.push(next.id);
      shares.started(receiver);
    };
    expect(shares.startReady(start)).toBe(false);
    expect(started).toEqual([]);

    shares.ended('r');
    // m1 starts; two are still set aside, a share's worth.
    expect(shares.startReady(start)).toBe(false);
    expect(started).toEqual(['m1']);
    shares.ended('r');
    // m2 starts, and with one left the receiver is below a share: claim again, once.
    expect(shares.startReady(start)).toBe(true);
    expect(started).toEqual(['m1', 'm2']);
    shares.ended('r');
    expect(shares.startReady(start)).toBe(false);
    expect(started).toEqual(['m1', 'm2', 'm3']);
    expect(shares.hasSetAside('r')).toBe(false);
  });

  it('leaves out every merchant with messages set aside for a saturated receiver, and only while it has some', () => {
    const shares = new ReceiverShares({ concurrency: 8, perReceiver: 2, perSlowReceiver: 1 });
    fill(shares, 'r');
    shares.setAside('r', message('m1', 'mch_b'));
    expect(shares.saturated()).toEqual([]);
    shares.setAside('r', message('m2', 'mch_c'));
    shares.setAside('r', message('m3', 'mch_c'));
    shares.setAside('s', message('m4', 'mch_d'));
    expect(shares.saturated()).toEqual(['mch_b', 'mch_c']);

    const started: string[] = [];
    const start = (next: LeasedMessage, receiver: string) => {
      started.push(next.id);
      shares.started(receiver);
    };
    shares.ended('r');
    shares.startReady(start);
    expect(started).toEqual(['m1']);
    // mch_b has nothing set aside any more; mch_c's two keep the receiver saturated.
    expect(shares.saturated()).toEqual(['mch_c']);
  });

  it('hands every set-aside message back when the dispatcher stops', () => {
    const shares = new ReceiverShares({ concurrency: 8, perReceiver: 1, perSlowReceiver: 1 });
    fill(shares, 'r');
    shares.setAside('r', message('m1'));
    shares.setAside('s', message('m2', 'mch_b'), true);
    expect(shares.takeSetAside().map((taken) => taken.id)).toEqual(['m1', 'm2']);
    expect(shares.hasSetAside('r')).toBe(false);
    expect(shares.startReady(() => expect.unreachable())).toBe(false);
  });
});
