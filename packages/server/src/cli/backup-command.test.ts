import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Finished, runNode } from '../test-support/child.js';
import { runCli } from '../test-support/cli.js';
import { engines, type TestDatabase, testDatabase } from '../test-support/db.js';
import { type Receiver, startReceiver } from '../test-support/receiver.js';
import { credentialsBody, startTestService, type TestService } from '../test-support/service.js';

const MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));

/** `wallet-checkout backup` in a process of its own, as an operator runs it beside the service. */
function backupProcess(env: Record<string, string>, file: string): Promise<Finished> {
  return runNode([MAIN, 'backup', '--to', file, '--json'], { env: { ...process.env, ...env } });
}

describe.each(engines())('wallet-checkout backup on %s', (engine) => {
  let database: TestDatabase;
  let service: TestService;
  let receiver: Receiver;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await testDatabase(engine);
    receiver = await startReceiver();
    service = await startTestService(engine, {}, { database });
    env = { DATABASE_URL: database.url, DATA_DIR: database.dataDir };
  });
  afterAll(async () => {
    await service.close();
    await receiver.close();
    await database.drop();
  });

  if (engine === 'sqlite') {
    it('copies a database the service keeps writing to, as one consistent snapshot that a service restores', async () => {
      const shop = await service.merchant({ webhookUrl: receiver.url });
      const session = await service.session(shop.apiKey);
      const ask = (reference: string) =>
        service.call('POST', '/payments/credentials', {
          apiKey: shop.apiKey,
          body: credentialsBody(session, { merchantReference: reference }),
        });
      const before = await ask('before-backup');
      expect(before.status).toBe(200);

      // Acknowledgements go on, 5 at a time, for as long as the backup runs in its own process.
      const file = path.join(database.dataDir, 'copy.db');
      let acknowledged = 1;
      let running = true;
      const load = (async () => {
        for (let round = 0; running; round++) {
          const answers = await Promise.all([0, 1, 2, 3, 4].map((i) => ask(`during-${round}-${i}`)));
          for (const answer of answers) expect(answer.status).toBe(200);
          acknowledged += answers.length;
        }
      })();
      const copied = await backupProcess(env, file);
      running = false;
      await load;
      expect(copied.code, copied.stderr).toBe(0);
      const printed = JSON.parse(copied.stdout.trim().split('\n').at(-1) as string);
      expect(printed).toEqual({ file, bytes: fs.statSync(file).size, seconds: expect.any(Number) });

      // Every request in the copy came with its outbox message: no transaction is in it by half.
      const copy = new Database(file, { readonly: true });
      const requests = copy.prepare('select webhook_message_id from credentials_requests').all() as {
        webhook_message_id: string;
      }[];
      const messages = new Set(
        (copy.prepare('select id from webhook_messages').all() as { id: string }[]).map((row) => row.id),
      );
      copy.close();
      expect(requests.length).toBeGreaterThanOrEqual(1);
      expect(requests.length).toBeLessThanOrEqual(acknowledged);
      for (const request of requests) expect(messages.has(request.webhook_message_id)).toBe(true);

      // Restored: a service on the copy, with the same keys, answers for the request made before it.
      const restored = await startTestService(
        engine,
        {},
        {
          database: { ...database, url: `sqlite:${file}`, drop: async () => undefined },
        },
      );
      try {
        const lookup = await restored.call('GET', `/payments/credentials/${before.json.requestId}`, {
          apiKey: shop.apiKey,
        });
        expect(lookup.status).toBe(200);
        expect(lookup.json.merchantReference).toBe('before-backup');
      } finally {
        await restored.close();
      }
    }, 60_000);

    it('writes a copy only its owner can read, under a umask that lets others read new files', async () => {
      const file = path.join(database.dataDir, 'private.db');
      const umask = process.umask(0o022);
      try {
        const copied = await backupProcess(env, file);
        expect(copied.code, copied.stderr).toBe(0);
      } finally {
        process.umask(umask);
      }
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    });

    it('leaves no file when the audit trail cannot record the copy, so the same --to works next time', async () => {
      const file = path.join(database.dataDir, 'unrecorded.db');
      const live = new Database(database.url.slice('sqlite:'.length));
      live.exec(
        "create trigger refuse_backup_audit before insert on audit_events when new.action = 'database.backed_up' begin select raise(abort, 'audit trail refused'); end",
      );
      try {
        const refused = await backupProcess(env, file);
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain('audit trail refused');
        expect(fs.existsSync(file)).toBe(false);
      } finally {
        live.exec('drop trigger refuse_backup_audit');
        live.close();
      }
      const copied = await backupProcess(env, file);
      expect(copied.code, copied.stderr).toBe(0);
      expect(fs.existsSync(file)).toBe(true);
    });

    it('refuses a file that exists, a folder that does not, and a missing --to', async () => {
      const existing = path.join(database.dataDir, 'existing.db');
      fs.writeFileSync(existing, 'keep me');
      const taken = await runCli(env, ['backup', '--to', existing]);
      expect(taken.code).toBe(2);
      expect(taken.stderr).toContain(`--to: ${existing} exists; choose a new file`);
      expect(fs.readFileSync(existing, 'utf8')).toBe('keep me');
      const nowhere = path.join(database.dataDir, 'no-such-folder', 'copy.db');
      const missingFolder = await runCli(env, ['backup', '--to', nowhere]);
      expect(missingFolder.code).toBe(2);
      expect(missingFolder.stderr).toContain('does not exist');
      expect((await runCli(env, ['backup'])).code).toBe(2);
    });
  } else {
    it('sends a PostgreSQL operator to pg_dump, and writes nothing', async () => {
      const file = path.join(database.dataDir, 'copy.db');
      const outcome = await runCli(env, ['backup', '--to', file, '--json']);
      expect(outcome.code).toBe(1);
      const { error } = JSON.parse(outcome.stderr.trim().split('\n').at(-1) as string);
      expect(error.code).toBe('CONFIGURATION_ERROR');
      expect(error.message).toContain('pg_dump');
      expect(error.message).not.toContain(database.url);
      expect(fs.existsSync(file)).toBe(false);
    });
  }
});
