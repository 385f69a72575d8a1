import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../audit/index.js';
import { createDb } from '../db/index.js';
import { cliEnv, expectIsoTimes, json, runCli } from '../test-support/cli.js';
import { engines, type TestDatabase, testDatabase } from '../test-support/db.js';
import { startTestService } from '../test-support/service.js';
import { until } from '../test-support/wait.js';

/** An event as `audit list --json` gives it: its time in ISO 8601, as the HTTP API and the log give it. */
type ListedEvent = Omit<AuditEvent, 'at'> & { at: string };

describe.each(engines())('wallet-checkout audit on %s', (engine) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  const cli = (...argv: string[]) => runCli(env, argv);
  const as = (operator: string, ...argv: string[]) => runCli({ ...env, WALLET_OPERATOR: operator }, argv);
  const list = async (...flags: string[]) => {
    const { events } = json(await cli('audit', 'list', '--json', ...flags)) as { events: ListedEvent[] };
    expectIsoTimes(events);
    return events;
  };

  beforeAll(async () => {
    database = await testDatabase(engine);
    env = {
      ...cliEnv(engine, database),
    };
    expect((await cli('migrate')).code).toBe(0);
  });
  afterAll(() => database.drop());

  it("names the person at the command line for each command's actions, and records its own reading", async () => {
    const { merchantId, apiKey } = json(
      await as('alice@shop-ops.example', 'merchant', 'create', '--name', 'Audited', '--json'),
    ) as { merchantId: string; apiKey: string };
    expect((await as('Bob', 'apikey', 'revoke', apiKey)).code).toBe(0);
    expect((await cli('vault', 'rotate-key')).code).toBe(0);
    expect((await cli('webhooks', 'recover', '--since', '2026-01-01T00:00:00Z')).code).toBe(0);

    const host = os.hostname();
    const events = await list();
    expect(events.map(({ seq, actor, action, merchantId: of }) => ({ seq, actor, action, of }))).toEqual([
      {
        seq: 1,
        actor: `operator:alice@shop-ops.example@${host}`,
        action: 'merchant.created',
        of: merchantId,
      },
      { seq: 2, actor: `operator:Bob@${host}`, action: 'api_key.revoked', of: merchantId },
      { seq: 3, actor: `operator:${os.userInfo().username}@${host}`, action: 'vault.key_rotated', of: null },
    ]);
    expect(JSON.stringify(events)).not.toContain(apiKey);
    // Nothing was given up, so the recovery changed nothing and recorded nothing; the listing recorded itself.
    expect(await list('--after', '3', '--limit', '1')).toMatchObject([{ seq: 4, action: 'audit.viewed' }]);
    expect(await list('--action', 'api_key.revoked')).toMatchObject([{ seq: 2 }]);
    expect(await list('--merchant', merchantId, '--since', '2000-01-01T00:00:00Z')).toHaveLength(2);
    expect((await list('--action', 'audit.viewed')).at(-1)).toMatchObject({
      action: 'audit.viewed',
      details: { merchantId, since: '2000-01-01T00:00:00.000Z' },
    });

    const text = await cli('audit', 'list', '--action', 'merchant.created');
    expect(text.stdout).toMatch(
      /^seq +time +actor +action +merchant +subject +details\n1 +\d{4}-.*merchant\.created/,
    );
    expect(text.stdout).toContain('"name": "Audited"');
  });

  it('says the trail is whole, and where it breaks when a row was altered', async () => {
    const whole = json(await cli('audit', 'verify', '--json')) as { ok: boolean; events: number };
    expect(whole).toMatchObject({ ok: true, head: { seq: whole.events } });
    const db = createDb(env.DATABASE_URL as string);
    try {
      await db.kysely
        .updateTable('audit_events')
        .set({ actor: 'operator:someone-else' })
        .where('seq', '=', 2)
        .execute();
    } finally {
      await db.close();
    }
    const broken = await cli('audit', 'verify');
    expect(broken.code).toBe(1);
    expect(broken.stdout).toBe(
      'The audit trail is broken at event 2: its fields do not match its hash (1 event(s) before it check out).\n',
    );
  });

  it('refuses a bad filter or operator name in one line', async () => {
    const action = await cli('audit', 'list', '--action', 'merchant.deleted');
    expect(action.code).toBe(2);
    expect(action.stderr).toMatch(
      /^error: --action must be one of merchant\.created, .*, got "merchant\.deleted"/,
    );
    const limit = await cli('audit', 'list', '--limit', '5000');
    expect(limit.stderr).toMatch(/^error: --limit must be a whole number from 1 to 1000, got "5000"/);
    const since = await cli('audit', 'list', '--since', 'yesterday');
    expect(since.stderr).toMatch(/^error: --since must be an RFC 3339 time with its zone/);
    const operator = await as('x'.repeat(101), 'audit', 'list');
    expect(operator.code).toBe(1);
    // Read with the configuration, before the database is opened: none is named.
    expect(operator.stderr).toBe(
      'error: WALLET_OPERATOR: must be at most 100 characters, without control characters\n',
    );
  });

  it("is copied into a running service's log, each event once, with its hash", async () => {
    const last = (await list('--limit', '1000')).at(-1) as ListedEvent;
    const service = await startTestService(
      engine,
      { DATABASE_URL: env.DATABASE_URL as string },
      { database },
    );
    try {
      const copied = await until(async () => {
        const lines = service.logs
          .flatMap((chunk) => chunk.split('\n'))
          .filter((line) => line.includes('"audit event"'))
          .map((line) => (JSON.parse(line) as { audit: ListedEvent }).audit);
        return lines.length > last.seq && lines;
      });
      // The listing above recorded itself, once it had read the events: one more than it showed.
      expect(copied.map((event) => event.seq)).toEqual(Array.from({ length: last.seq + 1 }, (_, i) => i + 1));
      expect(copied[last.seq - 1]).toEqual(last);
      expect(copied.at(-1)).toMatchObject({ action: 'audit.viewed', prevHash: last.hash });
    } finally {
      await service.close();
    }
  });
});
