/**
 * Retry schedule. `delays[i]` is the pause (ms) after the (i + 1)-th failed attempt, so a schedule of
 * k delays allows k + 1 attempts in all. Each pause is spread by ±20 % so that the retries of messages
 * that failed together (a receiver outage) do not all hit the receiver again in the same instant.
 */
export const JITTER_RATIO = 0.2;

/**
 * The pause before the next attempt, in ms, once `attemptsMade` attempts have failed; `undefined` when
 * the schedule is exhausted. `random` returns a number in [0, 1), like Math.random.
 */
export function nextDelayMs(
  delays: readonly number[],
  attemptsMade: number,
  random: () => number = Math.random,
): number | undefined {
  const base = delays[attemptsMade - 1];
  if (base === undefined || attemptsMade < 1) return undefined;
  const factor = 1 - JITTER_RATIO + 2 * JITTER_RATIO * random();
  return Math.round(base * factor);
}
