import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from './config.js';
import { FAILURE_LOG_INTERVAL_MS } from './failure-log.js';
import { createLogger } from './log.js';
import { checkpointFailureLogger, startService } from './server.js';
import { runCli } from './test-support/cli.js';
import { engines, type TestDatabase, testDatabase } from './test-support/db.js';
import { startTestService } from './test-support/service.js';

const vaultKey = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

describe.each(engines())('a start whose key ring lacks a key stored values need, on %s', (engine) => {
  const oldKey = vaultKey('old');
  const freshKey = vaultKey('fresh');
  const problem =
    'lacks keys that stored values are sealed under: old (in webhook_secrets.secret_ciphertext); put them back after the primary key, run npx wallet-checkout vault rotate-key, and remove them only once it has finished';
  let database: TestDatabase;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await testDatabase(engine);
    env = { DATABASE_URL: database.url, DATA_DIR: database.dataDir };
    // A merchant's webhook secret sealed under `old`, which the rings below leave out.
    const created = await runCli({ ...env, VAULT_KEYS: oldKey }, ['merchant', 'create', '--name', 'Shop']);
    expect(created.code, created.stderr).toBe(0);
  });
  afterAll(() => database.drop());

  async function keyRingWarnings(vaultKeys: string): Promise<string[]> {
    const service = await startTestService(engine, { VAULT_KEYS: vaultKeys }, { database });
    await service.close();
    return service.logs
      .map((line) => JSON.parse(line).msg as string)
      .filter((message) => message.startsWith('the vault key ring'));
  }

  it('warns in staging, naming the key and a column that needs it', async () => {
    expect(await keyRingWarnings(freshKey)).toEqual([`the vault key ring (VAULT_KEYS) ${problem}`]);
  });

  it('says nothing once the ring holds the key again', async () => {
    expect(await keyRingWarnings(`${freshKey},${oldKey}`)).toEqual([]);
  });

  it('refuses to start in production, where every read of those values would fail', async () => {
    const config = loadConfig({
      ...env,
      WALLET_ENV: 'production',
      PUBLIC_URL: 'https://pay.example',
      VAULT_KEYS: freshKey,
      PORT: '0',
    });
    await expect(startService(config, createLogger('silent'))).rejects.toThrow(`VAULT_KEYS: ${problem}`);
  });

  // Another machine's VAULT_KEYS made anew with the same id: every value sealed under `old` would fail to
  // open, and values this process sealed would be under a second `old` that no other process opens.
  const otherOld =
    'key old does not open the values sealed under old (in webhook_secrets.secret_ciphertext): it is another key with the same id; set old to the key they were sealed with';

  it('warns in staging when a key of the ring is not the one values under its id were sealed with', async () => {
    expect(await keyRingWarnings(`${freshKey},${vaultKey('old')}`)).toEqual([
      `the vault key ring (VAULT_KEYS) ${otherOld}`,
    ]);
  });

  it('refuses to start in production with another key under the id values were sealed with', async () => {
    const config = loadConfig({
      ...env,
      WALLET_ENV: 'production',
      PUBLIC_URL: 'https://pay.example',
      VAULT_KEYS: `${freshKey},${vaultKey('old')}`,
      PORT: '0',
    });
    await expect(startService(config, createLogger('silent'))).rejects.toThrow(`VAULT_KEYS: ${otherOld}`);
  });
});

describe('a staging start without VAULT_KEYS', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await testDatabase('sqlite');
  });
  afterAll(() => database.drop());

  async function keyRingWarnings(): Promise<string[]> {
    const service = await startTestService('sqlite', {}, { database });
    await service.close();
    return service.logs
      .map((line) => JSON.parse(line))
      .filter((line) => line.level === 40 && line.msg.startsWith('VAULT_KEYS is not set'))
      .map((line) => line.msg);
  }

  it('logs that it generated the staging key ring, and at every later start that it uses it', async () => {
    const file = `${database.dataDir}/vault-keys`;
    expect(await keyRingWarnings()).toEqual([
      `VAULT_KEYS is not set: generated a staging key ring in ${file}. Never do this in production.`,
    ]);
    expect(await keyRingWarnings()).toEqual([
      `VAULT_KEYS is not set: using the staging key ring in ${file}. Never do this in production.`,
    ]);
  });
});

describe('the WAL checkpoint failing on every try (a full disk), on fake timers', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is logged once in full, then counted every 10 s, not once per try', () => {
    const lines: Array<{ details: Record<string, unknown>; message: string }> = [];
    const failures = checkpointFailureLogger({
      error: (details: object, message: string) =>
        lines.push({ details: details as Record<string, unknown>, message }),
    });
    const failed = () => failures.failed(new Error('WAL checkpoint failed: disk I/O error'));
    // 100 tries: what 10 s of checkpoints every 100 ms make.
    for (let i = 0; i < 100; i++) failed();
    expect(lines.map((line) => line.message)).toEqual(['the WAL checkpoint failed; it is retried']);
    expect(lines[0]?.details.err).toBeInstanceOf(Error);
    vi.advanceTimersByTime(FAILURE_LOG_INTERVAL_MS);
    expect(lines.at(-1)).toEqual({
      details: { failure: 'WAL checkpoint failed: disk I/O error', repeated: 99 },
      message: 'the WAL checkpoint failed; it is retried: more of the same',
    });
    // A stop logs the count still open, rather than dropping it.
    for (let i = 0; i < 4; i++) failed();
    failures.flush();
    expect(lines.at(-1)?.details).toEqual({ failure: 'WAL checkpoint failed: disk I/O error', repeated: 3 });
  });
});
