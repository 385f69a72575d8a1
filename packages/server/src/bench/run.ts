/**
 * `npm run bench`: measures the credentials flow on this machine and prints the figures with the command
 * that produced them. Every server is a separate process on 127.0.0.1; the load generators and the webhook
 * receiver run in this process.
 *
 * 1. Ack throughput: autocannon, 50 connections, against a bare Fastify route and against
 *    POST /payments/credentials (SQLite, every commit on disk before its answer, group commit).
 * 2. Steady rate, once the webhooks of step 1 have all arrived: an open-loop generator sends 2,000
 *    requests a second on a fixed schedule (not a closed loop, so slow answers do not slow the offered
 *    load); ack latency and ack-to-receipt of each webhook, and the backlog (acknowledged minus
 *    received) every second.
 * 3. Backlog drain: requests acknowledged by a process that does not deliver (autocannon again, 50
 *    connections: the ack path alone), then a delivering process started: how fast the queue empties.
 * 4. Retention: with the clock moved past RETENTION_DAYS, one sweep deletes every settled message of
 *    the steps above, with its attempts and its credentials request; how fast, batch by batch.
 * 5. The audit trail, on the same database: an event recorded in a transaction of its own, then
 *    BENCH_AUDIT_EVENTS more, the whole chain verified, and every event copied into a log.
 * Around both closed loops it reads the service's threads' time on a core and waiting for one (Linux),
 * and before them the disk's own fdatasync time: where the acknowledgements' latency comes from.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { AuditTrail, recordAudit } from '../audit/index.js';
import { createDb } from '../db/index.js';
import { PaymentsRepo } from '../payments/repo.js';
import { Retention } from '../retention.js';
import { Webhooks } from '../webhooks/index.js';

const DIST = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const MAIN = path.join(DIST, 'main.js');
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const STEADY_RATE = Number(process.env.BENCH_RATE ?? 2_000);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 100_000);
/** autocannon's sampling interval: a closed loop's duration is known to this much (see answeredPerSecond). */
const SAMPLE_MS = 100;
/**
 * Node's flags for the service's processes, say `--cpu-prof --cpu-prof-dir=/tmp/prof` for a profile of each
 * (Node refuses --cpu-prof in NODE_OPTIONS).
 */
const SERVICE_NODE_ARGS = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
const AUDIT_EVENTS = Number(process.env.BENCH_AUDIT_EVENTS ?? 100_000);

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

const ms = (value: number) => `${value.toFixed(2)} ms`;

