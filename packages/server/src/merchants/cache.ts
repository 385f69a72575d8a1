/**
 * A small in-memory cache with a time to live and a size bound, for look-ups on the hot path (API key →
 * merchant, merchant → webhook secrets). Entries leave in insertion order when the bound is reached: with
 * lifetimes of a few seconds, that is as good as least-recently-used and cheaper.
 */
export class TtlCache<K, V> {
  readonly #entries = new Map<K, { value: V; expiresAt: number }>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: { ttlMs: number; maxEntries: number; now: () => number }) {
    this.#ttlMs = options.ttlMs;
    this.#maxEntries = options.maxEntries;
    this.#now = options.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: K, value: V): void {
    if (this.#ttlMs <= 0 || this.#maxEntries <= 0) return;
    this.#entries.delete(key);
    while (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { value, expiresAt: this.#now() + this.#ttlMs });
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }

  /** Drops every entry whose value matches; a linear scan, meant for rare events such as an update. */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, entry] of this.#entries) {
      if (matches(entry.value)) this.#entries.delete(key);
    }
  }

  clear(): void {
    this.#entries.clear();
  }
}
