import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentCredentialsPayload } from '../payments/types.js';
import { json, runCli } from '../test-support/cli.js';
import { engines, type TestDatabase, testDatabase } from '../test-support/db.js';
import {
  type ReceivedWebhook,
  type Receiver,
  startReceiver,
  verifiedBody,
} from '../test-support/receiver.js';
import { startTestService, type TestService } from '../test-support/service.js';
import { until } from '../test-support/wait.js';
import { STAGING_KEYS_FILE } from '../vault/keyring.js';
import { createDb } from './index.js';
import { migrateUpTo } from './migrate.js';

/** What an older release wrote, row by row, with what its API answered then (see the file's `comment`). */
interface Release {
  lastMigration: string;
  /** When the rows were written (ms since the epoch): their times move to now, keeping their distances. */
  capturedAt: number;
  vaultKeys: string;
  merchantId: string;
  apiKeys: string[];
  /** The first secret, then the one its rotation made; both sign for 24 hours after the rotation. */
  webhookSecrets: string[];
  requests: {
    requestId: string;
    messageId: string;
    last4: string;
    body: Record<string, unknown>;
    idempotencyKey: string | null;
    answer: string;
    delivered: boolean;
  }[];
  externalResponse: { body: Record<string, unknown>; idempotencyKey: string; answer: string };
  /** In an order that satisfies the foreign keys. */
  tables: Record<string, Record<string, unknown>[]>;
}

const release = JSON.parse(
  fs.readFileSync(path.join(import.meta.dirname, 'fixtures', 'release-e81c4f8.json'), 'utf8'),
) as Release;

/** The sandbox test shopper's card numbers, by last four (see sandbox/seed.ts). */
const PANS: Record<string, string> = {
  '1111': '4111111111111111',
  '4444': '5555555555554444',
  '0002': '4000000000000002',
  '0069': '4000000000000069',
};

function luhnValid(digits: string): boolean {
  let sum = 0;
  for (const [i, char] of [...digits].reverse().entries()) {
    const digit = Number(char) * (i % 2 === 1 ? 2 : 1);
    sum += digit > 9 ? digit - 9 : digit;
  }
  return /^\d{12,19}$/.test(digits) && sum % 10 === 0;
}

/** Writes the release's rows into `database`, migrated only as far as that release did. */
async function writeRelease(database: TestDatabase, webhookUrl: string): Promise<void> {
  const db = createDb(database.url);
  try {
    await migrateUpTo(db, release.lastMigration);
    const shift = Date.now() - release.capturedAt;
    for (const [table, rows] of Object.entries(release.tables)) {
      for (const row of rows) {
        const columns = Object.keys(row);
        const values = columns.map((column) => {
          const value = row[column];
          return /(^|_)at$/.test(column) && typeof value === 'number' ? value + shift : value;
        });
        await sql`insert into ${sql.table(table)} (${sql.join(columns.map((column) => sql.ref(column)))})
          values (${sql.join(values)})`.execute(db.kysely);
      }
    }
    // The receiver's port is this run's.
    await sql`update merchants set webhook_url = ${webhookUrl}`.execute(db.kysely);
  } finally {
    await db.close();
  }
  fs.writeFileSync(path.join(database.dataDir, STAGING_KEYS_FILE), `${release.vaultKeys}\n`, { mode: 0o600 });
}