async function waitForLine(child: ChildProcess, pattern: RegExp): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (pattern.test(seen)) resolve();
    });
    child.once('exit', (code) =>
      reject(new Error(`process exited with ${code} before it was ready:\n${seen}`)),
    );
  });
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** A webhook receiver that notes when each merchantReference arrived. */
function startReceiver(port: number) {
  const arrivals = new Map<string, number>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const at = performance.now();
      const { merchantReference } = JSON.parse(Buffer.concat(chunks).toString()) as {
        merchantReference: string;
      };
      arrivals.set(merchantReference, at);
      response.statusCode = 204;
      response.end();
    });
  });
  server.keepAliveTimeout = 60_000;
  return {
    arrivals,
    listen: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Per thread of a process: nanoseconds on a core and waiting for one (Linux's schedstat); empty elsewhere. */
function threadTimes(pid: number): Map<string, { runNs: number; waitNs: number }> {
  const times = new Map<string, { runNs: number; waitNs: number }>();
  const tasks = `/proc/${pid}/task`;
  if (!fs.existsSync(tasks)) return times;
  for (const tid of fs.readdirSync(tasks)) {
    const stat = fs.readFileSync(`${tasks}/${tid}/schedstat`, 'utf8').split(' ');
    times.set(tid, { runNs: Number(stat[0]), waitNs: Number(stat[1]) });
  }
  return times;
}

/**
 * What the service's threads did between two `threadTimes` readings: the main thread's time on a core
 * and waiting for one, the busiest other thread (the delivery worker when it delivers), and the rest
 * (V8's GC and compiler threads, libuv's pool, the WAL's flush thread and the checkpointer).
 */
function threadReport(
  pid: number,
  before: Map<string, { runNs: number; waitNs: number }>,
  after: Map<string, { runNs: number; waitNs: number }>,
): string {
  if (after.size === 0) return 'not measured (no /proc here)';
  const s = (ns: number) => `${(ns / 1e9).toFixed(1)} s`;
  const spent = [...after].map(([tid, { runNs, waitNs }]) => ({
    tid,
    runNs: runNs - (before.get(tid)?.runNs ?? 0),
    waitNs: waitNs - (before.get(tid)?.waitNs ?? 0),
  }));
  const main = spent.find((thread) => thread.tid === String(pid));
  const others = spent.filter((thread) => thread !== main).sort((a, b) => b.runNs - a.runNs);
  const [busiest, ...rest] = others;
  const restNs = rest.reduce((sum, thread) => sum + thread.runNs, 0);
  return `main thread on a core ${s(main?.runNs ?? 0)}, waiting for one ${s(main?.waitNs ?? 0)}; busiest other thread ${s(busiest?.runNs ?? 0)}; all others ${s(restNs)}`;
}

/** `fdatasync` after each 16 KiB write to a file in `dir`, for one second: the disk's own flush time. */
async function flushLatencies(dir: string): Promise<number[]> {
  const file = path.join(dir, 'flush-probe');
  const fd = fs.openSync(file, 'w');
  const block = Buffer.alloc(16 * 1024, 1);
  const latencies: number[] = [];
  const end = performance.now() + 1_000;
  try {
    for (let offset = 0; performance.now() < end; offset = (offset + block.length) % (16 * 1024 * 1024)) {
      fs.writeSync(fd, block, 0, block.length, offset);
      const start = performance.now();
      await new Promise<void>((resolve, reject) =>
        fs.fdatasync(fd, (error) => (error ? reject(error) : resolve())),
      );
      latencies.push(performance.now() - start);
    }
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file);
  }
  return latencies.sort((a, b) => a - b);
}

interface Shop {
  url: string;
  apiKey: string;
  body: (reference: string) => string;
}

async function startService(
  dataDir: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [...SERVICE_NODE_ARGS, MAIN, 'serve'], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      DATABASE_URL: `sqlite:${dataDir}/wallet.db`,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await waitForLine(child, /listening/);
  return { child, url: `http://127.0.0.1:${port}` };
}

async function prepareShop(dataDir: string, webhookUrl: string, url: string): Promise<Shop> {
  const created = JSON.parse(
    execFileSync(
      process.execPath,
      [
        MAIN,
        'merchant',
        'create',
        '--name',
        'Bench Shop',
        '--webhook-url',
        webhookUrl,
        '--approve-credentials',
        'NETWORK_TOKEN,PAN',
        '--json',
      ],
      {
        env: {
          ...process.env,
          DATA_DIR: dataDir,
          DATABASE_URL: `sqlite:${dataDir}/wallet.db`,
          LOG_LEVEL: 'warn',
        },
      },
    ).toString(),
  ) as { apiKey: string };
  const pool = new Pool(url);
  const response = await pool.request({
    method: 'POST',
    path: '/sandbox/sessions',
    headers: { authorization: `Bearer ${created.apiKey}`, 'content-type': 'application/json' },
    body: '{}',
  });
  const session = (await response.body.json()) as {
    sessionId: string;
    paymentMethods: { paymentId: string }[];
  };
  await pool.close();
  const paymentId = session.paymentMethods[0]?.paymentId;
  return {
    url,
    apiKey: created.apiKey,
    body: (reference) =>
      JSON.stringify({
        paymentId,
        sessionId: session.sessionId,
        amount: 2599,
        merchantReference: reference,
        currency: 'USD',
      }),
  };
}

async function closedLoop(
  url: string,
  headers: Record<string, string>,
  body: (i: number) => string,
  options: { duration?: number; amount?: number },
) {
  let i = 0;
  const result = await autocannon({
    url: `${url}/payments/credentials`,
    connections: 50,
    sampleInt: SAMPLE_MS,
    ...(options.amount ? { amount: options.amount } : { duration: options.duration ?? DURATION_S }),
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        setupRequest: (request) => ({ ...request, body: body(i++) }),
      },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${result.non2xx} non-2xx answers and ${result.errors} errors`);
  return result;
}

/**
 * Requests answered per second of the run, over its duration to the tenth of a second (`sampleInt`). Not
 * autocannon's `requests.average`, the mean of its samples: a run of a fixed number of requests ends at
 * the first sample after its last answer, so with one-second samples that mean was the total over whole
 * seconds (100,000 answered in 5.2 s read 16,667 a second, not 19,231).
 */
function answeredPerSecond(result: autocannon.Result): number {
  return result.requests.total / result.duration;
}

function latencies(result: autocannon.Result): string {
  const { p50, p90, p97_5, p99 } = result.latency;
  return `${Math.round(answeredPerSecond(result))} req/s, p50 ${p50} ms, p90 ${p90} ms, p97.5 ${p97_5} ms, p99 ${p99} ms`;
}

async function benchBare(): Promise<autocannon.Result> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(DIST, 'bench', 'bare.js')], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await waitForLine(child, /ready/);
  const sample = JSON.stringify({
    paymentId: 'p',
    sessionId: 's',
    amount: 1,
    merchantReference: 'r',
    currency: 'USD',
  });
  try {
    return await closedLoop(`http://127.0.0.1:${port}`, {}, () => sample, {});
  } finally {
    await stop(child);
  }
}

async function openLoop(shop: Shop, arrivals: Map<string, number>, rate: number, seconds: number) {
  const pool = new Pool(shop.url, { connections: 128, pipelining: 1 });
  const acks: number[] = [];
  const ackToReceipt: number[] = [];
  const backlog: number[] = [];
  const ackedAt = new Map<string, number>();
  const total = rate * seconds;
  const start = performance.now();
  let sent = 0;
  const inflight: Promise<void>[] = [];
  const send = (reference: string) => {
    const began = performance.now();
    return pool
      .request({
        method: 'POST',
        path: '/payments/credentials',
        headers: { authorization: `Bearer ${shop.apiKey}`, 'content-type': 'application/json' },
        body: shop.body(reference),
      })
      .then(async (response) => {
        await response.body.dump();
        if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
        const now = performance.now();
        acks.push(now - began);
        ackedAt.set(reference, now);
      });
  };
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate));
      while (sent < due) inflight.push(send(`steady-${sent++}`));
      const second = Math.floor((performance.now() - start) / 1000);
      if (backlog.length < second)
        backlog.push(ackedAt.size - [...ackedAt.keys()].filter((key) => arrivals.has(key)).length);
      if (sent >= total) {
        clearInterval(tick);
        resolve();
      }
    }, 1);
  });
  await Promise.all(inflight);
  const deadline = performance.now() + 10_000;
  while ([...ackedAt.keys()].some((key) => !arrivals.has(key)) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  for (const [reference, at] of ackedAt) {
    const received = arrivals.get(reference);
    if (received !== undefined) ackToReceipt.push(Math.max(0, received - at));
  }
  await pool.close();
  acks.sort((a, b) => a - b);
  ackToReceipt.sort((a, b) => a - b);
  return {
    acks,
    ackToReceipt,
    backlog,
    missing: ackedAt.size - ackToReceipt.length,
    elapsedS: (performance.now() - start) / 1000,
  };
}

