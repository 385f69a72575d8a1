import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../log.js';

/** A logger at `level` whose lines are kept in memory, parsed, for a test to read. */
export function memoryLogger(level = 'info'): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger(level, destination), lines };
}
