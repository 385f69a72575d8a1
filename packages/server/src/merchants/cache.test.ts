import { describe, expect, it } from 'vitest';
import { TtlCache } from './cache.js';

describe('TtlCache', () => {
  it('forgets an entry when its time is up', () => {
    let clock = 0;
    const cache = new TtlCache<string, number>({ ttlMs: 5_000, maxEntries: 10, now: () => clock });
    cache.set('a', 1);
    clock = 4_999;
    expect(cache.get('a')).toBe(1);
    clock = 5_000;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('drops the oldest entries beyond its bound', () => {
    const cache = new TtlCache<string, number>({ ttlMs: 5_000, maxEntries: 2, now: () => 0 });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 3);
    cache.set('c', 4);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([3, undefined, 4]);
  });

  it('deletes by key and by value, and stores nothing when turned off', () => {
    const cache = new TtlCache<string, { owner: string }>({ ttlMs: 5_000, maxEntries: 10, now: () => 0 });
    cache.set('k1', { owner: 'm1' });
    cache.set('k2', { owner: 'm1' });
    cache.set('k3', { owner: 'm2' });
    cache.deleteWhere((value) => value.owner === 'm1');
    cache.delete('k3');
    expect(cache.size).toBe(0);
    const off = new TtlCache<string, number>({ ttlMs: 0, maxEntries: 10, now: () => 0 });
    off.set('a', 1);
    expect(off.get('a')).toBeUndefined();
  });
});