/** Sweeps the bench's database as a process would RETENTION_DAYS=1 two days on; the sweep's time. */
async function sweepAll(
  dataDir: string,
): Promise<{ messages: number; credentialsRequests: number; seconds: number }> {
  const db = createDb(`sqlite:${path.join(dataDir, 'wallet.db')}`);
  const day = 24 * 60 * 60 * 1000;
  const retention = new Retention({
    db,
    days: 1,
    webhooks: new Webhooks({ db, dispatcher: { wake() {} } }),
    payments: new PaymentsRepo(db),
    now: () => Date.now() + 2 * day,
  });
  const started = performance.now();
  const deleted = await retention.sweep();
  const seconds = (performance.now() - started) / 1000;
  await db.close();
  return { ...deleted, seconds };
}

/**
 * The audit trail on the bench's database: 200 events each in a transaction of its own (what an action
 * pays), AUDIT_EVENTS more a thousand to a transaction, then the chain verified and copied to a sink.
 */
async function auditTrail(dataDir: string) {
  const db = createDb(`sqlite:${path.join(dataDir, 'wallet.db')}`);
  const trail = new AuditTrail(db);
  const event = {
    actor: 'operator:bench@localhost',
    action: 'api_key.revoked',
    merchantId: 'mch_0Vc3Ui0v82pIdA8Bojn1TD',
    subject: 'key_0Vc3UimEUGOLOxUvri5clf',
    details: { prefix: 'sk_test_Mn9O', revokedAt: Date.now() },
  } as const;
  const single: number[] = [];
  for (let i = 0; i < 200; i++) {
    const started = performance.now();
    await trail.record(event);
    single.push(performance.now() - started);
  }
  for (let done = 0; done < AUDIT_EVENTS; done += 1_000) {
    await db.kysely.transaction().execute(async (trx) => {
      for (let i = 0; i < 1_000; i++) await recordAudit(trx, event, Date.now());
    });
  }
  let started = performance.now();
  const verified = await trail.verify();
  const verifyS = (performance.now() - started) / 1000;
  started = performance.now();
  const copied = await trail.copyNew(() => undefined);
  const copyS = (performance.now() - started) / 1000;
  await db.close();
  if (!verified.ok) throw new Error(`the bench's audit trail does not verify: ${verified.problem}`);
  single.sort((a, b) => a - b);
  return { single, events: verified.events, verifyS, copied, copyS };
}

