import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runNode } from '../test-support/child.js';
import { json, runCli } from '../test-support/cli.js';
import { type TestDatabase, testDatabase } from '../test-support/db.js';
import { startSmtpServer, type TestSmtpServer } from '../test-support/smtp.js';
import { LOCALHOST_TLS, TEST_CA_FILE } from '../test-support/tls.js';

const MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));

const PASSWORD = 'Sm7p-pa55word';

describe('wallet-checkout smtp test', () => {
  let database: TestDatabase;
  let smtp: TestSmtpServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await testDatabase('sqlite');
    smtp = await startSmtpServer({ user: 'wallet', password: PASSWORD });
    env = {
      DATABASE_URL: database.url,
      DATA_DIR: database.dataDir,
      SMTP_URL: smtp.url,
      SMTP_FROM: 'Wallet Checkout <codes@pay.example>',
    };
  });
  afterAll(async () => {
    await smtp.close();
    await database.drop();
  });

  const server = () => smtp.url.replace(/\/\/[^@]*@/, '//');
  /** `smtp test --to ops@shop.example`, with `changes` over the settings and any more `flags`. */
  const smtpTest = (changes: Record<string, string | undefined>, ...flags: string[]) =>
    runCli({ ...env, ...changes }, ['smtp', 'test', '--to', 'ops@shop.example', ...flags]);

  it('sends one message through SMTP_URL, signed in, from SMTP_FROM, and opens no database', async () => {
    const sent = json(await smtpTest({}, '--json'));
    expect(sent).toMatchObject({ server: server(), to: 'ops@shop.example' });
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0]).toMatchObject({
      from: 'codes@pay.example',
      to: ['ops@shop.example'],
      user: 'wallet',
    });
    expect(smtp.received[0]?.raw).toMatch(/^Subject: Wallet Checkout: test message\r?$/m);

    const text = await smtpTest({});
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(`^Sent a test message to ops@shop\\.example through ${server()} \\(\\d+ ms\\)\\.\\n$`),
    );
    expect(text.stdout).not.toContain(PASSWORD);
    // Before the service ever started: nothing was made in its data folder.
    expect(fs.readdirSync(database.dataDir)).toEqual([]);
  });

  it('in production, neither signs in nor sends to a server that offers no STARTTLS, and asks for no keys', async () => {
    const before = { signIns: smtp.signIns.length, received: smtp.received.length };
    const production = await smtpTest({ WALLET_ENV: 'production', PUBLIC_URL: 'http://localhost:4000' });
    expect(production.code).toBe(1);
    expect(production.stderr).toMatch(new RegExp(`^error: ${server()} did not take the message: .*STARTTLS`));
    expect(production.stderr).not.toMatch(/VAULT_KEYS|PUBLIC_URL/);
    expect(smtp.signIns).toHaveLength(before.signIns);
    expect(smtp.received).toHaveLength(before.received);
  });

  it('in production, sends over STARTTLS to a server whose certificate the process trusts', async () => {
    const secured = await startSmtpServer({ user: 'wallet', password: PASSWORD, tls: LOCALHOST_TLS });
    try {
      const sent = await runNode([MAIN, 'smtp', 'test', '--to', 'ops@shop.example', '--json'], {
        env: {
          ...process.env,
          ...env,
          SMTP_URL: secured.url,
          WALLET_ENV: 'production',
          NODE_EXTRA_CA_CERTS: TEST_CA_FILE,
        },
      });
      expect(sent.code, sent.stderr).toBe(0);
      expect(secured.received).toEqual([expect.objectContaining({ user: 'wallet', secure: true })]);
    } finally {
      await secured.close();
    }
  });

  it('fails with the server answer, never the password, when the sign-in is refused', async () => {
    const refused = await smtpTest({ SMTP_URL: smtp.url.replace(PASSWORD, 'not-it') });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      new RegExp(
        `^error: ${server()} did not take the message: Invalid login: 535 Invalid username or password`,
      ),
    );
    expect(refused.stderr).not.toContain('not-it');
  });

  it('fails when the server cannot be reached', async () => {
    const down = await startSmtpServer();
    const url = down.url;
    await down.close();
    const unreachable = await smtpTest({ SMTP_URL: url }, '--json');
    expect(unreachable.code).toBe(1);
    expect(unreachable.stdout).toBe('');
    expect(JSON.parse(unreachable.stderr.trimEnd().split('\n').at(-1) as string)).toMatchObject({
      error: { code: 'MESSAGE_NOT_SENT', message: expect.stringContaining('ECONNREFUSED') },
    });
  });

  it('says what is missing without SMTP_URL, and refuses a --to that is not an address', async () => {
    const unset = await smtpTest({ SMTP_URL: undefined, SMTP_FROM: undefined });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain('error: SMTP_URL: is not set: set SMTP_URL and SMTP_FROM to send e-mail');
    const bad = await runCli(env, ['smtp', 'test', '--to', 'ops']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--to: must be an e-mail address, got "ops"');
  });
});
