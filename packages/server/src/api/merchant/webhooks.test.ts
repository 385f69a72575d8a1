import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../test-support/db.js';
import { startTestService, type TestService } from '../../test-support/service.js';
import { insertMessages, newMessage, type WebhookMessageRow } from '../../webhooks/outbox.js';

/** Newest first, as the route lists: created_at, then id, both descending. */
function listOrder(rows: readonly WebhookMessageRow[]): string[] {
  return [...rows].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1)).map((row) => row.id);
}

describe.each(engines())('GET /webhooks/messages on %s', (engine) => {
  let service: TestService;
  let shop: { merchantId: string; apiKey: string };
  let other: { merchantId: string; apiKey: string };
  let rows: WebhookMessageRow[];
  let otherRow: WebhookMessageRow;

  /** Follows `startingAfter` from the first page to the one saying `hasMore: false`. */
  const walk = async (query: string): Promise<{ ids: string[]; sizes: number[]; hasMore: boolean[] }> => {
    const walked = { ids: [] as string[], sizes: [] as number[], hasMore: [] as boolean[] };
    let startingAfter: string | undefined;
    for (;;) {
      const cursor = startingAfter === undefined ? '' : `&startingAfter=${startingAfter}`;
      const response = await service.call('GET', `/webhooks/messages?${query}${cursor}`, {
        apiKey: shop.apiKey,
      });
      expect(response.status, response.text).toBe(200);
      const ids: string[] = response.json.data.map((m: { id: string }) => m.id);
      walked.ids.push(...ids);
      walked.sizes.push(ids.length);
      walked.hasMore.push(response.json.hasMore);
      if (!response.json.hasMore || walked.sizes.length > 10) return walked;
      startingAfter = ids.at(-1);
    }
  };

  beforeAll(async () => {
    service = await startTestService(engine);
    shop = await service.merchant();
    other = await service.merchant();
    // 105 settled messages (the dispatcher leaves them alone), three to a millisecond so that the id
    // decides between equal times; every third one FAILED.
    rows = Array.from({ length: 105 }, (_, i) => ({
      ...newMessage(
        { merchantId: shop.merchantId, eventName: 'ORDER', subjectId: `ord_${i}`, schedule: 'default' },
        1_700_000_000_000 + Math.floor(i / 3),
        0,
      ),
      state: i % 3 === 0 ? ('FAILED' as const) : ('DELIVERED' as const),
    }));
    otherRow = {
      ...newMessage(
        { merchantId: other.merchantId, eventName: 'ORDER', subjectId: 'ord_x', schedule: 'default' },
        1_700_000_000_010,
        0,
      ),
      state: 'DELIVERED',
    };
    await insertMessages(service.services.db.kysely, [...rows, otherRow]);
  });
  afterAll(() => service.close());

  it('walks every message once, newest first, in pages of 50', async () => {
    const walked = await walk('limit=50');
    expect(walked.sizes).toEqual([50, 50, 5]);
    expect(walked.hasMore).toEqual([true, true, false]);
    expect(walked.ids).toEqual(listOrder(rows));
    expect(new Set(walked.ids).size).toBe(105);
  });

  it('keeps the first page as it was: the newest 20, now with hasMore', async () => {
    const response = await service.call('GET', '/webhooks/messages', { apiKey: shop.apiKey });
    expect(response.status).toBe(200);
    expect(Object.keys(response.json).sort()).toEqual(['data', 'hasMore']);
    expect(response.json.data.map((m: { id: string }) => m.id)).toEqual(listOrder(rows).slice(0, 20));
    expect(response.json.hasMore).toBe(true);
  });

  it('pages through a state filter', async () => {
    const failed = rows.filter((row) => row.state === 'FAILED');
    const walked = await walk('state=FAILED&limit=15');
    expect(walked.sizes).toEqual([15, 15, 5]);
    expect(walked.hasMore).toEqual([true, true, false]);
    expect(walked.ids).toEqual(listOrder(failed));
  });

  it('takes every documented parameter together', async () => {
    const byId = new Map(rows.map((row) => [row.id, row]));
    const [newest] = listOrder(rows);
    const target = listOrder(rows).find((id) => id !== newest && byId.get(id)?.state === 'DELIVERED');
    const query = `state=DELIVERED&subjectId=${byId.get(target as string)?.subject_id}&limit=5`;
    const from = async (startingAfter: string) => {
      const response = await service.call(
        'GET',
        `/webhooks/messages?${query}&startingAfter=${startingAfter}`,
        {
          apiKey: shop.apiKey,
        },
      );
      expect(response.status, response.text).toBe(200);
      return response.json;
    };
    expect(await from(newest as string)).toMatchObject({ data: [{ id: target }], hasMore: false });
    expect(await from(target as string)).toEqual({ data: [], hasMore: false });
  });

  it('answers another merchant’s message as a cursor exactly like a missing one: 404', async () => {
    const missingId = 'msg_00000000NoSuchMessage';
    const cursor = (id: string) =>
      service.call('GET', `/webhooks/messages?startingAfter=${id}`, { apiKey: shop.apiKey });
    const foreign = await cursor(otherRow.id);
    const missing = await cursor(missingId);
    for (const response of [foreign, missing]) {
      expect(response.status).toBe(404);
      expect(response.json.errorCode).toBe('WEBHOOK_MESSAGE_NOT_FOUND');
    }
    expect(foreign.json.errorMessage.replace(otherRow.id, '…')).toBe(
      missing.json.errorMessage.replace(missingId, '…'),
    );
    // Its owner may page from it.
    const own = await service.call('GET', `/webhooks/messages?startingAfter=${otherRow.id}`, {
      apiKey: other.apiKey,
    });
    expect(own.json).toEqual({ data: [], hasMore: false });
  });

  it('refuses an unknown query parameter, naming it, instead of ignoring it', async () => {
    for (const parameter of ['offset', 'page', 'cursor', 'before']) {
      const response = await service.call('GET', `/webhooks/messages?${parameter}=50`, {
        apiKey: shop.apiKey,
      });
      expect(response.status).toBe(400);
      expect(response.json.errorCode).toBe('VALIDATION_ERROR');
      expect(response.json.errorMessage).toBe(`query parameter ${parameter} is not one this route takes`);
    }
  });

  it('documents startingAfter and hasMore in /openapi.json', async () => {
    const response = await service.call('GET', '/openapi.json');
    const list = response.json.paths['/webhooks/messages'].get;
    const startingAfter = list.parameters.find((p: { name: string }) => p.name === 'startingAfter');
    expect(startingAfter).toMatchObject({ in: 'query', required: false });
    expect(startingAfter.description ?? startingAfter.schema.description).toContain('previous page');
    const ok = list.responses['200'].content['application/json'].schema;
    expect(ok.required).toEqual(expect.arrayContaining(['data', 'hasMore']));
    expect(ok.properties.hasMore).toMatchObject({ type: 'boolean' });
    expect(ok.properties.hasMore.description).toContain('startingAfter');
    expect(list.responses['404'].description).toContain('WEBHOOK_MESSAGE_NOT_FOUND');
  });
});
