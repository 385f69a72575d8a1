import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, type TestDatabase, testDatabase } from '../test-support/db.js';
import { createDb } from './index.js';
import { connectionPath, transportWarning, transportWarnings } from './transport.js';

describe.each(engines())('how the connection reaches the database, on %s', (engine) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await testDatabase(engine);
  });
  afterAll(() => database.drop());

  if (engine === 'sqlite') {
    it('is a file on this machine: nothing to warn about', async () => {
      const db = createDb(database.url);
      try {
        expect(await connectionPath(db)).toBeUndefined();
        expect(await transportWarnings(db)).toEqual([]);
      } finally {
        await db.close();
      }
    });
    return;
  }

  it('says nothing of TLS for a connection that stays on this machine, as the server sees it', async () => {
    const db = createDb(database.url);
    try {
      expect(await connectionPath(db)).toEqual({ ssl: false, clientAddress: '127.0.0.1' });
      expect(await transportWarnings(db)).toEqual([]);
    } finally {
      await db.close();
    }
  });
});

describe('transportWarning, given how the connection reaches the server', () => {
  it('warns of a connection from another address without TLS, naming what to add', () => {
    for (const clientAddress of ['10.0.4.7', '192.168.1.20', '2001:db8::5']) {
      expect(transportWarning({ ssl: false, clientAddress })).toMatch(
        /^PostgreSQL is reached over the network without TLS: .*add sslmode=verify-full to DATABASE_URL$/,
      );
    }
  });

  it('says nothing over TLS, over a Unix socket, or over loopback', () => {
    expect(transportWarning({ ssl: true, clientAddress: '10.0.4.7' })).toBeUndefined();
    expect(transportWarning({ ssl: false, clientAddress: null })).toBeUndefined();
    for (const clientAddress of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
      expect(transportWarning({ ssl: false, clientAddress })).toBeUndefined();
    }
  });
});