describe.each(engines())(
  'upgrading a database the release of e81c4f8 (migration 010) left, on %s',
  (engine) => {
    let database: TestDatabase;
    let receiver: Receiver;
    let service: TestService;
    const pending = release.requests.filter((request) => !request.delivered);
    const [firstKey, secondKey] = release.apiKeys as [string, string];

    beforeAll(async () => {
      database = await testDatabase(engine);
      receiver = await startReceiver();
      await writeRelease(database, receiver.url);
      // The release's messages have had three attempts, as many as the test service's usual schedule
      // allows: a longer one, and the default time-out, so that a loaded machine's slow first attempt is
      // retried rather than ending the message.
      const env = { CREDENTIALS_RETRY_DELAYS_MS: Array(10).fill(50).join(','), WEBHOOK_TIMEOUT_MS: '15000' };
      service = await startTestService(engine, env, { database });
    });
    afterAll(async () => {
      await service?.close();
      await receiver?.close();
      await database?.drop();
    });

    const lookUp = async (requestId: string, apiKey = firstKey) =>
      (await service.call('GET', `/payments/credentials/${requestId}`, { apiKey })).json;

    /** The webhook's body, once it verifies under every secret the merchant had. */
    const opened = (webhook: ReceivedWebhook) => {
      const [body, ...others] = release.webhookSecrets.map((secret) =>
        verifiedBody<PaymentCredentialsPayload>(secret, webhook),
      );
      for (const other of others) expect(other).toEqual(body);
      return body as PaymentCredentialsPayload;
    };

    const expectCardData = (payload: PaymentCredentialsPayload, request: Release['requests'][number]) => {
      expect(payload).toMatchObject({
        eventName: 'PAYMENT_CREDENTIALS',
        merchantId: release.merchantId,
        paymentId: request.body.paymentId,
        merchantReference: request.body.merchantReference,
      });
      const [token, pan] = payload.credentials;
      if (token?.type !== 'NETWORK_TOKEN')
        throw new Error(`the first credential is ${token?.type}, not a network token`);
      expect(luhnValid(token.token)).toBe(true);
      expect(token.token).not.toBe(PANS[request.last4]);
      expect(token.cvv.length).toBeGreaterThan(0);
      expect(pan).toMatchObject({ type: 'PAN', pan: PANS[request.last4] });
    };

    it('delivers every webhook the release left pending, once, under its webhook-id, signed and whole', async () => {
      await receiver.nth(pending.length);
      for (const request of pending) {
        const view = await until(async () => {
          const found = await lookUp(request.requestId);
          return found.state !== 'ACKNOWLEDGED' && found;
        });
        expect(view).toMatchObject({ state: 'DELIVERED', webhook: { messageId: request.messageId } });
        // The release's failed attempts stay in the history, before the one that delivered.
        const attempts = view.webhook.attempts as { statusCode: number | null }[];
        expect(attempts.length).toBeGreaterThan(1);
        expect(attempts.at(-1)?.statusCode).toBe(200);
        expect(attempts.slice(0, -1).every((attempt) => attempt.statusCode === null)).toBe(true);
      }
      const ids = receiver.received.map((webhook) => webhook.headers['webhook-id']);
      expect([...ids].sort()).toEqual(pending.map((request) => request.messageId).sort());
      for (const request of pending) {
        const webhook = receiver.received.find((one) => one.headers['webhook-id'] === request.messageId);
        expectCardData(opened(webhook as ReceivedWebhook), request);
      }
    });

    it("answers look-ups of the release's requests, with the external response it took, to both API keys", async () => {
      const [delivered] = release.requests.filter((request) => request.delivered);
      const view = await lookUp(delivered?.requestId as string, secondKey);
      expect(view).toMatchObject({ state: 'DELIVERED', webhook: { messageId: delivered?.messageId } });
      expect(view.externalResponses).toHaveLength(1);
      expect(view.externalResponses[0]).toMatchObject({ pspHostName: 'my-psp', amount: 2599 });
      const reference = delivered?.body.merchantReference as string;
      const byReference = await service.call('GET', `/payments/credentials?merchantReference=${reference}`, {
        apiKey: firstKey,
      });
      expect(byReference.status).toBe(200);
      expect(byReference.json.data.map((one: { requestId: string }) => one.requestId).sort()).toEqual(
        release.requests
          .filter((request) => request.body.merchantReference === reference)
          .map((request) => request.requestId)
          .sort(),
      );
      const listed = await service.call('GET', '/payments/credentials?state=DELIVERED&limit=100', {
        apiKey: secondKey,
      });
      expect(listed.json.data).toHaveLength(release.requests.length);
    });

    it("replays the release's Idempotency-Keys with its answers, and refuses them for another body", async () => {
      const keyed = release.requests.filter((request) => request.idempotencyKey !== null);
      expect(keyed.length).toBeGreaterThan(0);
      for (const request of keyed) {
        const headers = { 'idempotency-key': request.idempotencyKey as string };
        const again = await service.call('POST', '/payments/credentials', {
          apiKey: firstKey,
          body: request.body,
          headers,
        });
        expect([again.status, again.text, again.headers['idempotent-replayed']]).toEqual([
          200,
          request.answer,
          'true',
        ]);
        const other = await service.call('POST', '/payments/credentials', {
          apiKey: firstKey,
          body: { ...request.body, amount: (request.body.amount as number) + 1 },
          headers,
        });
        expect(other.json.errorCode).toBe('IDEMPOTENCY_KEY_REUSED');
      }
      const { externalResponse } = release;
      const reported = await service.call('POST', '/payments/externalresponse', {
        apiKey: secondKey,
        body: externalResponse.body,
        headers: { 'idempotency-key': externalResponse.idempotencyKey },
      });
      expect([reported.status, reported.text]).toEqual([200, externalResponse.answer]);
      const [delivered] = release.requests.filter((request) => request.delivered);
      expect((await lookUp(delivered?.requestId as string)).externalResponses).toHaveLength(1);
    });

    it("rotates the vault key over the release's data, and sends its webhooks again from it", async () => {
      const env = { DATABASE_URL: database.url, DATA_DIR: database.dataDir };
      const rotation = json(await runCli(env, ['vault', 'rotate-key', '--json'])) as { reencrypted: number };
      // Five card numbers, four network tokens, two webhook secrets, one processor answer.
      expect(rotation.reencrypted).toBe(12);
      const [request] = pending as [Release['requests'][number]];
      const received = receiver.received.length;
      const resent = await service.call('POST', `/webhooks/messages/${request.messageId}/resend`, {
        apiKey: secondKey,
      });
      expect(resent.status).toBe(200);
      const webhook = await receiver.nth(received + 1);
      expect(webhook.headers['webhook-id']).toBe(request.messageId);
      expectCardData(opened(webhook), request);
      const verified = await runCli(env, ['audit', 'verify']);
      expect(verified.code).toBe(0);
    });
  },
);
