import { describe, expect, it } from 'vitest';
import { Fifo } from './fifo.js';

describe('Fifo', () => {
  it('gives its elements back in the order they came, across the copies that drop spent slots', () => {
    const queue = new Fifo<number>();
    const taken: number[] = [];
    let next = 0;
    // Pushes outrun shifts, then shifts outrun pushes, so the queue grows past and shrinks below 1,024.
    for (let round = 0; round < 5_000; round++) {
      for (let i = 0; i < (round < 2_500 ? 3 : 1); i++) queue.push(next++);
      const count = round < 2_500 ? 2 : 3;
      for (let i = 0; i < count && queue.length > 0; i++) taken.push(queue.shift() as number);
      expect(queue.length).toBe(next - taken.length);
    }
    while (queue.length > 0) taken.push(queue.shift() as number);
    expect(taken).toEqual(Array.from({ length: next }, (_, i) => i));
    expect(queue.shift()).toBeUndefined();
  });

  it('iterates what it holds, oldest first, without taking it', () => {
    const queue = new Fifo<string>();
    for (const item of ['a', 'b', 'c', 'd']) queue.push(item);
    queue.shift();
    expect([...queue]).toEqual(['b', 'c', 'd']);
    expect(queue.length).toBe(3);
  });
});
