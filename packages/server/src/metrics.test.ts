import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from './log.js';
import { Metrics } from './metrics.js';
import { TEST_CARDS } from './sandbox/seed.js';
import { engines } from './test-support/db.js';
import { type Receiver, startReceiver } from './test-support/receiver.js';
import { credentialsBody, startTestService, type TestService } from './test-support/service.js';
import { until } from './test-support/wait.js';

/** The samples of a Prometheus text exposition: name, labels and value of every line that is not a comment. */
function samples(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries(
        [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((pair) => [pair[1], pair[2]]),
      );
      return { name: match[1] as string, labels, value: Number(match[3]) };
    });
}

/** The value of the sample named `name` whose labels include `labels`; undefined when there is none. */
function sampled(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  return samples(text).find(
    (sample) =>
      sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  )?.value;
}

async function scrape(url: string): Promise<string> {
  const response = await request(url);
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.body.text();
}

describe.each(engines())('metrics on %s', (engine) => {
  let service: TestService;
  let receiver: Receiver;
  let metricsUrl: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    service = await startTestService(engine, { METRICS_PORT: '0' });
    metricsUrl = service.metricsUrl as string;
  });
  afterAll(async () => {
    await service.close();
    await receiver.close();
  });

  it('listens on its own port on 127.0.0.1, not on the API', async () => {
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(new URL(metricsUrl).port).not.toBe(new URL(service.url).port);
    const onApi = await service.call('GET', '/metrics');
    expect(onApi.status).toBe(404);
    expect(onApi.json.errorCode).toBe('NOT_FOUND');
  });

  it('counts requests by route template and status, and their latency', async () => {
    const shop = await service.merchant({ webhookUrl: receiver.url });
    const session = await service.session(shop.apiKey);
    const before = await scrape(metricsUrl);
    const route = { method: 'POST', route: '/payments/credentials' };
    const acked = { ...route, status_code: '200' };
    const count = (text: string) => sampled(text, 'wallet_http_requests_total', acked) ?? 0;

    const answered = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: credentialsBody(session),
    });
    expect(answered.status).toBe(200);
    const invalid = await service.call('POST', '/payments/credentials', { apiKey: shop.apiKey, body: {} });
    expect(invalid.status).toBe(400);
    expect((await service.call('GET', '/no/such/path/9f3a')).status).toBe(404);

    const after = await scrape(metricsUrl);
    expect(count(after) - count(before)).toBe(1);
    expect(sampled(after, 'wallet_http_requests_total', { ...route, status_code: '400' })).toBe(1);
    expect(
      sampled(after, 'wallet_http_requests_total', { method: 'GET', route: 'unmatched', status_code: '404' }),
    ).toBeGreaterThanOrEqual(1);
    expect(after).not.toContain('/no/such/path/9f3a');
    const latencies = sampled(after, 'wallet_http_request_duration_seconds_count', route) ?? 0;
    expect(latencies - (sampled(before, 'wallet_http_request_duration_seconds_count', route) ?? 0)).toBe(2);
    expect(sampled(after, 'wallet_http_request_duration_seconds_sum', route)).toBeGreaterThan(0);
  });

  it('counts webhook attempts by event and outcome: delivered, retrying, then failed', async () => {
    const delivering = await service.merchant({ webhookUrl: receiver.url });
    const attempts = (text: string, outcome: string) =>
      sampled(text, 'wallet_webhook_attempts_total', { event: 'PAYMENT_CREDENTIALS', outcome }) ?? 0;
    // Once earlier tests' messages are settled: a held message's attempt may not be counted yet.
    const before = await until(async () => {
      const text = await scrape(metricsUrl);
      return sampled(text, 'wallet_webhook_messages_held') === 0 && text;
    });
    const session = await service.session(delivering.apiKey);
    const arrived = receiver.next();
    await service.call('POST', '/payments/credentials', {
      apiKey: delivering.apiKey,
      body: credentialsBody(session, { merchantReference: 'metrics-delivered' }),
    });
    await arrived;
    await until(async () => attempts(await scrape(metricsUrl), 'delivered') > attempts(before, 'delivered'));

    // Refused four times: the test schedule (50, 100, 200 ms) retries three times, then gives up.
    const refusing = await startReceiver();
    refusing.respondWith(500, 500, 500, 500);
    try {
      const failing = await service.merchant({ webhookUrl: refusing.url });
      const failingSession = await service.session(failing.apiKey);
      await service.call('POST', '/payments/credentials', {
        apiKey: failing.apiKey,
        body: credentialsBody(failingSession, { merchantReference: 'metrics-failed' }),
      });
      const after = await until(async () => {
        const text = await scrape(metricsUrl);
        const settled = sampled(text, 'wallet_webhook_messages_held') === 0;
        return settled && attempts(text, 'failed') > attempts(before, 'failed') && text;
      });
      expect(attempts(after, 'delivered') - attempts(before, 'delivered')).toBe(1);
      expect(attempts(after, 'retrying') - attempts(before, 'retrying')).toBe(3);
      expect(attempts(after, 'failed') - attempts(before, 'failed')).toBe(1);
      expect(refusing.received).toHaveLength(4);
      const timed = (text: string) =>
        sampled(text, 'wallet_webhook_attempt_duration_seconds_count', { event: 'PAYMENT_CREDENTIALS' }) ?? 0;
      expect(timed(after) - timed(before)).toBe(5);
      // Nothing is due or in flight once every message is settled.
      expect(sampled(after, 'wallet_webhook_deliveries_in_flight')).toBe(0);
      expect(sampled(after, 'wallet_webhook_longest_due_wait_seconds')).toBe(0);
    } finally {
      await refusing.close();
    }
  });

  it("gives Node's own figures, and never card data or keys", async () => {
    const shop = await service.merchant({ webhookUrl: receiver.url });
    await service.session(shop.apiKey);
    const text = await scrape(metricsUrl);
    expect(sampled(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sampled(text, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(text).not.toContain(shop.apiKey);
    expect(text).not.toContain('sk_test_');
    // As a number of its own: a float such as 0.04000000000000002 (a latency sum) holds a test PAN's digits.
    for (const card of TEST_CARDS) expect(text).not.toMatch(new RegExp(`(?<![0-9.])${card.pan}(?![0-9])`));
  });

  it('answers other paths and methods in the error shape', async () => {
    const other = await request(metricsUrl.replace('/metrics', '/healthz'));
    expect(other.statusCode).toBe(404);
    expect(await other.body.json()).toEqual({
      errorCode: 'NOT_FOUND',
      errorMessage: 'No route GET /healthz; metrics are at GET /metrics.',
    });
    const posted = await request(metricsUrl, { method: 'POST', body: 'x' });
    expect(posted.statusCode).toBe(405);
    expect(posted.headers.allow).toBe('GET, HEAD');
    expect(((await posted.body.json()) as { errorCode: string }).errorCode).toBe('METHOD_NOT_ALLOWED');
    const head = await request(metricsUrl, { method: 'HEAD' });
    expect(head.statusCode).toBe(200);
    expect(await head.body.text()).toBe('');
  });
});

describe.each(engines())('metrics of a process that does not deliver, on %s', (engine) => {
  it('shows how long the first due message has waited', async () => {
    const receiver = await startReceiver();
    const service = await startTestService(engine, { METRICS_PORT: '0', WEBHOOK_DISPATCH: 'off' });
    try {
      const shop = await service.merchant({ webhookUrl: receiver.url });
      const session = await service.session(shop.apiKey);
      const answered = await service.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body: credentialsBody(session),
      });
      expect(answered.status).toBe(200);
      const waited = await until(async () => {
        const text = await scrape(service.metricsUrl as string);
        const seconds = sampled(text, 'wallet_webhook_longest_due_wait_seconds') ?? 0;
        return seconds > 0 && seconds;
      });
      expect(waited).toBeLessThan(60);
      const text = await scrape(service.metricsUrl as string);
      expect(sampled(text, 'wallet_webhook_messages_held')).toBe(0);
      expect(receiver.received).toHaveLength(0);
    } finally {
      await service.close();
      await receiver.close();
    }
  });
});

