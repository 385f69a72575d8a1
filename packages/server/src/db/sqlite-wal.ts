/**
 * The two pieces of SQLite's write-ahead log that would otherwise block the event loop, moved off it.
 *
 * - `WalFlush`: with `synchronous = FULL`, SQLite fsyncs the WAL inside `COMMIT`, and better-sqlite3 runs
 *   `COMMIT` on the JavaScript thread: every commit stopped the loop for 0.2 to 1 ms. The connection now
 *   runs with `synchronous = NORMAL` (the WAL is written on commit, not synced) and the driver flushes the
 *   WAL file with `fdatasync` in a thread of its own before it reports the commit, and runs no other
 *   statement until then. A commit is on disk when its promise resolves, and no one reads it before, as
 *   with FULL; but requests that need no database go on meanwhile. Not on libuv's thread pool: its
 *   threads also run every `dns.lookup`, and a webhook receiver whose DNS server does not answer holds
 *   them for seconds at a time, which held every commit with them.
 * - `Checkpointer`: SQLite copies the WAL back into the database file every 1,000 pages, inside whichever
 *   commit crosses the mark (several milliseconds, two fsyncs). With `wal_autocheckpoint = 0` that is left
 *   to a worker thread with its own connection, which checkpoints every `intervalMs`.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * The flush thread's whole program: `fdatasync` of the descriptor each message names (descriptors are the
 * process's, so the main thread's serves), answered in order with null or the error's code and message.
 */
const FLUSH_WORKER = `
const fs = require('node:fs');
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (fd) => {
  try {
    fs.fdatasyncSync(fd);
    parentPort.postMessage(null);
  } catch (error) {
    parentPort.postMessage({ code: error && error.code, message: String(error && error.message) });
  }
});
`;

interface Waiting {
  resolve(): void;
  reject(error: Error): void;
}

/** A flush thread and the flushes asked of it and not yet answered, oldest first. */
interface FlushThread {
  worker: Worker;
  waiting: Waiting[];
}

/** The code of a flush that its thread never answered: the commit may or may not be on disk. */
export const FLUSH_THREAD_STOPPED = 'ERR_WAL_FLUSH_THREAD_STOPPED';

export interface WalFlushOptions {
  /** The flush thread's program: FLUSH_WORKER, or in tests a fake that fails as the real one should not. */
  program?: string;
}

export class WalFlush {
  readonly #path: string;
  readonly #program: string;
  #fd: number | undefined;
  #thread: FlushThread | undefined;
  /** The last flush asked: answered in order, it settles once every flush before it has. */
  #last: Promise<void> | undefined;

  constructor(databaseFile: string, options: WalFlushOptions = {}) {
    this.#path = `${databaseFile}-wal`;
    this.#program = options.program ?? FLUSH_WORKER;
  }

  /** Resolves once everything committed before the call is on disk; never throws, it rejects. */
  flush(): Promise<void> {
    let thread: FlushThread;
    let fd: number;
    try {
      // Opened at the first flush: SQLite creates the WAL file with the first write. It then stays in
      // place while this process holds the database open, so one descriptor serves every flush.
      this.#fd ??= fs.openSync(this.#path, 'r');
      this.#thread ??= this.#start();
      thread = this.#thread;
      fd = this.#fd;
    } catch (error) {
      return Promise.reject(error);
    }
    // Referenced while a flush waits, as libuv's pool kept the process alive for one.
    if (thread.waiting.length === 0) thread.worker.ref();
    this.#last = new Promise((resolve, reject) => {
      thread.waiting.push({ resolve, reject });
      thread.worker.postMessage(fd);
    });
    return this.#last;
  }

  /** Waits for the flushes asked, then stops the thread and closes the descriptor. */
  async close(): Promise<void> {
    await this.#last?.catch(() => undefined);
    const thread = this.#thread;
    this.#thread = undefined;
    await thread?.worker.terminate();
    if (this.#fd !== undefined) fs.closeSync(this.#fd);
    this.#fd = undefined;
  }

  #start(): FlushThread {
    const thread: FlushThread = { worker: new Worker(this.#program, { eval: true }), waiting: [] };
    const { worker, waiting } = thread;
    worker.unref();
    worker.on('message', (failure: { code: string | undefined; message: string } | null) => {
      const answered = waiting.shift();
      if (waiting.length === 0) worker.unref();
      if (failure === null) answered?.resolve();
      else answered?.reject(Object.assign(new Error(failure.message), { code: failure.code }));
    });
    // A thread that died (it should not: its program catches what fdatasync throws) fails what it held,
    // as a failed flush does, and the next flush starts another. Its own queue only: its 'exit' can come
    // a turn after its 'error', when a new thread already holds the next flush.
    const fail = (cause: unknown) => {
      if (this.#thread === thread) this.#thread = undefined;
      const error = Object.assign(new Error('the WAL flush thread stopped before it answered', { cause }), {
        code: FLUSH_THREAD_STOPPED,
      });
      for (const stopped of waiting.splice(0)) stopped.reject(error);
    };
    worker.on('error', fail);
    worker.on('exit', (exitCode) => fail(exitCode));
    return thread;
  }
}

/**
 * The worker's whole program. It is a string run with `eval` so that it works the same from the sources
 * (the tests) and from the build; better-sqlite3 is passed by its resolved path.
 */
const CHECKPOINT_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
// The checkpoint syncs the WAL before it copies from it, and the database file after.
db.pragma('synchronous = NORMAL');
let timer;
const checkpoint = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message) });
  }
  timer = setTimeout(checkpoint, workerData.intervalMs);
};
timer = setTimeout(checkpoint, workerData.intervalMs);
parentPort.on('message', () => {
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
`;

export class Checkpointer {
  readonly #worker: Worker;
  readonly #exited: Promise<void>;

  constructor(databaseFile: string, options: { intervalMs: number; onError(error: Error): void }) {
    this.#worker = new Worker(CHECKPOINT_WORKER, {
      eval: true,
      workerData: {
        file: databaseFile,
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
        intervalMs: options.intervalMs,
      },
    });
    this.#worker.on('message', (message: { error: string }) =>
      options.onError(new Error(`WAL checkpoint failed: ${message.error}`)),
    );
    this.#worker.on('error', options.onError);
    // A process that exits without closing the database loses nothing by it: a checkpoint is crash-safe.
    // So the worker does not keep the process alive, except while `close` waits for it.
    this.#worker.unref();
    this.#exited = new Promise((resolve) => this.#worker.once('exit', () => resolve()));
  }

  /** Stops after the checkpoint under way, if any, and closes the worker's connection. */
  async close(): Promise<void> {
    // Referenced again until it has exited: otherwise, with nothing else alive (a service that has closed
    // its sockets), the event loop empties before the worker's exit arrives and `close` never resolves.
    this.#worker.ref();
    this.#worker.postMessage('close');
    await this.#exited;
  }
}
