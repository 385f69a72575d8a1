import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, runCli } from './test-support/cli.js';
import { type TestDatabase, testDatabase } from './test-support/db.js';
import { startServiceProcess } from './test-support/service-process.js';

const REQUESTS = 30;

function requireStrace(): string {
  try {
    return execFileSync('sh', ['-c', 'command -v strace'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('strace is not installed: apt-get install strace (.ci/run installs it)');
  }
}

/** One system call as strace -f saw it: where in the trace it started and where it returned. */
interface Call {
  name: string;
  /** The descriptor's path as `-y` prints it, e.g. `/tmp/x/wallet.db-wal` or `socket:[…]`. */
  fd: string;
  args: string;
  started: number;
  returned: number;
}

/**
 * Reads a trace of `strace -f -y`. A call another thread interrupted is printed in two parts,
 * `read(34<socket:[…]>, <unfinished ...>` and later `<... read resumed>"POST …"..., 65536) = 369`, whose
 * arguments are joined; the line numbers order every call's start and return in time.
 */
function parseTrace(text: string): Call[] {
  const calls: Call[] = [];
  const pending = new Map<string, Omit<Call, 'returned'>>();
  text.split('\n').forEach((line, index) => {
    const match = /^(\d+)\s+[\d.]+\s+(.*)$/.exec(line);
    if (!match) return;
    const [, pid = '', rest = ''] = match;
    const resumed = /^<\.\.\. \w+ resumed>(.*)$/.exec(rest);
    if (resumed) {
      const call = pending.get(pid);
      pending.delete(pid);
      if (call) calls.push({ ...call, args: `${call.args}${resumed[1]}`, returned: index });
      return;
    }
    const call = /^(\w+)\((\d+)<([^>]*)>(.*)$/.exec(rest);
    if (!call) return;
    const [, name = '', , fd = '', args = ''] = call;
    const unfinished = args.endsWith(' <unfinished ...>');
    const started = {
      name,
      fd,
      args: unfinished ? args.slice(0, -' <unfinished ...>'.length) : args,
      started: index,
    };
    if (unfinished) pending.set(pid, started);
    else calls.push({ ...started, returned: index });
  });
  return calls;
}

/**
 * Attaches strace to every thread of process `pid` (after its start, so the trace holds only what
 * follows); resolves once strace says it is attached (`Process <pid> attached with <n> threads`).
 */
async function attachStrace(strace: string, pid: number, traceFile: string) {
  const child = spawn(
    strace,
    [
      ...['-f', '-ttt', '-y', '-s', '48', '-o', traceFile],
      ...['-e', 'trace=read,write,writev,pwrite64,fsync,fdatasync', '-p', String(pid)],
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      if (err.includes(`Process ${pid} attached`)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`strace exited with ${code}: ${err}`)));
  });
  return child;
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

describe("the strace trace reader (on text in strace's format)", () => {
  it('joins a call another thread interrupted, and orders calls by where they start and return', () => {
    const trace = [
      '100  1.000001 read(34<socket:[7]>,  <unfinished ...>',
      '101  1.000002 fdatasync(25</data/wallet.db-wal>) = 0',
      '100  1.000003 <... read resumed>"POST /payments/credentials HTTP/1.1"..., 65536) = 369',
      '100  1.000004 writev(34<socket:[7]>, [{iov_base="HTTP/1.1 200 OK"...}], 2) = 273',
      'not a call',
    ].join('\n');
    expect(parseTrace(trace)).toEqual([
      { name: 'fdatasync', fd: '/data/wallet.db-wal', args: ') = 0', started: 1, returned: 1 },
      {
        name: 'read',
        fd: 'socket:[7]',
        args: ', "POST /payments/credentials HTTP/1.1"..., 65536) = 369',
        started: 0,
        returned: 2,
      },
      {
        name: 'writev',
        fd: 'socket:[7]',
        args: ', [{iov_base="HTTP/1.1 200 OK"...}], 2) = 273',
        started: 3,
        returned: 3,
      },
    ]);
  });
});

/**
 * The promise behind every acknowledgement, checked where it is kept: strace follows the service's
 * threads while it acknowledges credentials requests one after another, and for each 200 the trace must
 * show, after the request was read, the request's rows written to SQLite's WAL and then a flush of the
 * WAL to disk (fsync or fdatasync) returning, before the first byte of the answer is written. A crash
 * test (crash.test.ts) cannot see a missing flush: the kernel keeps a killed process's writes.
 */
describe('every acknowledgement is flushed before its answer, on sqlite (traced by strace)', () => {
  let database: TestDatabase;
  let calls: Call[];
  let answered: number[];

  beforeAll(async () => {
    const strace = requireStrace();
    database = await testDatabase('sqlite');
    const env = { DATABASE_URL: database.url, DATA_DIR: database.dataDir };
    const created = json(
      await runCli(env, [
        'merchant',
        'create',
        '--name',
        'Flushed',
        '--webhook-url',
        'http://127.0.0.1:9/hooks',
        '--approve-credentials',
        'PAN',
        '--json',
      ]),
    ) as { apiKey: string };
    const traceFile = path.join(database.dataDir, 'strace.txt');
    const service = await startServiceProcess({ ...env, WEBHOOK_DISPATCH: 'off' });
    try {
      const pool = new Pool(service.url, { connections: 1 });
      const headers = { authorization: `Bearer ${created.apiKey}`, 'content-type': 'application/json' };
      const post = async (urlPath: string, body: unknown) => {
        const response = await pool.request({
          method: 'POST',
          path: urlPath,
          headers,
          body: JSON.stringify(body),
        });
        return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> };
      };
      const session = await post('/sandbox/sessions', {});
      const { sessionId, paymentMethods } = session.body as {
        sessionId: string;
        paymentMethods: { paymentId: string }[];
      };
      const tracer = await attachStrace(strace, service.child.pid as number, traceFile);
      answered = [];
      for (let i = 0; i < REQUESTS; i++) {
        const ack = await post('/payments/credentials', {
          sessionId,
          paymentId: paymentMethods[0]?.paymentId,
          amount: 1000,
          currency: 'USD',
          merchantReference: `flushed-${i}`,
        });
        answered.push(ack.status);
      }
      // The client can read the last answer before strace has printed the return of the write that sent
      // it; one more request on the connection is read only after that return, so the trace holds it.
      await (await pool.request({ method: 'GET', path: '/healthz' })).body.dump();
      tracer.kill('SIGINT');
      await exited(tracer);
      await pool.close();
    } finally {
      service.child.kill('SIGTERM');
      await exited(service.child);
    }
    calls = parseTrace(fs.readFileSync(traceFile, 'utf8'));
  });
  afterAll(() => database?.drop());

  it('writes the WAL and flushes it between reading each request and answering it', () => {
    expect(answered).toEqual(Array(REQUESTS).fill(200));
    const isWal = (call: Call) => call.fd.endsWith('wallet.db-wal');
    const flushes = calls.filter(
      (call) => (call.name === 'fsync' || call.name === 'fdatasync') && isWal(call),
    );
    const walWrites = calls.filter((call) => call.name === 'pwrite64' && isWal(call));
    const sockets = calls.filter((call) => call.fd.startsWith('socket:'));
    const reads = sockets.filter((call) => call.name === 'read' && /= [1-9]\d*$/.test(call.args));
    const writes = sockets.filter((call) => call.name === 'write' || call.name === 'writev');

    let acknowledged = 0;
    for (const [index, answer] of writes.entries()) {
      // The request an answer is for: what its connection read since the connection last wrote.
      const previous = writes.slice(0, index).findLast((call) => call.fd === answer.fd);
      const request = reads.filter(
        (call) =>
          call.fd === answer.fd &&
          call.returned < answer.started &&
          call.started > (previous?.returned ?? -1),
      );
      if (!request[0]?.args.includes('POST /payments/credentials')) continue;
      expect(answer.args).toContain('HTTP/1.1 200 OK');
      const read = request.at(-1) as Call;
      const written = walWrites.find(
        (call) => call.started > read.returned && call.returned < answer.started,
      );
      const flushed =
        written && flushes.find((call) => call.started > written.returned && call.returned < answer.started);
      expect({ acknowledgement: acknowledged, written: Boolean(written), flushed: Boolean(flushed) }).toEqual(
        {
          acknowledgement: acknowledged,
          written: true,
          flushed: true,
        },
      );
      acknowledged++;
    }
    expect(acknowledged).toBe(REQUESTS);
  });
});