describe.each(engines())('without METRICS_PORT on %s', (engine) => {
  it('collects nothing and listens nowhere else', async () => {
    const service = await startTestService(engine);
    try {
      expect(service.metricsUrl).toBeUndefined();
      expect(service.services.metrics).toBeUndefined();
    } finally {
      await service.close();
    }
  });
});

describe('a gauge whose read fails, with the read faked', () => {
  it('reads NaN in that scrape, not zero, and its figure again once the read works', async () => {
    const metrics = new Metrics();
    let fails = true;
    const lines: string[] = [];
    const log = createLogger('warn', { write: (line: string) => lines.push(line) } as never);
    metrics.gauge(
      'wallet_test_gauge',
      'A figure read at scrape time.',
      async () => {
        if (fails) throw new Error('the database did not answer');
        return 7;
      },
      log,
    );
    expect(sampled(await metrics.text(), 'wallet_test_gauge')).toBeNaN();
    expect(lines.map((line) => JSON.parse(line).metric)).toEqual(['wallet_test_gauge']);
    fails = false;
    expect(sampled(await metrics.text(), 'wallet_test_gauge')).toBe(7);
  });

  it('spells values that are not finite as the text format does: NaN, +Inf, -Inf', async () => {
    const metrics = new Metrics();
    const log = createLogger('warn', { write: () => true } as never);
    metrics.gauge('wallet_test_unread', 'A read that fails.', () => Promise.reject(new Error('down')), log);
    metrics.gauge('wallet_test_up', 'An unbounded figure.', () => Number.POSITIVE_INFINITY, log);
    metrics.gauge('wallet_test_down', 'An unbounded figure.', () => Number.NEGATIVE_INFINITY, log);
    const lines = (await metrics.text()).split('\n');
    expect(lines).toContain('wallet_test_unread NaN');
    expect(lines).toContain('wallet_test_up +Inf');
    expect(lines).toContain('wallet_test_down -Inf');
    expect(lines.filter((line) => / Nan$/.test(line))).toEqual([]);
  });
});
