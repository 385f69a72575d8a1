import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  afterAll,
  afterEach,
  beforeAll,
  beforeEach,
  describe,
  expect,
  it,
  type MockInstance,
  vi,
} from 'vitest';
import { createDb } from '../db/index.js';
import { Merchants } from '../merchants/index.js';
import { runNode } from '../test-support/child.js';
import {
  cliEnv,
  databaseLine,
  expectIsoTimes,
  ISO_TIME,
  json,
  type Outcome,
  runCli,
} from '../test-support/cli.js';
import { engines, type TestDatabase, testDatabase } from '../test-support/db.js';
import { freePorts } from '../test-support/ports.js';
import { loadKeyRing, parseKeyRing, STAGING_KEYS_FILE } from '../vault/keyring.js';
import { run } from './run.js';
import { freePort } from './service-commands.js';

const COMMAND_NAMES = [
  'serve',
  'start',
  'migrate',
  'merchant create',
  'merchant list',
  'merchant show',
  'merchant update',
  'merchant approve-credentials',
  'apikey create',
  'apikey list',
  'apikey revoke',
  'webhook-secret rotate',
  'vault rotate-key',
  'gateway set',
  'gateway show',
  'gateway remove',
  'webhooks status',
  'webhooks recover',
  'webhooks listen',
  'backup',
  'audit list',
  'audit verify',
];

const vaultKey = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

