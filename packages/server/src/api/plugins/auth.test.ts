import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../log.js';
import { authPlugin, RefusalLog } from './auth.js';

describe('RefusalLog, with the clock faked', () => {
  it('logs 20 refusals a second, then says how many it left out', () => {
    let clock = 1_700_000_000_000;
    const refusals = new RefusalLog(() => clock);
    const taken = Array.from({ length: 25 }, () => refusals.take());
    expect(taken.slice(0, 20)).toEqual(Array(20).fill(0));
    expect(taken.slice(20)).toEqual(Array(5).fill(undefined));
    clock += 999;
    expect(refusals.take()).toBeUndefined();
    clock += 1;
    expect(refusals.take()).toBe(6);
    expect(refusals.take()).toBe(0);
  });
});

describe('the auth plugin, with the key store faked', () => {
  it('still answers 401 when the database cannot say why a key was refused', async () => {
    const lines: string[] = [];
    const app = Fastify({
      loggerInstance: createLogger('info', { write: (line: string) => lines.push(line) } as never),
    });
    await app.register(authPlugin, {
      merchants: {
        authenticate: async () => undefined,
        explainRefusal: async () => {
          throw new Error('connection refused');
        },
      },
    });
    app.get('/private', { config: { auth: 'merchant' } }, async () => 'secret');
    try {
      const response = await app.inject({
        method: 'GET',
        url: '/private',
        headers: { authorization: `Bearer sk_test_${'x'.repeat(32)}` },
      });
      expect(response.statusCode).toBe(401);
      const logged = lines.map((line) => JSON.parse(line)).find((line) => line.msg?.startsWith('refused'));
      expect(logged).toMatchObject({
        reason: 'unknown or revoked key (the database did not say which)',
        keyPrefix: 'sk_test_xxxx',
      });
    } finally {
      await app.close();
    }
  });
});
