import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { engines, openTestDb } from '../test-support/db.js';
import { AuditTrail, recordAudit } from './index.js';
import { GENESIS_HASH } from './trail.js';

describe.each(engines())('the audit trail on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  let trail: AuditTrail;
  let clock: number;

  beforeAll(async () => {
    handle = await openTestDb(engine);
    clock = 1_700_000_000_000;
    trail = new AuditTrail(handle.db, () => clock);
  });
  afterAll(() => handle.close());

  beforeEach(async () => {
    clock = 1_700_000_000_000;
    await handle.db.kysely.deleteFrom('audit_events').execute();
    await handle.db.kysely
      .updateTable('audit_head')
      .set({ seq: 0, hash: GENESIS_HASH, logged_seq: 0 })
      .execute();
  });

  async function recordSome(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      clock += 1000;
      await trail.record({
        actor: 'operator:alice@ops1',
        action: i % 2 === 0 ? 'api_key.created' : 'api_key.revoked',
        merchantId: i % 3 === 0 ? 'mch_a' : 'mch_b',
        subject: `key_${i}`,
        details: { prefix: `sk_test_${i}` },
      });
    }
  }

  it('numbers events one after another, each chained to the one before', async () => {
    await recordSome(3);
    const events = await trail.list();
    expect(events.map((event) => event.seq)).toEqual([1, 2, 3]);
    expect(events[0]).toMatchObject({
      at: 1_700_000_001_000,
      actor: 'operator:alice@ops1',
      action: 'api_key.created',
      merchantId: 'mch_a',
      subject: 'key_0',
      details: { prefix: 'sk_test_0' },
      prevHash: GENESIS_HASH,
    });
    expect(events[1]?.prevHash).toBe(events[0]?.hash);
    expect(events[2]?.prevHash).toBe(events[1]?.hash);
    expect(new Set(events.map((event) => event.hash)).size).toBe(3);
    expect(await trail.verify()).toEqual({ ok: true, events: 3, head: { seq: 3, hash: events[2]?.hash } });
  });

  it('records nothing when the action it belongs to rolls back', async () => {
    await recordSome(1);
    await expect(
      handle.db.kysely.transaction().execute(async (trx) => {
        await recordAudit(trx, { actor: 'service', action: 'vault.key_rotated' }, clock);
        throw new Error('the action failed');
      }),
    ).rejects.toThrow('the action failed');
    await recordSome(1);
    expect((await trail.list()).map((event) => event.seq)).toEqual([1, 2]);
    expect(await trail.verify()).toMatchObject({ ok: true, events: 2 });
  });

  it('keeps the chain whole when many record at once', async () => {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        trail.record({ actor: `merchant:mch_${i}`, action: 'webhook.resent', subject: `msg_${i}` }),
      ),
    );
    const events = await trail.list();
    expect(events.map((event) => event.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(new Set(events.map((event) => event.subject)).size).toBe(20);
    expect(await trail.verify()).toMatchObject({ ok: true, events: 20 });
  });

  it('shows an event altered, one removed, one slipped in, and the last cut off', async () => {
    await recordSome(4);
    const { kysely } = handle.db;
    const altered = { credentialTypes: ['NETWORK_TOKEN'] };
    await kysely
      .updateTable('audit_events')
      .set({ details: JSON.stringify(altered) })
      .where('seq', '=', 2)
      .execute();
    expect(await trail.verify()).toEqual({
      ok: false,
      events: 1,
      seq: 2,
      problem: 'its fields do not match its hash',
    });

    await kysely.deleteFrom('audit_events').where('seq', '=', 2).execute();
    expect(await trail.verify()).toMatchObject({ ok: false, seq: 3, problem: 'event 2 is missing' });

    // One written again to fit, with a hash of its own fields: its previous hash gives it away.
    const [first] = await trail.list({ limit: 1 });
    await kysely
      .insertInto('audit_events')
      .values({
        seq: 2,
        at: clock,
        actor: 'operator:mallory@ops2',
        action: 'api_key.created',
        merchant_id: 'mch_a',
        subject: 'key_x',
        details: '{}',
        prev_hash: GENESIS_HASH,
        hash: (first as { hash: string }).hash,
      })
      .execute();
    expect(await trail.verify()).toMatchObject({
      ok: false,
      seq: 2,
      problem: 'its previous hash is not the hash of event 1',
    });

    await kysely.deleteFrom('audit_events').where('seq', '>=', 2).execute();
    expect(await trail.verify()).toEqual({
      ok: false,
      events: 1,
      seq: 4,
      problem: "the chain's head names event 4, but the last event is 1",
    });
  });

  it('lists by time, after a number, by merchant and by action, oldest first', async () => {
    await recordSome(6);
    const seqs = async (filter: Parameters<AuditTrail['list']>[0]) =>
      (await trail.list(filter)).map((event) => event.seq);
    expect(await seqs({ since: 1_700_000_004_000 })).toEqual([4, 5, 6]);
    expect(await seqs({ afterSeq: 4 })).toEqual([5, 6]);
    expect(await seqs({ merchantId: 'mch_a' })).toEqual([1, 4]);
    expect(await seqs({ action: 'api_key.revoked' })).toEqual([2, 4, 6]);
    expect(await seqs({ action: 'api_key.revoked', afterSeq: 2, limit: 1 })).toEqual([4]);
    // Without a starting point, the latest, still oldest first.
    expect(await seqs({ limit: 2 })).toEqual([5, 6]);
    expect(await seqs({ merchantId: 'mch_b', limit: 2 })).toEqual([5, 6]);
    expect(await seqs({ since: 1_700_000_001_000, limit: 2 })).toEqual([1, 2]);
    await expect(trail.list({ limit: 0 })).rejects.toThrow('limit must be an integer from 1 to 1000');
    await expect(trail.list({ limit: 1001 })).rejects.toThrow('limit must be an integer from 1 to 1000');
  });

  it('verifies a trail longer than one page of its walk', async () => {
    await handle.db.kysely.transaction().execute(async (trx) => {
      for (let i = 0; i < 2_100; i++)
        await recordAudit(trx, { actor: 'service', action: 'audit.viewed' }, clock);
    });
    expect(await trail.verify()).toMatchObject({ ok: true, events: 2_100, head: { seq: 2_100 } });
    await sql`update audit_events set actor = 'operator:mallory@ops2' where seq = 1500`.execute(
      handle.db.kysely,
    );
    expect(await trail.verify()).toMatchObject({ ok: false, events: 1_499, seq: 1_500 });
  });

  it('hands each event to the log once, however many processes copy, oldest first', async () => {
    await recordSome(3);
    const other = new AuditTrail(handle.db);
    const copied: number[] = [];
    const emit = (event: { seq: number }) => copied.push(event.seq);
    expect((await Promise.all([trail.copyNew(emit), other.copyNew(emit)])).sort()).toEqual([0, 3]);
    expect(copied).toEqual([1, 2, 3]);
    await recordSome(1);
    expect(await other.copyNew(emit)).toBe(1);
    expect(await trail.copyNew(emit)).toBe(0);
    expect(copied).toEqual([1, 2, 3, 4]);

    // More than one batch at a time.
    await handle.db.kysely.transaction().execute(async (trx) => {
      for (let i = 0; i < 1_200; i++)
        await recordAudit(trx, { actor: 'service', action: 'audit.viewed' }, clock);
    });
    expect(await trail.copyNew(emit)).toBe(1_200);
    expect(copied).toEqual(Array.from({ length: 1_204 }, (_, i) => i + 1));
  });

  it('copies an event again only when the copy fails before it is recorded', async () => {
    await recordSome(2);
    await expect(
      trail.copyNew(() => {
        throw new Error('the log is gone');
      }),
    ).rejects.toThrow('the log is gone');
    const copied: number[] = [];
    expect(await trail.copyNew((event) => copied.push(event.seq))).toBe(2);
    expect(copied).toEqual([1, 2]);
  });
});