describe.each(engines())('wallet-checkout CLI on %s', (engine) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  const cli = (...argv: string[]) => runCli(env, argv);

  /** A service instance on the CLI's database and staging key file, to check what the commands did. */
  async function inspect<T>(work: (merchants: Merchants) => Promise<T>): Promise<T> {
    const db = createDb(env.DATABASE_URL as string);
    const keyRing = loadKeyRing({ vaultKeys: env.VAULT_KEYS, dataDir: database.dataDir, warn: () => {} });
    try {
      return await work(new Merchants({ db, keyRing, env: 'staging', cacheTtlMs: 0 }));
    } finally {
      await db.close();
    }
  }

  beforeAll(async () => {
    database = await testDatabase(engine);
    env = {
      ...cliEnv(engine, database),
    };
  });
  afterAll(() => database.drop());

  it('migrates a fresh database, saying when it made a new file, then has nothing to do', async () => {
    const first = await cli('migrate', '--json');
    expect(first.code).toBe(0);
    expect((JSON.parse(first.stdout) as { applied: string[] }).applied).toContain('001_initial');
    const [warning, ...rest] = first.stderr.split('\n');
    expect(warning).toMatch(/^warning: VAULT_KEYS is not set: generated a staging key ring/);
    // A PostgreSQL database exists before anything connects to it: only a SQLite file is new.
    const file = engine === 'sqlite' ? env.DATABASE_URL?.slice('sqlite:'.length) : undefined;
    const named = databaseLine(env.DATABASE_URL as string).trimEnd();
    expect(rest).toEqual(file ? [named, `note: created a new database at ${file}`, ''] : [named, '']);
    expect(json(await cli('migrate', '--json'))).toEqual({ applied: [] });
    const text = await cli('migrate');
    expect(text).toEqual({
      code: 0,
      stdout: 'The database is up to date.\n',
      stderr: databaseLine(env.DATABASE_URL as string),
    });
  });

  it('creates a merchant and prints exactly its id, API key and webhook secret with --json', async () => {
    const outcome = await cli(
      'merchant',
      'create',
      '--name',
      'Shop',
      '--webhook-url',
      'https://shop.example/hooks',
      '--origin',
      'https://shop.example',
      '--origin',
      'http://localhost:4001',
      '--approve-credentials',
      'NETWORK_TOKEN,PAN',
      '--variant',
      'connected',
      '--authorization-mode',
      'merchant',
      '--json',
    );
    expect(outcome.stdout).toMatch(
      /^\{"merchantId": "mch_[0-9A-Za-z]{22}", "apiKey": "sk_test_[0-9A-Za-z]{32}", "webhookSecret": "whsec_[A-Za-z0-9+/]{32}"\}\n$/,
    );
    const created = json(outcome) as { merchantId: string; apiKey: string; webhookSecret: string };
    expect(Object.keys(created)).toEqual(['merchantId', 'apiKey', 'webhookSecret']);

    await inspect(async (merchants) => {
      const merchant = await merchants.authenticate(created.apiKey);
      expect(merchant).toMatchObject({
        id: created.merchantId,
        name: 'Shop',
        webhookUrl: 'https://shop.example/hooks',
        allowedOrigins: ['https://shop.example', 'http://localhost:4001'],
        credentialTypes: ['NETWORK_TOKEN', 'PAN'],
        variant: 'connected',
        authorizationMode: 'merchant',
      });
      expect(await merchants.activeWebhookSecrets(created.merchantId)).toEqual([created.webhookSecret]);
    });
  });

  it('creates with shipping methods and tax rates, and says so in text', async () => {
    const outcome = await cli(
      'merchant',
      'create',
      '--name',
      'Text Shop',
      '--shipping-method',
      'Ground=599',
      '--shipping-method',
      'Next day=1999',
      '--tax-rate',
      'TX=825',
    );
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toMatch(
      /^Created merchant mch_\w+ \(Text Shop\)\.\n {2}API key: +sk_test_\w{32}\n/,
    );
    expect(outcome.stdout).toMatch(/Webhook secret: whsec_/);
    const id = /mch_\w+/.exec(outcome.stdout)?.[0] as string;
    const shown = json(await cli('merchant', 'show', id, '--json')) as Record<string, unknown>;
    expect(shown.shippingMethods).toEqual([
      { externalId: expect.any(String), name: 'Ground', price: 599 },
      { externalId: expect.any(String), name: 'Next day', price: 1999 },
    ]);
    expect(shown.taxSettings).toEqual({ ratesByState: { TX: 825 } });
    expect(shown.createdAt).toMatch(ISO_TIME);
    const text = await cli('merchant', 'show', id);
    expect(text.stdout).toMatch(/shipping methods: +Ground \$5\.99/);
    expect(text.stdout).toMatch(/tax rates: +TX 8\.25 %/);
  });

  it('lists, shows, updates and approves merchants', async () => {
    const { merchantId } = json(await cli('merchant', 'create', '--name', 'Before', '--json')) as {
      merchantId: string;
    };
    const listed = json(await cli('merchant', 'list', '--json')) as { id: string; createdAt: string }[];
    expect(listed.map((merchant) => merchant.id)).toContain(merchantId);
    expect(listed[0]?.createdAt).toMatch(ISO_TIME);
    expectIsoTimes(listed);
    const table = await cli('merchant', 'list');
    expect(table.stdout).toMatch(/^ID +NAME +VARIANT/);
    expect(table.stdout).toContain(merchantId);

    const updated = json(
      await cli(
        'merchant',
        'update',
        merchantId,
        '--name',
        'After',
        '--webhook-url',
        'https://after.example/hooks',
        '--origin',
        'https://after.example',
        '--variant',
        'connected',
        '--authorization-mode',
        'merchant',
        '--remember-devices',
        'off',
        '--json',
      ),
    );
    expectIsoTimes(updated);
    expect(updated).toMatchObject({
      id: merchantId,
      name: 'After',
      webhookUrl: 'https://after.example/hooks',
      allowedOrigins: ['https://after.example'],
      variant: 'connected',
      authorizationMode: 'merchant',
      rememberDevices: false,
    });
    const remembering = await cli('merchant', 'update', merchantId, '--remember-devices', 'on');
    expect(remembering.stdout).toMatch(/\nremember devices: +on\n/);
    const cleared = json(
      await cli('merchant', 'update', merchantId, '--webhook-url', '', '--clear-origins', '--json'),
    );
    expect(cleared).toMatchObject({ webhookUrl: null, allowedOrigins: [] });
    const text = await cli('merchant', 'update', merchantId, '--name', 'Again');
    expect(text.stdout).toMatch(
      /^Updated merchant mch_\w+\. Running services apply it within 5 s\.\nid: +mch_/,
    );

    const approved = json(
      await cli('merchant', 'approve-credentials', merchantId, '--types', 'PAN', '--json'),
    );
    expect(approved).toMatchObject({ id: merchantId, credentialTypes: ['PAN'] });
    expectIsoTimes(approved);
    const both = await cli('merchant', 'approve-credentials', merchantId, '--types', 'NETWORK_TOKEN,PAN');
    expect(both.stdout).toBe(
      `Merchant ${merchantId} is approved for NETWORK_TOKEN, PAN. Running services apply it within 5 s.\n`,
    );
    const withdrawn = await cli('merchant', 'approve-credentials', merchantId, '--types', '');
    expect(withdrawn.stdout).toBe(
      `Merchant ${merchantId} is no longer approved for the credentials flow. Running services apply it within 5 s.\n`,
    );
  });

  it('refuses bad settings and unknown ids with exit 1 and one line naming the problem', async () => {
    const { merchantId } = json(await cli('merchant', 'create', '--name', 'Strict', '--json')) as {
      merchantId: string;
    };
    const cases: [string[], RegExp][] = [
      [
        ['merchant', 'update', merchantId, '--webhook-url', 'ftp://x'],
        /^error: --webhook-url must be an absolute/,
      ],
      [
        [
          'merchant',
          'update',
          merchantId,
          '--origin',
          'https://b.example',
          '--origin',
          'https://a.example/path',
        ],
        /^error: --origin must be scheme:\/\/host\[:port\] with an http or https scheme, a host of letters, digits, hyphens and dots \(no wildcard\) and no path, got "https:\/\/a\.example\/path"$/,
      ],
      [['merchant', 'update', merchantId, '--tax-rate', 'TX=10001'], /^error: --tax-rate TX must be/],
      [['merchant', 'create', '--name', ''], /^error: --name must be 1 to 200 characters/],
      [['merchant', 'show', 'mch_missing'], /^error: merchant mch_missing does not exist$/],
      [['merchant', 'update', 'mch_missing', '--name', 'X'], /^error: merchant mch_missing does not exist$/],
      [['apikey', 'create', 'mch_missing'], /^error: merchant mch_missing does not exist$/],
      [['apikey', 'revoke', 'key_missing'], /^error: API key key_missing does not exist$/],
      [['webhook-secret', 'rotate', 'mch_missing'], /^error: merchant mch_missing does not exist$/],
    ];
    for (const [argv, message] of cases) {
      const outcome = await cli(...argv);
      expect(outcome.code, argv.join(' ')).toBe(1);
      expect(outcome.stdout).toBe('');
      // The database named first: an unknown id may be the sign of a command run on the wrong one.
      const named = databaseLine(env.DATABASE_URL as string).trimEnd();
      expect(outcome.stderr.split('\n')).toEqual([named, expect.stringMatching(message), '']);
    }
  });

  it('keeps webhooks off private networks unless WEBHOOK_ALLOWED_NETWORKS opens them', async () => {
    const { merchantId } = json(await cli('merchant', 'create', '--name', 'Intranet', '--json')) as {
      merchantId: string;
    };
    const update = ['merchant', 'update', merchantId, '--webhook-url', 'http://10.1.2.3/hooks', '--json'];
    expect(await cli(...update.slice(0, -1))).toEqual({
      code: 1,
      stdout: '',
      stderr: `${databaseLine(env.DATABASE_URL as string)}error: --webhook-url must not point to a private address (staging delivers to public and loopback addresses only), got "10.1.2.3"\n`,
    });
    const opened = await runCli({ ...env, WEBHOOK_ALLOWED_NETWORKS: '10.1.0.0/16' }, update);
    expect(opened.code, opened.stderr).toBe(0);
    expect(json(opened)).toMatchObject({ webhookUrl: 'http://10.1.2.3/hooks' });
  });

  it('keeps webhooks off loopback on a staging service others reach, unless WEBHOOK_LOOPBACK opens it', async () => {
    const shared = { ...env, PUBLIC_URL: 'https://staging.pay.example' };
    const { merchantId } = json(
      await runCli(shared, ['merchant', 'create', '--name', 'Shared', '--json']),
    ) as {
      merchantId: string;
    };
    const update = [
      'merchant',
      'update',
      merchantId,
      '--webhook-url',
      'http://127.0.0.1:9000/hooks',
      '--json',
    ];
    expect(await runCli(shared, update.slice(0, -1))).toEqual({
      code: 1,
      stdout: '',
      stderr: `${databaseLine(env.DATABASE_URL as string)}error: --webhook-url must not point to a loopback address (staging delivers to public addresses only), got "127.0.0.1"\n`,
    });
    const opened = await runCli({ ...shared, WEBHOOK_LOOPBACK: 'on' }, update);
    expect(opened.code, opened.stderr).toBe(0);
    expect(json(opened)).toMatchObject({ webhookUrl: 'http://127.0.0.1:9000/hooks' });
  });

  it('with --json, reports a failure as one JSON line, the last on stderr, keeping the exit code', async () => {
    expect(await cli('merchant', 'show', 'nope', '--json')).toEqual({
      code: 1,
      stdout: '',
      stderr: `${databaseLine(env.DATABASE_URL as string)}{"error": {"code": "MERCHANT_NOT_FOUND", "message": "merchant nope does not exist"}}\n`,
    });
    const invalid = await cli('merchant', 'create', '--name', '', '--json');
    expect(invalid.code).toBe(1);
    expect(JSON.parse(invalid.stderr.trimEnd().split('\n').at(-1) as string)).toEqual({
      error: {
        code: 'VALIDATION_ERROR',
        message: expect.stringMatching(/^--name must be 1 to 200 characters/),
      },
    });
  });

  it('creates, lists and revokes API keys', async () => {
    const created = json(await cli('merchant', 'create', '--name', 'Keys', '--json')) as {
      merchantId: string;
      apiKey: string;
    };
    const second = json(await cli('apikey', 'create', created.merchantId, '--json')) as Record<
      string,
      string
    >;
    expect(second).toEqual({
      id: expect.stringMatching(/^key_/),
      merchantId: created.merchantId,
      apiKey: expect.stringMatching(/^sk_test_[0-9A-Za-z]{32}$/),
    });
    const listed = json(await cli('apikey', 'list', created.merchantId, '--json')) as { id: string }[];
    expect(listed.map((key) => key.id)).toContain(second.id);
    expect(listed).toHaveLength(2);
    expect(JSON.stringify(listed)).not.toContain(created.apiKey);
    expect(JSON.stringify(listed)).not.toContain(second.apiKey);

    const revoked = json(await cli('apikey', 'revoke', second.id as string, '--json')) as Record<
      string,
      unknown
    >;
    expect(revoked).toMatchObject({
      id: second.id,
      merchantId: created.merchantId,
      revokedAt: expect.stringMatching(ISO_TIME),
    });
    expectIsoTimes(revoked);
    // By the key itself, as whoever found it leaked has it; an unknown key is never echoed.
    const third = json(await cli('apikey', 'create', created.merchantId, '--json')) as Record<string, string>;
    expect(json(await cli('apikey', 'revoke', third.apiKey as string, '--json'))).toMatchObject({
      id: third.id,
      revokedAt: expect.stringMatching(ISO_TIME),
    });
    // A second revoke keeps the first time and records nothing more.
    const again = await cli('apikey', 'revoke', second.id as string);
    expect(again.stdout).toMatch(
      new RegExp(
        `^API key ${second.id} \\(sk_test_\\w+…\\) was already revoked at \\S+Z; nothing changed\\.\n$`,
      ),
    );
    const revokes = json(
      await cli('audit', 'list', '--action', 'api_key.revoked', '--merchant', created.merchantId, '--json'),
    ) as { events: { subject: string }[] };
    expect(revokes.events.map((event) => event.subject)).toEqual([second.id, third.id]);
    const unknownKey = `sk_test_${'Z'.repeat(32)}`;
    expect(await cli('apikey', 'revoke', unknownKey)).toEqual({
      code: 1,
      stdout: '',
      stderr: `${databaseLine(env.DATABASE_URL as string)}error: API key matching the key given does not exist\n`,
    });
    const table = await cli('apikey', 'list', created.merchantId);
    expect(table.stdout).toMatch(/^ID +KEY +CREATED +LAST USED +REVOKED\n/);
    expect(table.stdout).toContain(`${(second.apiKey as string).slice(0, 12)}…`);
    await inspect(async (merchants) => {
      expect(await merchants.authenticate(second.apiKey as string)).toBeUndefined();
      expect(await merchants.authenticate(third.apiKey as string)).toBeUndefined();
      expect((await merchants.authenticate(created.apiKey))?.id).toBe(created.merchantId);
    });
    // The service's look-up above recorded the first key's use; the revoked keys were never used.
    const uses = json(await cli('apikey', 'list', created.merchantId, '--json')) as {
      createdAt: string;
      lastUsedAt: string | null;
    }[];
    expect(uses.map((key) => key.lastUsedAt !== null)).toEqual([true, false, false]);
    expectIsoTimes(uses);
    // As the HTTP API gives times: ISO 8601 strings, never milliseconds.
    expect(uses[0]?.lastUsedAt).toMatch(ISO_TIME);
    expect(uses[0]?.createdAt).toMatch(ISO_TIME);
    const text = await cli('apikey', 'create', created.merchantId);
    expect(text.stdout).toMatch(/^Created API key key_\w+ for mch_\w+:\n {2}sk_test_\w{32}\n/);
  });

  it('takes the merchant of every <merchantId> command as --merchant too, as order list does', async () => {
    const { merchantId } = json(await cli('merchant', 'create', '--name', 'Flagged', '--json')) as {
      merchantId: string;
    };
    const positional = json(await cli('apikey', 'list', merchantId, '--json'));
    expect(json(await cli('apikey', 'list', '--merchant', merchantId, '--json'))).toEqual(positional);
    expect(json(await cli('merchant', 'show', `--merchant=${merchantId}`, '--json'))).toMatchObject({
      id: merchantId,
    });
    expect(
      json(await cli('merchant', 'update', '--merchant', merchantId, '--name', 'Flagged too', '--json')),
    ).toMatchObject({ id: merchantId, name: 'Flagged too' });
    expect(
      json(
        await cli('merchant', 'approve-credentials', '--merchant', merchantId, '--types', 'PAN', '--json'),
      ),
    ).toMatchObject({ id: merchantId, credentialTypes: ['PAN'] });
    expect(json(await cli('apikey', 'create', '--merchant', merchantId, '--json'))).toMatchObject({
      merchantId,
    });
    expect(
      json(await cli('webhook-secret', 'rotate', '--merchant', merchantId, '--overlap-hours', '0', '--json')),
    ).toMatchObject({ merchantId });
    expect(json(await cli('gateway', 'show', '--merchant', merchantId, '--json'))).toEqual({
      merchantId,
      settings: null,
    });
    expect(await cli('merchant', 'show', '--merchant', 'mch_missing')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('error: merchant mch_missing does not exist\n'),
    });
    // Both forms at once, or neither: a bad command line.
    expect(await cli('apikey', 'list', merchantId, '--merchant', merchantId)).toEqual({
      code: 2,
      stdout: '',
      stderr: `error: unexpected argument "${merchantId}" for "apikey list": <merchantId> is given by --merchant (see wallet-checkout apikey list --help)\n`,
    });
    expect(await cli('apikey', 'list')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'error: "apikey list" needs <merchantId> (see wallet-checkout apikey list --help)\n',
    });
  });

  it('rotates the webhook secret with an overlap', async () => {
    const created = json(await cli('merchant', 'create', '--name', 'Rotate', '--json')) as {
      merchantId: string;
      webhookSecret: string;
    };
    const rotated = json(
      await cli('webhook-secret', 'rotate', created.merchantId, '--overlap-hours', '1', '--json'),
    ) as { merchantId: string; webhookSecret: string; previousSecretsExpireAt: string };
    expect(rotated.merchantId).toBe(created.merchantId);
    expect(rotated.webhookSecret).toMatch(/^whsec_/);
    expect(rotated.previousSecretsExpireAt).toMatch(ISO_TIME);
    expectIsoTimes(rotated);
    expect(Date.parse(rotated.previousSecretsExpireAt)).toBeGreaterThan(Date.now() + 3500_000);
    await inspect(async (merchants) => {
      expect(await merchants.activeWebhookSecrets(created.merchantId)).toEqual([
        rotated.webhookSecret,
        created.webhookSecret,
      ]);
    });
    const shown = json(await cli('merchant', 'show', created.merchantId, '--json')) as Record<
      string,
      unknown
    >;
    expect([shown.liveApiKeys, shown.olderWebhookSecretsUntil]).toEqual([
      1,
      [rotated.previousSecretsExpireAt],
    ]);
    expect((await cli('merchant', 'show', created.merchantId)).stdout).toContain(
      `\nAPI keys:         1 live (apikey list)\nwebhook secrets:  the current one, and 1 older signing until ${rotated.previousSecretsExpireAt}`,
    );
    const now = await cli('webhook-secret', 'rotate', created.merchantId, '--overlap-hours', '0');
    expect(now.stdout).toMatch(
      /^New webhook secret for mch_\w+:\n {2}whsec_\S+\nOlder secrets no longer sign here; a running service may sign with them for up to 5 s more\.\n$/,
    );
    const bad = await cli('webhook-secret', 'rotate', created.merchantId, '--overlap-hours', 'soon');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --overlap-hours must be a number of hours from 0 to 720, got "soon"/);
    const long = await cli('webhook-secret', 'rotate', created.merchantId, '--overlap-hours', '721');
    expect([long.code, long.stderr]).toEqual([
      2,
      expect.stringMatching(/^error: --overlap-hours must be a number of hours from 0 to 720, got "721"/),
    ]);
  });

  it('rotates the staging vault key and re-encrypts the secrets', async () => {
    const created = json(await cli('merchant', 'create', '--name', 'Vault', '--json')) as {
      merchantId: string;
      webhookSecret: string;
    };
    const before = loadKeyRing({ vaultKeys: undefined, dataDir: database.dataDir, warn: () => {} });
    const result = json(await cli('vault', 'rotate-key', '--json')) as {
      primaryKeyId: string;
      reencrypted: number;
    };
    expect(result.primaryKeyId).not.toBe(before.primaryKeyId);
    expect(result.reencrypted).toBeGreaterThanOrEqual(1);
    const file = fs.readFileSync(path.join(database.dataDir, STAGING_KEYS_FILE), 'utf8').trim();
    const ring = parseKeyRing(file);
    expect(ring.keyIds).toEqual([result.primaryKeyId, ...before.keyIds]);
    await inspect(async (merchants) => {
      expect(await merchants.activeWebhookSecrets(created.merchantId)).toEqual([created.webhookSecret]);
    });
  });

  it('notes on stderr, in production only, the authorization mode a merchant got by default', async () => {
    const other = await testDatabase(engine);
    try {
      const staging = { ...cliEnv(engine, other), VAULT_KEYS: vaultKey('k') };
      const production = { ...staging, WALLET_ENV: 'production', PUBLIC_URL: 'https://pay.example' };
      expect((await runCli(staging, ['migrate'])).code).toBe(0);
      const defaulted = await runCli(production, ['merchant', 'create', '--name', 'Live', '--json']);
      expect(defaulted.code).toBe(0);
      // stdout holds the JSON alone; the note is on stderr.
      const { merchantId } = JSON.parse(defaulted.stdout) as { merchantId: string };
      const named = databaseLine(staging.DATABASE_URL);
      expect(defaulted.stderr).toBe(
        `${named}note: ${merchantId} authorizes payments in service mode (the default), through its gateway account ("gateway set"); for its own processor: wallet-checkout merchant update ${merchantId} --authorization-mode merchant\n`,
      );
      const chosen = await runCli(production, [
        'merchant',
        'create',
        '--name',
        'Own',
        '--authorization-mode',
        'service',
      ]);
      expect([chosen.code, chosen.stderr]).toEqual([0, named]);
      const inStaging = await runCli(staging, ['merchant', 'create', '--name', 'Test']);
      expect([inStaging.code, inStaging.stderr]).toEqual([0, named]);
    } finally {
      await other.drop();
    }
  });

  it('rotates to the first key of VAULT_KEYS', async () => {
    const other = await testDatabase(engine);
    try {
      const oldKey = vaultKey('old');
      const vaultEnv = {
        ...cliEnv(engine, other),
        VAULT_KEYS: oldKey,
      };
      expect((await runCli(vaultEnv, ['migrate'])).code).toBe(0);
      const created = json(await runCli(vaultEnv, ['merchant', 'create', '--name', 'Keys', '--json'])) as {
        merchantId: string;
      };
      const single = await runCli(vaultEnv, ['vault', 'rotate-key']);
      expect(single.stderr).toBe(
        `${databaseLine(vaultEnv.DATABASE_URL)}warning: VAULT_KEYS holds one key, so this re-encrypts under the same key.\n`,
      );
      // The line docs/operations.md quotes.
      expect(single.stdout).toBe('Re-encrypted 0 value(s) under the primary key old.\n');
      const lacking = await runCli({ ...vaultEnv, VAULT_KEYS: vaultKey('new') }, [
        'vault',
        'rotate-key',
        '--json',
      ]);
      expect([lacking.code, lacking.stdout]).toEqual([1, '']);
      const [named, error, ...rest] = lacking.stderr.split('\n');
      expect([`${named}\n`, ...rest]).toEqual([databaseLine(vaultEnv.DATABASE_URL), '']);
      expect(JSON.parse(error as string)).toEqual({
        error: {
          code: 'CONFIGURATION_ERROR',
          message:
            'VAULT_KEYS: lacks keys that stored values are sealed under: old (in webhook_secrets.secret_ciphertext); put them back after the primary key, run npx wallet-checkout vault rotate-key, and remove them only once it has finished',
        },
      });
      const rotated = json(
        await runCli({ ...vaultEnv, VAULT_KEYS: `${vaultKey('new')},${oldKey}` }, [
          'vault',
          'rotate-key',
          '--json',
        ]),
      );
      expect(rotated).toEqual({ primaryKeyId: 'new', reencrypted: 1 });
      const db = createDb(vaultEnv.DATABASE_URL);
      const row = await db.kysely
        .selectFrom('webhook_secrets')
        .select('secret_ciphertext')
        .where('merchant_id', '=', created.merchantId)
        .executeTakeFirstOrThrow();
      await db.close();
      expect(row.secret_ciphertext.split('.')[1]).toBe('new');
      expect(fs.existsSync(path.join(other.dataDir, STAGING_KEYS_FILE))).toBe(false);
    } finally {
      await other.drop();
    }
  });

  it('runs the service until it is told to stop', async () => {
    let stop: (signal: string) => void = () => {};
    const stopped = new Promise<string>((resolve) => {
      stop = resolve;
    });
    const lines: string[] = [];
    let listening: (url: string) => void = () => {};
    const started = new Promise<string>((resolve) => {
      listening = resolve;
    });
    let docsUrl = '';
    let metricsUrl = '';
    const running = run(['serve', '--json'], {
      stdout: (text) => {
        lines.push(text);
        const output = JSON.parse(text) as {
          url: string;
          docsUrl: string;
          metricsUrl: string;
          database: string;
        };
        expect(output.database).toBe(
          databaseLine(env.DATABASE_URL as string)
            .slice('database: '.length)
            .trimEnd(),
        );
        docsUrl = output.docsUrl;
        metricsUrl = output.metricsUrl;
        listening(output.url);
      },
      stderr: (text) => lines.push(text),
      env: { ...env, PORT: '0', LOG_LEVEL: 'silent', METRICS_PORT: '0' },
      waitForStop: () => stopped,
    });
    const url = await Promise.race([started, running.then((code) => `exited ${code}: ${lines.join('')}`)]);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    // PORT=0 without PUBLIC_URL: the default public URL names the port the service got.
    const publicUrl = `http://localhost:${new URL(url).port}`;
    expect(docsUrl).toBe(`${publicUrl}/docs`);
    const openapi = (await (await fetch(`${url}/openapi.json`)).json()) as { servers: { url: string }[] };
    expect(openapi.servers).toEqual([{ url: publicUrl }]);
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(await (await fetch(metricsUrl)).text()).toContain('wallet_http_requests_total{');
    stop('SIGTERM');
    expect(await running).toBe(0);
    expect(lines.join('')).toContain('SIGTERM: stopping');
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    await expect(fetch(metricsUrl)).rejects.toThrow();
  });

  it('serve names its database among its URLs, with the migrations it applied', async () => {
    const other = await testDatabase(engine);
    const otherEnv = { ...cliEnv(engine, other), PORT: '0', LOG_LEVEL: 'silent' };
    const serveOnce = async () => {
      const stdout: string[] = [];
      const stderr: string[] = [];
      let stop: (signal: string) => void = () => {};
      const stopped = new Promise<string>((resolve) => {
        stop = resolve;
      });
      const code = run(['serve'], {
        stdout: (text) => {
          stdout.push(text);
          stop('SIGTERM');
        },
        stderr: (text) => stderr.push(text),
        env: otherEnv,
        waitForStop: () => stopped,
      });
      expect(await code).toBe(0);
      return { stdout: stdout.join(''), stderr: stderr.join('') };
    };
    try {
      const where = databaseLine(otherEnv.DATABASE_URL).slice('database: '.length).trimEnd();
      const first = await serveOnce();
      const [listening, database] = first.stdout.split('\n');
      expect(listening).toMatch(/^Wallet Checkout is listening on /);
      expect(database?.startsWith(`Database: ${where}; applied `)).toBe(true);
      expect(database).toMatch(/; applied \d+ migration\(s\) now\.$/);
      expect(first.stderr).not.toContain(databaseLine(otherEnv.DATABASE_URL));
      const second = await serveOnce();
      expect(second.stdout).toContain(`\nDatabase: ${where}; no migrations to apply.\n`);
    } finally {
      await other.drop();
    }
  });

  it('start runs the demo store beside the service, and a later start refreshes its merchants', async () => {
    interface StartOutput {
      demo: {
        storeUrl: string;
        merchant: { merchantId: string; apiKey: string };
        ownProcessorMerchant: { merchantId: string; apiKey: string };
      };
    }
    const startOnce = async (): Promise<StartOutput> => {
      const [gatewayPort, storePort] = await freePorts(2);
      let stop: (signal: string) => void = () => {};
      const stopped = new Promise<string>((resolve) => {
        stop = resolve;
      });
      let printed: (output: StartOutput) => void = () => {};
      const started = new Promise<StartOutput>((resolve) => {
        printed = resolve;
      });
      const lines: string[] = [];
      const running = run(['start', '--json'], {
        stdout: (text) => printed(JSON.parse(text) as StartOutput),
        stderr: (text) => lines.push(text),
        env: {
          ...env,
          PORT: '0',
          LOG_LEVEL: 'silent',
          DEMO_STORE_PORT: String(storePort),
          SANDBOX_GATEWAY_URL: `http://127.0.0.1:${gatewayPort}`,
        },
        waitForStop: () => stopped,
      });
      const output = await Promise.race([
        started,
        running.then((code) => {
          throw new Error(`exited ${code}: ${lines.join('')}`);
        }),
      ]);
      try {
        expect(output.demo.storeUrl).toBe(`http://localhost:${storePort}`);
        const shop = await fetch(`${output.demo.storeUrl}/`);
        expect(shop.status).toBe(200);
        expect(await shop.text()).toContain('Demo Store');
        const merchants = await inspect((m) => m.list());
        for (const id of [output.demo.merchant.merchantId, output.demo.ownProcessorMerchant.merchantId]) {
          expect(merchants.find((merchant) => merchant.id === id)).toMatchObject({
            allowedOrigins: [`http://localhost:${storePort}`],
            webhookUrl: expect.stringMatching(new RegExp(`^http://localhost:${storePort}/webhooks/`)),
          });
        }
        expect(merchants.find((m) => m.id === output.demo.ownProcessorMerchant.merchantId)).toMatchObject({
          authorizationMode: 'merchant',
          credentialTypes: ['NETWORK_TOKEN', 'PAN'],
        });
      } finally {
        stop('SIGTERM');
        expect(await running).toBe(0);
      }
      await expect(fetch(`${output.demo.storeUrl}/`)).rejects.toThrow();
      return output;
    };
    const first = await startOnce();
    const second = await startOnce();
    expect(second.demo.merchant.merchantId).toBe(first.demo.merchant.merchantId);
    expect(second.demo.ownProcessorMerchant.merchantId).toBe(first.demo.ownProcessorMerchant.merchantId);
    expect(second.demo.merchant.apiKey).not.toBe(first.demo.merchant.apiKey);
  }, 30_000);

  it('takes no connection on its ports before it serves there: the check for taken ports only connects', async () => {
    // A check that listened on PORT for a moment would take the connections clients open meanwhile (a
    // load balancer's, during a rolling restart) and reset them as it closed: a POST sent, and no answer.
    const [port, metricsPort] = await freePorts(2);
    const listen = vi.spyOn(net.Server.prototype, 'listen');
    try {
      const served = await runCli(
        { ...env, LOG_LEVEL: 'silent', PORT: String(port), METRICS_PORT: String(metricsPort) },
        ['serve'],
        { waitForStop: async () => 'SIGTERM' },
      );
      expect(served.code, served.stderr).toBe(0);
      const ports = listenedPorts(listen);
      // Each once: when it serves there.
      expect(ports.filter((listened) => listened === port)).toEqual([port]);
      expect(ports.filter((listened) => listened === metricsPort)).toEqual([metricsPort]);
    } finally {
      listen.mockRestore();
    }
  });

  it('opens its API port last: a METRICS_PORT it cannot listen on stops it before it takes a request', async () => {
    // A port an outgoing connection holds as its own (as one to PostgreSQL may, from the ephemeral range)
    // passes the check for taken ports, which connects, and stops the start at the listen itself.
    const [port] = await freePorts(1);
    const peer = net.createServer();
    await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
    const outgoing = net.connect({ port: (peer.address() as net.AddressInfo).port, host: '127.0.0.1' });
    await new Promise((resolve) => outgoing.once('connect', resolve));
    const metricsPort = outgoing.localPort as number;
    const listen = vi.spyOn(net.Server.prototype, 'listen');
    try {
      const served = await runCli(
        { ...env, LOG_LEVEL: 'silent', PORT: String(port), METRICS_PORT: String(metricsPort) },
        ['serve'],
        { waitForStop: async () => 'SIGTERM' },
      );
      expect(served).toMatchObject({
        code: 1,
        stderr: expect.stringContaining(`error: METRICS_PORT: 127.0.0.1:${metricsPort} is in use`),
      });
      const ports = listenedPorts(listen);
      expect(ports).not.toContain(port);
    } finally {
      listen.mockRestore();
      outgoing.destroy();
      await new Promise((resolve) => peer.close(resolve));
    }
  });

  it('stops with one line naming the variable to change when a port is taken or the host is not ours', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    const inUse = (variable: string, address: string) =>
      `error: ${variable}: ${address} is in use: stop what listens there, or choose a free port\n`;
    const quiet = { ...env, LOG_LEVEL: 'silent' };
    try {
      expect(await cli('migrate')).toMatchObject({ code: 0 });
      expect(await runCli({ ...quiet, PORT: String(port) }, ['serve'])).toEqual({
        code: 1,
        stdout: '',
        stderr: inUse('PORT', `127.0.0.1:${port}`),
      });
      // 192.0.2.1 is TEST-NET-1 (RFC 5737): never an address of this machine.
      expect(await runCli({ ...quiet, HOST: '192.0.2.1', PORT: String(port) }, ['serve'])).toEqual({
        code: 1,
        stdout: '',
        stderr: `error: HOST: 192.0.2.1:${port} is not an address of this machine\n`,
      });
      // .invalid never resolves (RFC 6761).
      expect(await runCli({ ...quiet, HOST: 'nowhere.invalid', PORT: String(port) }, ['serve'])).toEqual({
        code: 1,
        stdout: '',
        stderr: `error: HOST: nowhere.invalid:${port} names no address: give an IP address or a name this machine resolves\n`,
      });
      const store = {
        DEMO_STORE_PORT: String(port),
        SANDBOX_GATEWAY_URL: `http://127.0.0.1:${await freePort('127.0.0.1')}`,
      };
      expect(await runCli({ ...quiet, PORT: '0', ...store }, ['start'])).toEqual({
        code: 1,
        stdout: '',
        stderr: inUse('DEMO_STORE_PORT', `http://localhost:${port}`),
      });
      const gateway = {
        DEMO_STORE_PORT: String(await freePort('127.0.0.1')),
        SANDBOX_GATEWAY_URL: `http://127.0.0.1:${port}`,
      };
      expect(await runCli({ ...quiet, PORT: '0', ...gateway }, ['start'])).toEqual({
        code: 1,
        stdout: '',
        stderr: inUse('SANDBOX_GATEWAY_URL', `http://127.0.0.1:${port}`),
      });
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 30_000);

  it('names every taken port in one go, one line each, and starts nothing', async () => {
    const taken = await Promise.all(
      [0, 1, 2, 3].map(async () => {
        const server = net.createServer();
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        return server;
      }),
    );
    const [port, store, gateway, metrics] = taken.map((server) => (server.address() as net.AddressInfo).port);
    const inUse = (variable: string, address: string) =>
      `error: ${variable}: ${address} is in use: stop what listens there, or choose a free port\n`;
    const busy = {
      ...env,
      LOG_LEVEL: 'silent',
      PORT: String(port),
      METRICS_PORT: String(metrics),
      DEMO_STORE_PORT: String(store),
      SANDBOX_GATEWAY_URL: `http://127.0.0.1:${gateway}`,
    };
    const keysOfEveryMerchant = async (merchants: Merchants) =>
      Promise.all((await merchants.list()).map((merchant) => merchants.listApiKeys(merchant.id)));
    try {
      expect(await cli('migrate')).toMatchObject({ code: 0 });
      const before = await inspect(keysOfEveryMerchant);
      const started = await runCli(busy, ['start']);
      expect(started).toEqual({
        code: 1,
        stdout: '',
        stderr: [
          inUse('PORT', `127.0.0.1:${port}`),
          inUse('METRICS_PORT', `127.0.0.1:${metrics}`),
          inUse('DEMO_STORE_PORT', `http://localhost:${store}`),
          inUse('SANDBOX_GATEWAY_URL', `http://127.0.0.1:${gateway}`),
        ].join(''),
      });
      // Nothing started: no demo merchant was made or given a new key.
      expect(await inspect(keysOfEveryMerchant)).toEqual(before);
      // With --json, still one error: its message lists them all.
      const asJson = await runCli(busy, ['serve', '--json']);
      expect([asJson.code, asJson.stdout]).toEqual([1, '']);
      expect(JSON.parse(asJson.stderr.trimEnd().split('\n').at(-1) as string)).toEqual({
        error: {
          code: 'CONFIGURATION_ERROR',
          message: [
            `PORT: 127.0.0.1:${port} is in use: stop what listens there, or choose a free port`,
            `METRICS_PORT: 127.0.0.1:${metrics} is in use: stop what listens there, or choose a free port`,
          ].join('; '),
        },
      });
    } finally {
      await Promise.all(taken.map((server) => new Promise((resolve) => server.close(resolve))));
    }
  }, 30_000);

  it.each(['serve', 'start'])(
    'a %s whose port is taken starts nothing, so its log says nothing started or stopped',
    async (command) => {
      const taken = net.createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      const port = (taken.address() as net.AddressInfo).port;
      const [storePort, gatewayPort] = await freePorts(2);
      try {
        // The real process: its log goes to its own stdout, which an in-process run does not catch.
        const finished = await runNode([MAIN, command], {
          env: {
            ...process.env,
            ...env,
            PORT: String(port),
            DEMO_STORE_PORT: String(storePort),
            SANDBOX_GATEWAY_URL: `http://127.0.0.1:${gatewayPort}`,
            LOG_LEVEL: 'info',
          },
        });
        expect(finished.code).toBe(1);
        expect(finished.stderr).toContain(`error: PORT: 127.0.0.1:${port} is in use`);
        expect(finished.stdout).not.toMatch(/listening|is running|stopped/);
      } finally {
        await new Promise((resolve) => taken.close(resolve));
      }
    },
    30_000,
  );
});

