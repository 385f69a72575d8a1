/**
 * PostgreSQL over TLS, as operations.md tells an operator to ask for it: `sslmode=verify-full`, with the
 * authority that signed the server's certificate in `sslrootcert`. The suite's own server takes no TLS, so
 * this file starts a cluster of its own with the test authority's certificate for `localhost`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../packages/server/src/db/index.js';
import { connectionPath } from '../packages/server/src/db/transport.js';
import { runCli } from '../packages/server/src/test-support/cli.js';
import { startReceiver, verifiedBody } from '../packages/server/src/test-support/receiver.js';
import { credentialsBody, startTestService } from '../packages/server/src/test-support/service.js';
import { LOCALHOST_TLS, TEST_CA_FILE } from '../packages/server/src/test-support/tls.js';
import { type Cluster, findBinDir, startCluster } from './support/postgres.js';

const SELF_SIGNED_FILE = path.join(path.dirname(TEST_CA_FILE), 'self-signed.pem');

describe.runIf(findBinDir() !== undefined || process.env.CI === 'true')('PostgreSQL over TLS', () => {
  let cluster: Cluster;
  let port: string;
  let folder: string;

  /** The cluster's URL through `host`, with `settings` as its query. */
  const url = (host: string, settings: Record<string, string>) =>
    `postgres://postgres@${host}:${port}/postgres?${new URLSearchParams(settings)}`;
  const verified = () => url('localhost', { sslmode: 'verify-full', sslrootcert: TEST_CA_FILE });

  beforeAll(async () => {
    const started = await startCluster({ tls: LOCALHOST_TLS });
    if (!started) throw new Error('PostgreSQL is needed here: install it (apt-get install postgresql).');
    cluster = started;
    port = new URL(cluster.url).port;
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-pg-tls-'));
  });
  afterAll(async () => {
    await cluster?.stop();
    if (folder) fs.rmSync(folder, { recursive: true, force: true });
  });

  it('serves over a verified connection: acknowledgements, and webhooks built by the delivery threads', async () => {
    const db = createDb(verified());
    try {
      expect(await connectionPath(db)).toEqual({ ssl: true, clientAddress: '127.0.0.1' });
    } finally {
      await db.close();
    }
    const receiver = await startReceiver();
    const service = await startTestService(
      'postgres',
      { WEBHOOK_WORKER: '1' },
      { database: { url: verified(), dataDir: folder, drop: async () => undefined } },
    );
    try {
      const shop = await service.merchant({ webhookUrl: receiver.url });
      const session = await service.session(shop.apiKey);
      const ack = await service.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body: credentialsBody(session, { merchantReference: 'over-tls' }),
      });
      expect(ack.status).toBe(200);
      const body = verifiedBody<{ merchantReference: string }>(shop.webhookSecret, await receiver.next());
      expect(body.merchantReference).toBe('over-tls');
    } finally {
      await service.close();
      await receiver.close();
    }
  });

  /** `migrate --json` on `databaseUrl`: how it failed. */
  const migrateError = async (databaseUrl: string) => {
    const outcome = await runCli({ DATABASE_URL: databaseUrl, DATA_DIR: folder }, ['migrate', '--json']);
    expect(outcome.code).toBe(1);
    return JSON.parse(outcome.stderr.trimEnd().split('\n').at(-1) as string).error as {
      code: string;
      message: string;
    };
  };

  it('stops a start whose authority did not sign the server certificate, saying why', async () => {
    const error = await migrateError(
      url('localhost', { sslmode: 'verify-full', sslrootcert: SELF_SIGNED_FILE }),
    );
    expect(error).toEqual({
      code: 'DATABASE_UNAVAILABLE',
      message: expect.stringMatching(
        new RegExp(
          `^DATABASE_URL: cannot use PostgreSQL at localhost:${port} .*: unable to verify the first certificate$`,
        ),
      ),
    });
  });

  it('stops a start whose server certificate names another host, saying why', async () => {
    const error = await migrateError(url('127.0.0.1', { sslmode: 'verify-full', sslrootcert: TEST_CA_FILE }));
    expect(error.code).toBe('DATABASE_UNAVAILABLE');
    expect(error.message).toMatch(/does not match certificate's altnames/);
  });
});