async function main(): Promise<void> {
  // The settings that changed the phases, as they would be typed before the command.
  const settings = Object.entries(process.env)
    .filter(([name]) => name.startsWith('BENCH_'))
    .map(([name, value]) => `${name}=${/^[\w./:=-]*$/.test(value ?? '') ? value : `'${value}'`}`);
  const command = [...settings, 'npm run bench'].join(' ');
  const lines: string[] = [];
  const report = (line: string) => {
    lines.push(line);
    process.stdout.write(`${line}\n`);
  };
  report(
    `# ${command} — ${new Date().toISOString()}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`,
  );
  report('');

  const bare = await benchBare();

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-bench-'));
  const receiverPort = await freePort();
  const receiver = startReceiver(receiverPort);
  await receiver.listen();
  let service = await startService(dataDir, {});
  const shop = await prepareShop(dataDir, `http://127.0.0.1:${receiverPort}/hooks`, service.url);
  const auth = { authorization: `Bearer ${shop.apiKey}` };

  const flushes = await flushLatencies(dataDir);
  const delivering = service.child.pid as number;
  const deliveringBefore = threadTimes(delivering);
  const acks = await closedLoop(service.url, auth, (i) => shop.body(`closed-${i}`), {});
  const deliveringThreads = threadReport(delivering, deliveringBefore, threadTimes(delivering));
  const receivedDuringLoad = receiver.arrivals.size;
  // The steady phase starts once the closed loop's webhooks are all in, so that it measures its own.
  const catchUpStart = performance.now();
  const catchUpDeadline = catchUpStart + 120_000;
  while (receiver.arrivals.size < acks.requests.total && performance.now() < catchUpDeadline) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const catchUpS = (performance.now() - catchUpStart) / 1000;
  const steady = await openLoop(shop, receiver.arrivals, STEADY_RATE, DURATION_S);
  await stop(service.child);

  service = await startService(dataDir, { WEBHOOK_DISPATCH: 'off' });
  const deferring = service.child.pid as number;
  const deferringBefore = threadTimes(deferring);
  const deferred = await closedLoop(service.url, auth, (i) => shop.body(`backlog-${i}`), { amount: BACKLOG });
  const deferringThreads = threadReport(deferring, deferringBefore, threadTimes(deferring));
  await stop(service.child);
  const before = receiver.arrivals.size;
  const drainStart = performance.now();
  service = await startService(dataDir, {});
  while (receiver.arrivals.size - before < BACKLOG) await new Promise((resolve) => setTimeout(resolve, 5));
  const drainS = (performance.now() - drainStart) / 1000;
  const backlogArrivals = [...receiver.arrivals]
    .filter(([reference]) => reference.startsWith('backlog-'))
    .map(([, at]) => at);
  // From the first delivery to the last: the queue's own drain rate, without the process start-up.
  const deliveringS = (Math.max(...backlogArrivals) - Math.min(...backlogArrivals)) / 1000;
  await stop(service.child);
  await receiver.close();
  const dbBytes = ['wallet.db', 'wallet.db-wal'].reduce(
    (sum, name) => sum + (fs.statSync(path.join(dataDir, name), { throwIfNoEntry: false })?.size ?? 0),
    0,
  );
  const swept = await sweepAll(dataDir);
  const audit = await auditTrail(dataDir);
  fs.rmSync(dataDir, { recursive: true, force: true });

  report('| measure | result |');
  report('|---|---|');
  report(
    `| bare Fastify route, 50 connections | ${Math.round(answeredPerSecond(bare))} req/s, p50 ${bare.latency.p50} ms, p99 ${bare.latency.p99} ms |`,
  );
  report(
    `| credentials ack, 50 connections (durable), delivering its webhooks meanwhile | ${latencies(acks)} |`,
  );
  report(
    `| credentials ack, 50 connections, deliveries deferred (${BACKLOG} requests to a process with \`WEBHOOK_DISPATCH=off\`) | ${latencies(deferred)} |`,
  );
  report(`| the service's threads in the delivering closed loop | ${deliveringThreads} |`);
  report(`| the service's threads in the deferring closed loop | ${deferringThreads} |`);
  report(
    `| \`fdatasync\` of 16 KiB in the data folder, for 1 s | p50 ${ms(percentile(flushes, 50))}, p99 ${ms(percentile(flushes, 99))} (${flushes.length} flushes) |`,
  );
  report(`| ratio to the bare route | ${(answeredPerSecond(acks) / answeredPerSecond(bare)).toFixed(2)} |`);
  report(
    `| closed loop: its webhooks received | ${receivedDuringLoad} of ${acks.requests.total} while it ran; all ${catchUpS.toFixed(2)} s after |`,
  );
  report(
    `| steady ${STEADY_RATE}/s for ${DURATION_S} s: ack latency | p50 ${ms(percentile(steady.acks, 50))}, p99 ${ms(percentile(steady.acks, 99))} |`,
  );
  report(
    `| steady ${STEADY_RATE}/s: ack-to-receipt of the webhook | p50 ${ms(percentile(steady.ackToReceipt, 50))}, p99 ${ms(percentile(steady.ackToReceipt, 99))} |`,
  );
  report(
    `| steady ${STEADY_RATE}/s: backlog (acked − received) each second | ${steady.backlog.join(', ')}; undelivered at the end: ${steady.missing} |`,
  );
  report(
    `| backlog of ${BACKLOG} drained | ${(BACKLOG / deliveringS).toFixed(0)} deliveries/s from first to last delivery (${deliveringS.toFixed(2)} s); ${(BACKLOG / drainS).toFixed(0)}/s counting the process start (${drainS.toFixed(2)} s) |`,
  );
  report(
    `| database size after ${acks.requests.total + STEADY_RATE * DURATION_S + BACKLOG} requests | ${(dbBytes / 1024 / 1024).toFixed(1)} MiB |`,
  );
  report(
    `| retention sweep of every settled message (500 a transaction) | ${swept.messages} messages and ${swept.credentialsRequests} credentials requests in ${swept.seconds.toFixed(2)} s: ${(swept.messages / swept.seconds).toFixed(0)} messages/s, ${((swept.seconds * 1000 * 500) / swept.messages).toFixed(2)} ms a batch |`,
  );
  report(
    `| audit trail: one event in a transaction of its own (200) | p50 ${ms(percentile(audit.single, 50))}, p99 ${ms(percentile(audit.single, 99))} |`,
  );
  report(
    `| audit trail: the chain of ${audit.events} events verified | ${audit.verifyS.toFixed(2)} s: ${(audit.events / audit.verifyS).toFixed(0)} events/s |`,
  );
  report(
    `| audit trail: ${audit.copied} events copied into the log | ${audit.copyS.toFixed(2)} s: ${(audit.copied / audit.copyS).toFixed(0)} events/s |`,
  );
}

await main();
