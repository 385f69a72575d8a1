import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../audit/index.js';
import { createDb } from '../db/index.js';
import { GatewayAccounts } from '../gateways/index.js';
import {
  cliEnv,
  databaseLine,
  ISO_TIME,
  json as jsonLine,
  type Outcome,
  runCli,
} from '../test-support/cli.js';
import { engines, type TestDatabase, testDatabase } from '../test-support/db.js';
import { parseKeyRing } from '../vault/keyring.js';

const SECRET = `sk_gateway_${randomBytes(12).toString('hex')}`;
const VAULT_KEYS = `k1:${randomBytes(32).toString('base64')}`;

describe.each(engines())('wallet-checkout gateway … on %s', (engine) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let merchantId: string;
  /** What every command that opens the database writes on stderr before anything else. */
  const named = () => databaseLine(env.DATABASE_URL as string);
  const json = (outcome: Outcome): Record<string, unknown> => {
    expect(outcome.stderr).toBe(named());
    return jsonLine(outcome) as Record<string, unknown>;
  };
  const cli = (...argv: string[]) => runCli(env, argv);
  const production = (...argv: string[]) =>
    runCli({ ...env, WALLET_ENV: 'production', PUBLIC_URL: 'https://pay.example' }, argv);
  /** Every line a command printed, for checking that no secret is ever among them. */
  const printed: string[] = [];
  const recorded = async (outcome: Promise<Outcome>) => {
    const result = await outcome;
    printed.push(result.stdout, result.stderr);
    return result;
  };

  beforeAll(async () => {
    database = await testDatabase(engine);
    env = {
      ...cliEnv(engine, database),
      VAULT_KEYS,
      SANDBOX_GATEWAY_URL: 'http://127.0.0.1:4010',
      GW_KEY: SECRET,
    };
    expect((await cli('migrate')).code).toBe(0);
    merchantId = json(await cli('merchant', 'create', '--name', 'Shop', '--json')).merchantId as string;
  });
  afterAll(async () => {
    expect(printed.join('\n')).not.toContain(SECRET);
    await database.drop();
  });

  it('shows the staging default for a merchant without an account', async () => {
    const text = await recorded(cli('gateway', 'show', merchantId));
    expect(text).toEqual({
      code: 0,
      stdout: `Merchant ${merchantId} has no gateway account: it pays through the sandbox gateway at the service's SANDBOX_GATEWAY_URL (http://127.0.0.1:4010 in this command's environment).\n`,
      stderr: named(),
    });
    expect(json(await recorded(cli('gateway', 'show', merchantId, '--json')))).toEqual({
      merchantId,
      settings: null,
    });
    const inProduction = await recorded(production('gateway', 'show', merchantId));
    expect(inProduction.stdout).toBe(
      `Merchant ${merchantId} has no gateway account: its payments fail with -1 until one is set with "wallet-checkout gateway set".\n`,
    );
  });

  it('sets an account, its credential read from the environment, stored encrypted and never printed', async () => {
    const set = json(
      await recorded(
        cli(
          'gateway',
          'set',
          merchantId,
          '--gateway',
          'sandbox',
          '--style',
          'xml',
          '--url',
          'http://127.0.0.1:4999',
          '--timeout-ms',
          '120000',
          '--credential',
          'apiKey=GW_KEY',
          '--json',
        ),
      ),
    );
    expect(set).toEqual({
      merchantId,
      settings: { gateway: 'sandbox', style: 'xml', url: 'http://127.0.0.1:4999', timeoutMs: 120_000 },
      credentialNames: ['apiKey'],
      createdAt: expect.stringMatching(ISO_TIME),
      updatedAt: expect.stringMatching(ISO_TIME),
    });

    const db = createDb(env.DATABASE_URL as string);
    try {
      const row = await db.kysely.selectFrom('gateway_accounts').selectAll().executeTakeFirstOrThrow();
      expect(row.credentials_ciphertext).not.toContain(SECRET);
      const accounts = new GatewayAccounts({
        db,
        keyRing: parseKeyRing(VAULT_KEYS),
        env: 'staging',
        sandboxGatewayUrl: 'http://127.0.0.1:4010',
      });
      expect((await accounts.gatewayOf(merchantId)).credentials.apiKey?.reveal()).toBe(SECRET);
      const [event] = await new AuditTrail(db).list({ merchantId, action: 'gateway_account.set' });
      expect(event).toMatchObject({ details: { gateway: 'sandbox', credentialNames: ['apiKey'] } });
      expect(JSON.stringify(event)).not.toContain(SECRET);
    } finally {
      await db.close();
    }

    const shown = await recorded(cli('gateway', 'show', merchantId));
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^merchant: {4}mch_\w+\ngateway: {5}sandbox\nstyle: {7}xml\n/);
    expect(shown.stdout).toContain('URL:         http://127.0.0.1:4999\n');
    expect(shown.stdout).toContain('time-out:    120000 ms\n');
    expect(shown.stdout).toContain('credentials: apiKey\n');
    expect(json(await recorded(cli('gateway', 'show', merchantId, '--json')))).toEqual(set);
  });

  it('removes the account, and says so when there was none', async () => {
    expect(json(await recorded(cli('gateway', 'remove', merchantId, '--json')))).toEqual({
      merchantId,
      removed: true,
    });
    expect(await recorded(cli('gateway', 'remove', merchantId))).toEqual({
      code: 0,
      stdout: `Merchant ${merchantId} had no gateway account; nothing to remove.\n`,
      stderr: named(),
    });
    expect(json(await recorded(cli('gateway', 'show', merchantId, '--json'))).settings).toBeNull();
    const db = createDb(env.DATABASE_URL as string);
    try {
      // The second removal found nothing to remove, and recorded nothing.
      const removals = await new AuditTrail(db).list({ merchantId, action: 'gateway_account.removed' });
      expect(removals).toHaveLength(1);
    } finally {
      await db.close();
    }
  });

  it('refuses to change the account while a payment through it has no decision, unless forced', async () => {
    const db = createDb(env.DATABASE_URL as string);
    const now = Date.now();
    const row = {
      merchant_id: merchantId,
      origin: 'https://shop.example',
      currency: 'USD',
      line_items: '[]',
      subtotal: 2500,
      total: 2500,
      expires_at: now + 3_600_000,
      created_at: now,
      updated_at: now,
    };
    try {
      await db.kysely
        .insertInto('orders')
        .values([
          { ...row, id: 'ord_paying', status: 'PROCESSING' },
          // Handed to the merchant's own processor, or settled: neither is paid through the account.
          { ...row, id: 'ord_selected', status: 'PROCESSING', session_id: 'ses_x' },
          { ...row, id: 'ord_paid', status: 'SUCCEEDED' },
        ])
        .execute();
      const set = ['gateway', 'set', merchantId, '--gateway', 'sandbox', '--url', 'http://127.0.0.1:4010'];
      for (const argv of [set, ['gateway', 'remove', merchantId]]) {
        expect(await recorded(cli(...argv))).toEqual({
          code: 1,
          stdout: '',
          stderr: `${named()}error: merchant ${merchantId} has 1 payment(s) under way with no decision from its gateway yet; changing the account now could charge them again. Wait until they settle ("order list --merchant ${merchantId} --status PROCESSING"), or pass --force.\n`,
        });
      }
      expect((await recorded(cli(...set, '--force'))).code).toBe(0);
      expect((await recorded(cli('gateway', 'remove', merchantId, '--force'))).code).toBe(0);
    } finally {
      await db.kysely.deleteFrom('orders').where('merchant_id', '=', merchantId).execute();
      await db.close();
    }
  });

  it.each([
    ['an unknown merchant', ['gateway', 'show', 'mch_unknown'], 'error: merchant mch_unknown does not exist'],
    [
      'a URL that is not one',
      ['gateway', 'set', '{merchant}', '--gateway', 'sandbox', '--url', 'nope'],
      'error: settings: sandbox gateway url is not a URL: nope',
    ],
    [
      'a credential whose variable is not set',
      [
        'gateway',
        'set',
        '{merchant}',
        '--gateway',
        'sandbox',
        '--url',
        'http://x',
        '--credential',
        'apiKey=NOT_SET',
      ],
      'error: credential apiKey: the environment variable given for it in --credential is not set or is empty',
    ],
  ])('refuses %s with exit 1 and one line', async (_name, argv, message) => {
    const outcome = await recorded(cli(...argv.map((arg) => (arg === '{merchant}' ? merchantId : arg))));
    expect(outcome).toEqual({ code: 1, stdout: '', stderr: `${named()}${message}\n` });
  });

  it('refuses the sandbox gateway in production', async () => {
    const outcome = await recorded(
      production('gateway', 'set', merchantId, '--gateway', 'sandbox', '--url', 'http://127.0.0.1:4010'),
    );
    expect(outcome).toEqual({
      code: 1,
      stdout: '',
      stderr: `${named()}error: settings: production does not use the sandbox gateway; give the merchant an account at a real gateway\n`,
    });
  });

  it.each([
    [['gateway', 'set', 'mch_1', '--url', 'http://x'], /^error: "gateway set" needs --gateway/],
    [['gateway', 'set', 'mch_1', '--gateway', 'sandbox'], /^error: "gateway set" needs --url/],
    [
      ['gateway', 'set', 'mch_1', '--gateway', 'sandbox', '--url', 'http://x', '--timeout-ms', '1.5'],
      /^error: --timeout-ms must be a whole number of milliseconds from 1 to 120000, got "1.5"/,
    ],
    [
      [
        'gateway',
        'set',
        'mch_1',
        '--gateway',
        'sandbox',
        '--url',
        'http://x',
        '--timeout-ms',
        '99999999999999',
      ],
      /^error: --timeout-ms must be a whole number of milliseconds from 1 to 120000, got "99999999999999"/,
    ],
    [
      ['gateway', 'set', 'mch_1', '--gateway', 'sandbox', '--url', 'http://x', '--timeout-ms', '120001'],
      /^error: --timeout-ms must be a whole number of milliseconds from 1 to 120000, got "120001"/,
    ],
    [
      ['gateway', 'set', 'mch_1', '--gateway', 'sandbox', '--url', 'http://x', '--url', 'http://y'],
      /^error: option --url is given more than once/,
    ],
    [
      [
        'gateway',
        'set',
        'mch_1',
        '--gateway',
        'sandbox',
        '--url',
        'http://x',
        '--credential',
        `apiKey=${SECRET}`,
      ],
      /^error: --credential must be NAME=ENV_VAR, ENV_VAR the upper-case name of an environment variable/,
    ],
    [
      [
        'gateway',
        'set',
        'mch_1',
        '--gateway',
        'sandbox',
        '--url',
        'http://x',
        '--credential',
        'a=B',
        '--credential',
        'a=C',
      ],
      /^error: --credential a is given more than once/,
    ],
    [['gateway', 'show'], /^error: "gateway show" needs <merchantId>/],
    [
      ['gateway', 'set', 'mch_x', '--gateway', 'acme', '--url', 'https://acme.example'],
      /^error: --gateway must be one of sandbox, got "acme" \(see/,
    ],
    [
      ['gateway', 'set', 'mch_x', '--gateway', 'sandbox', '--url', 'http://x', '--style', 'soap'],
      /^error: --style must be one of json, xml, got "soap" \(see/,
    ],
  ])('refuses %j with exit 2 and one line, never echoing a credential', async (argv, message) => {
    const outcome = await recorded(cli(...argv));
    expect(outcome.code).toBe(2);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr.split('\n')).toEqual([expect.stringMatching(message), '']);
  });

  it('explains the commands with --help', async () => {
    const group = await cli('gateway', '--help');
    expect(group.code).toBe(0);
    for (const name of ['gateway set', 'gateway show', 'gateway remove']) {
      expect(group.stdout).toContain(name);
      const help = await cli(...name.split(' '), '--help');
      expect(help.stdout).toContain(
        `Usage: wallet-checkout ${name} (<merchantId> | --merchant ID) [options]`,
      );
      expect(help.stdout).toContain('--json');
    }
    const set = await cli('gateway', 'set', '--help');
    for (const flag of [
      '--gateway sandbox',
      '--url URL',
      '--style json|xml',
      '--timeout-ms MS',
      '--credential NAME=ENV_VAR',
    ]) {
      expect(set.stdout).toContain(flag);
    }
  });
});
