/**
 * Waits for a condition the test cannot subscribe to (a row written by another part of the service),
 * checking it every 10 ms until `timeoutMs`. Use an awaited event instead wherever there is one.
 */
export async function until<T>(check: () => Promise<T | undefined | false>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
