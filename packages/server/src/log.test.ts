import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { createLogger, LazyChildLogger } from './log.js';

function memoryLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger('info', destination), lines };
}

describe('the per-request logger', () => {
  it('makes no pino child for a request that never logs', () => {
    const { log } = memoryLogger();
    const child = vi.spyOn(log, 'child');
    const requestLog = new LazyChildLogger(log, { requestId: 'req_1' }, {});
    expect(requestLog.level).toBe('info');
    expect(child).toHaveBeenCalledTimes(1);
    child.mockClear();
    new LazyChildLogger(log, { requestId: 'req_2' }, {});
    expect(child).not.toHaveBeenCalled();
  });

  it('logs with the request id, redacted like every other line, and makes its child once', async () => {
    const { log, lines } = memoryLogger();
    const child = vi.spyOn(log, 'child');
    const requestLog = new LazyChildLogger(log, { requestId: 'req_3' }, {});
    requestLog.error({ cardNumber: '4111111111111111' }, 'declined 4111 1111 1111 1111');
    requestLog.warn('second line');
    requestLog.debug('below the level');
    await new Promise((resolve) => setImmediate(resolve));
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines).toMatchObject([
      { level: 50, requestId: 'req_3', cardNumber: '[redacted]', msg: 'declined [card-number]' },
      { level: 40, requestId: 'req_3', msg: 'second line' },
    ]);
    expect(JSON.stringify(lines)).not.toContain('4111111111111111');
    expect(JSON.stringify(lines)).not.toContain('4111 1111 1111 1111');
  });
});