/** The ports `net.Server.prototype.listen` was called with, in order, from its spy. */
function listenedPorts(listen: MockInstance<net.Server['listen']>): unknown[] {
  return listen.mock.calls.map(([first]) =>
    typeof first === 'object' && first !== null ? (first as net.ListenOptions).port : first,
  );
}

describe('wallet-checkout CLI without a database', () => {
  const cli = (...argv: string[]) => runCli({ DATABASE_URL: 'sqlite:/nonexistent/never-opened.db' }, argv);

  it('explains every command with --help', async () => {
    const overview = await cli('--help');
    expect(overview.code).toBe(0);
    for (const name of COMMAND_NAMES) expect(overview.stdout).toContain(name);
    for (const name of COMMAND_NAMES) {
      const help = await cli(...name.split(' '), '--help');
      expect(help.code, name).toBe(0);
      expect(help.stdout).toContain(`Usage: wallet-checkout ${name}`);
      expect(help.stdout).toContain('--json');
    }
    for (const name of COMMAND_NAMES) {
      const help = await cli(...name.split(' '), '--help');
      const positional = help.stdout.includes('<merchantId>');
      expect(help.stdout.includes('--merchant ID'), name).toBe(
        positional || ['order list', 'webhooks recover', 'webhooks listen', 'audit list'].includes(name),
      );
      if (positional) {
        expect(help.stdout).toContain(
          `Usage: wallet-checkout ${name} (<merchantId> | --merchant ID) [options]\n`,
        );
        expect(help.stdout).toMatch(/\n {2}--merchant ID +the merchant, in place of <merchantId>\n/);
      }
    }
    const create = await cli('merchant', 'create', '--help');
    for (const flag of [
      '--name',
      '--webhook-url',
      '--origin',
      '--approve-credentials',
      '--variant',
      '--authorization-mode',
    ]) {
      expect(create.stdout).toContain(flag);
    }
    expect(await cli('merchant', '--help')).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('merchant update'),
    });
    expect(await cli('merchant')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('merchant create'),
    });
    expect(await cli()).toMatchObject({ code: 2, stderr: expect.stringContaining('Usage: wallet-checkout') });
  });

  it.each([
    [
      ['merchant', 'create', '--name', 'X', '--bogus'],
      /^error: unknown option --bogus for "merchant create"/,
    ],
    [['merchant', 'create', '--name'], /^error: option --name needs a value/],
    [['merchant', 'create', '--json=yes', '--name', 'X'], /^error: option --json takes no value/],
    [['merchant', 'create'], /^error: "merchant create" needs --name/],
    [['merchant', 'create', '--name', 'X', '--name', 'Y'], /^error: option --name is given more than once/],
    [
      ['merchant', 'update', 'mch_1', '--variant', 'standard', '--variant=connected'],
      /^error: option --variant is given more than once/,
    ],
    [
      ['merchant', 'create', '--name', 'X', '--tax-rate', 'TX=825', '--tax-rate', 'TX=100'],
      /^error: --tax-rate TX is given more than once/,
    ],
    [
      ['webhook-secret', 'rotate', 'mch_1', '--overlap-hours', '-1'],
      /^error: --overlap-hours must be a number of hours from 0 to 720, got "-1"/,
    ],
    [['merchant', 'show'], /^error: "merchant show" needs <merchantId>/],
    [['merchant', 'show', 'a', 'b'], /^error: unexpected argument "b" for "merchant show"/],
    [['merchant', 'update', 'mch_1'], /^error: "merchant update" needs at least one setting/],
    [
      ['merchant', 'update', 'mch_1', '--clear-origins', '--origin', 'https://a.example'],
      /--clear-origins and --origin/,
    ],
    [['merchant', 'approve-credentials', 'mch_1'], /^error: "merchant approve-credentials" needs --types/],
    [
      ['merchant', 'update', 'mch_1', '--remember-devices', 'no'],
      /^error: --remember-devices must be one of on, off, got "no"/,
    ],
    [
      ['merchant', 'update', 'mch_1', '--variant', 'premium'],
      /^error: --variant must be one of standard, connected/,
    ],
    [
      ['merchant', 'create', '--name', 'A', '--approve-credentials', 'PAN,CVV'],
      /^error: --approve-credentials must list NETWORK_TOKEN, PAN or several of them, comma-separated, got "CVV"/,
    ],
    [
      ['merchant', 'approve-credentials', 'mch_1', '--types', 'CVV'],
      /^error: --types must list NETWORK_TOKEN, PAN or several/,
    ],
    [
      ['merchant', 'create', '--name', 'X', '--shipping-method', 'Ground'],
      /^error: --shipping-method must be NAME=CENTS/,
    ],
    [
      ['merchant', 'create', '--name', 'X', '--tax-rate', 'TX=8.25'],
      /^error: --tax-rate must be STATE=BASIS_POINTS/,
    ],
    [['merchant', 'frobnicate'], /^error: unknown command "merchant frobnicate"/],
    [['launch'], /^error: unknown command "launch"/],
  ])('refuses %j with exit 2 and one line', async (argv, message) => {
    const outcome = await cli(...argv);
    expect(outcome.code).toBe(2);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr.split('\n')).toEqual([expect.stringMatching(message), '']);
  });

  it('names a bad environment variable in one line', async () => {
    const port = await runCli({ PORT: 'abc' }, ['merchant', 'list']);
    expect(port).toEqual({ code: 1, stdout: '', stderr: 'error: PORT: must be a whole number, got "abc"\n' });
    const production = await runCli({ WALLET_ENV: 'production' }, ['migrate']);
    expect(production.code).toBe(1);
    expect(production.stderr).toBe('error: VAULT_KEYS: is required when WALLET_ENV=production\n');
  });

  it('with --json, reports usage and configuration errors as one JSON line on stderr', async () => {
    expect(await cli('merchant', 'create', '--json')).toEqual({
      code: 2,
      stdout: '',
      stderr: '{"error": {"code": "USAGE_ERROR", "message": "\\"merchant create\\" needs --name"}}\n',
    });
    expect(await runCli({ WALLET_ENV: 'production' }, ['migrate', '--json'])).toEqual({
      code: 1,
      stdout: '',
      stderr:
        '{"error": {"code": "CONFIGURATION_ERROR", "message": "VAULT_KEYS: is required when WALLET_ENV=production"}}\n',
    });
  });

  it('checks the key ring before it creates or migrates the database', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-cli-'));
    try {
      const env = { DATABASE_URL: `sqlite:${path.join(dir, 'w.db')}`, DATA_DIR: dir, VAULT_KEYS: 'bad' };
      const outcome = await runCli(env, ['migrate']);
      expect(outcome.code).toBe(1);
      expect(outcome.stderr).toMatch(/^error: VAULT_KEYS: must be comma-separated id:base64key entries/);
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports an unreachable database in one line', async () => {
    const outcome = await runCli({ DATABASE_URL: 'postgres://127.0.0.1:1/none', VAULT_KEYS: vaultKey('k') }, [
      'merchant',
      'list',
    ]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr.split('\n')).toEqual([expect.stringMatching(/^error: .*ECONNREFUSED/), '']);
  });

  it('makes no staging key ring when a start cannot reach its database', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-cli-'));
    try {
      const outcome = await runCli(
        { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x', DATA_DIR: path.join(dir, 'data'), PORT: '0' },
        ['serve'],
      );
      expect(outcome.code).toBe(1);
      expect(outcome.stderr.split('\n')).toEqual([
        expect.stringMatching(/^error: DATABASE_URL: cannot use PostgreSQL at 127\.0\.0\.1:1 .*ECONNREFUSED/),
        '',
      ]);
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Every command but these works on the service's data, and needs its database to be there. */
const MAKING_A_DATABASE = ['serve', 'start', 'migrate', 'merchant create'];
/** These need no database at all. */
const ALONE = ['smtp test'];

const NEVER_WRITTEN = path.join(os.tmpdir(), `never-written-${randomBytes(6).toString('hex')}.db`);

/** Each of the others, with arguments good enough to reach the database. */
const ON_THE_SERVICES_DATA: Record<string, string[]> = {
  'merchant list': [],
  'merchant show': ['mch_1'],
  'merchant update': ['mch_1', '--name', 'X'],
  'merchant approve-credentials': ['mch_1', '--types', 'PAN'],
  'apikey create': ['mch_1'],
  'apikey list': ['mch_1'],
  'apikey revoke': ['key_1'],
  'webhook-secret rotate': ['mch_1'],
  'vault rotate-key': [],
  'gateway set': ['mch_1', '--gateway', 'sandbox', '--url', 'http://127.0.0.1:4010'],
  'gateway show': ['mch_1'],
  'gateway remove': ['mch_1'],
  'order show': ['ord_1'],
  'order list': ['--merchant', 'mch_1'],
  'shopper show': ['taylor@example.com'],
  'shopper erase': ['taylor@example.com', '--yes'],
  'webhooks status': [],
  'webhooks recover': ['--since', '2026-01-01T00:00:00Z'],
  'webhooks listen': ['--merchant', 'mch_1'],
  backup: ['--to', NEVER_WRITTEN],
  'audit list': [],
  'audit verify': [],
};

const MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));

/** `wallet-checkout <argv>` in a process of its own, run from `folder` with the default settings. */
async function cliIn(folder: string, argv: string[]): Promise<Outcome> {
  const env = { ...process.env };
  for (const name of ['DATABASE_URL', 'DATA_DIR', 'VAULT_KEYS', 'WALLET_ENV']) delete env[name];
  const { code, stdout, stderr } = await runNode([MAIN, ...argv], { cwd: folder, env });
  return { code: code ?? -1, stdout, stderr };
}

describe('wallet-checkout CLI where the embedded database is not', () => {
  let folder: string;

  beforeEach(() => {
    // Its real path, as the command in it sees its working folder (the temporary folder may be a link).
    folder = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-cli-empty-')));
  });
  afterEach(() => fs.rmSync(folder, { recursive: true, force: true }));

  it("classes every command: one on the service's data, one that may make its database, or one alone", async () => {
    const overview = (await runCli({}, ['--help'])).stdout;
    const names = [...overview.matchAll(/^ {2}(\S+(?: [a-z-]+)?) {2,}/gm)].map((match) => match[1]);
    expect(names).toContain('merchant approve-credentials');
    expect([...MAKING_A_DATABASE, ...ALONE, ...Object.keys(ON_THE_SERVICES_DATA)].sort()).toEqual(
      names.sort(),
    );
  });

  it("refuses every command on the service's data in one line naming the file, and makes nothing", async () => {
    const file = path.join(folder, 'data', 'wallet.db');
    const env = { DATABASE_URL: `sqlite:${file}` };
    const message = `no database at ${file} (DATABASE_URL sqlite:${file}): check DATABASE_URL; for a new installation, \`wallet-checkout migrate\` makes one there`;
    for (const [name, args] of Object.entries(ON_THE_SERVICES_DATA)) {
      expect(await runCli(env, [...name.split(' '), ...args]), name).toEqual({
        code: 1,
        stdout: '',
        stderr: `error: ${message}\n`,
      });
    }
    const asJson = await runCli(env, ['audit', 'list', '--json']);
    expect(asJson).toMatchObject({ code: 1, stdout: '' });
    expect(JSON.parse(asJson.stderr)).toEqual({ error: { code: 'DATABASE_NOT_FOUND', message } });
    expect(fs.readdirSync(folder)).toEqual([]);
    expect(fs.existsSync(NEVER_WRITTEN)).toBe(false);
  });

  it('run from a folder without the default database, a read says where it looked and makes nothing', async () => {
    const outcome = await cliIn(folder, ['merchant', 'list']);
    expect(outcome).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: no database at ${folder}/data/wallet.db (DATABASE_URL sqlite:./data/wallet.db, the default): run the command from the folder the service runs in, or set DATABASE_URL; for a new installation, \`wallet-checkout migrate\` makes one there\n`,
    });
    expect(fs.readdirSync(folder)).toEqual([]);
  }, 30_000);

  it('takes away the database, data folder and key ring a refused merchant create made, saying nothing of them', async () => {
    const deep = await runCli({ DATABASE_URL: `sqlite:${folder}/x/y/w.db`, DATA_DIR: `${folder}/d/e` }, [
      'merchant',
      'create',
      '--name',
      'A',
      '--webhook-url',
      'ftp://x',
    ]);
    expect(deep.code).toBe(1);
    expect(fs.readdirSync(folder)).toEqual([]);
    const refused = await cliIn(folder, ['merchant', 'create', '--name', 'A', '--webhook-url', 'ftp://x']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).not.toContain('note:');
    expect(refused.stderr).toMatch(
      /\nerror: --webhook-url must be an absolute http\(s\) URL, got "ftp:\/\/x"\n$/,
    );
    expect(fs.readdirSync(folder)).toEqual([]);
    // A database that was there already stays, with what it held.
    expect((await cliIn(folder, ['migrate'])).code).toBe(0);
    const before = fs.readdirSync(path.join(folder, 'data')).sort();
    expect(
      (await cliIn(folder, ['merchant', 'create', '--name', 'A', '--webhook-url', 'ftp://x'])).code,
    ).toBe(1);
    expect(fs.readdirSync(path.join(folder, 'data')).sort()).toEqual(before);
  }, 30_000);

  it('names a DATABASE_URL that is a folder, before making anything', async () => {
    fs.mkdirSync(path.join(folder, 'db'));
    const outcome = await runCli({ DATABASE_URL: `sqlite:${folder}/db`, DATA_DIR: `${folder}/keys` }, [
      'merchant',
      'list',
    ]);
    expect(outcome).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: DATABASE_URL: must name a file, got the folder ${folder}/db\n`,
    });
    expect(fs.readdirSync(folder)).toEqual(['db']);
  });

  it('refuses an in-memory database but to a service, making nothing', async () => {
    const outcome = await runCli({ DATABASE_URL: 'sqlite::memory:', DATA_DIR: `${folder}/keys` }, [
      'merchant',
      'create',
      '--name',
      'Gone',
    ]);
    expect(outcome).toEqual({
      code: 1,
      stdout: '',
      stderr:
        "error: DATABASE_URL: sqlite::memory: is a database of one process, gone when it ends: only a service started with it has one; name the service's file or PostgreSQL database\n",
    });
    expect(fs.readdirSync(folder)).toEqual([]);
  });

  it('names a DATABASE_URL written as a folder that is not there yet, making nothing', async () => {
    const outcome = await runCli({ DATABASE_URL: `sqlite:${folder}/new/`, DATA_DIR: `${folder}/keys` }, [
      'migrate',
    ]);
    expect(outcome).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: DATABASE_URL: must name a file, got the folder ${folder}/new/\n`,
    });
    expect(fs.readdirSync(folder)).toEqual([]);
  });

  it('names a SQLite file that cannot be made, and takes away the key ring it made for it', async () => {
    const outcome = await runCli({ DATABASE_URL: 'sqlite:/proc/wallet.db', DATA_DIR: `${folder}/keys` }, [
      'migrate',
    ]);
    expect([outcome.code, outcome.stdout]).toEqual([1, '']);
    expect(outcome.stderr).toContain(
      "error: DATABASE_URL: cannot use the SQLite file /proc/wallet.db: no such file or directory, open '/proc/wallet.db'\n",
    );
    expect(fs.readdirSync(folder)).toEqual([]);
  });

  it('on a fresh machine, merchant create makes the database and says so on stderr, once, naming it each time; stdout is the JSON', async () => {
    const first = await cliIn(folder, ['merchant', 'create', '--name', 'First', '--json']);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /^\{"merchantId": "mch_\w{22}", "apiKey": "sk_test_\w{32}", "webhookSecret": "whsec_[A-Za-z0-9+/]{32}"\}\n$/,
    );
    // Which database, and that it is the default one: the sign of a shell without the service's settings.
    const named = `database: the SQLite file ${folder}/data/wallet.db (the default: DATABASE_URL is not set)`;
    expect(first.stderr.split('\n')).toEqual([
      expect.stringMatching(/^warning: VAULT_KEYS is not set: generated a staging key ring/),
      named,
      `note: created a new database at ${folder}/data/wallet.db`,
      '',
    ]);
    const second = await cliIn(folder, ['merchant', 'create', '--name', 'Second', '--json']);
    expect(second).toMatchObject({ code: 0, stderr: `${named}\n` });
    const listed = await cliIn(folder, ['merchant', 'list', '--json']);
    expect(listed.stderr).toBe(`${named}\n`);
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((merchant) => merchant.id)).toEqual(
      [first, second].map((outcome) => (JSON.parse(outcome.stdout) as { merchantId: string }).merchantId),
    );
  }, 30_000);
});
