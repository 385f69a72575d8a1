import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../config.js';
import { runNode } from '../test-support/child.js';
import { legacyEnvelope } from '../test-support/legacy-envelope.js';
import { addStagingKey, KeyRing, loadKeyRing, parseKeyRing, STAGING_KEYS_FILE } from './keyring.js';

const entry = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

const KEYRING_MODULE = fileURLToPath(new URL('./keyring.ts', import.meta.url));

/** Runs `code` (an ES module, TypeScript imports allowed through tsx) in `count` processes at once; their output lines. */
async function inProcesses(count: number, code: string): Promise<string[]> {
  const runs = Array.from({ length: count }, async () => {
    const { code: exitCode, stdout, stderr } = await runNode(['--input-type=module', '-e', code]);
    if (exitCode !== 0) throw new Error(`exit ${exitCode}: ${stderr}`);
    return stdout.trim();
  });
  return Promise.all(runs);
}

describe('KeyRing', () => {
  it('seals with the first key and names it in the envelope', () => {
    const ring = parseKeyRing(`${entry('new')},${entry('old')}`);
    const envelope = ring.encrypt('4111111111111111', 'vlt_1');
    expect(envelope).toMatch(/^v2\.new\./);
    expect(envelope).not.toContain('4111');
    expect(ring.keyIdOf(envelope)).toBe('new');
    expect(ring.decrypt(envelope, 'vlt_1')).toBe('4111111111111111');
  });

  it('seals a stored value to its column and row: a copy anywhere else does not open', () => {
    const ring = parseKeyRing(entry('k1'));
    const token = ring.seal('4895370012003478', 'network_tokens.token_ciphertext', 'vlt_1');
    expect(ring.open(token, 'network_tokens.token_ciphertext', 'vlt_1')).toBe('4895370012003478');
    expect(() => ring.open(token, 'vault_cards.pan_ciphertext', 'vlt_1')).toThrow();
    expect(() => ring.open(token, 'network_tokens.token_ciphertext', 'vlt_2')).toThrow();
    expect(() => ring.decrypt(token, 'vlt_1')).toThrow();
    expect(ring.isCurrent(token)).toBe(true);
  });

  it('opens an envelope of version 1, bound to the row alone, and calls it not current', () => {
    const key = { id: 'k1', key: randomBytes(32) };
    const ring = new KeyRing([key]);
    const legacy = legacyEnvelope(key, '4111111111111111', 'vlt_1');
    expect(ring.open(legacy, 'vault_cards.pan_ciphertext', 'vlt_1')).toBe('4111111111111111');
    expect(() => ring.open(legacy, 'vault_cards.pan_ciphertext', 'vlt_2')).toThrow();
    expect(ring.isCurrent(legacy)).toBe(false);
    // Relabelled as version 2, it no longer opens: the version cannot be changed to skip the binding.
    expect(() => ring.open(legacy.replace(/^v1\./, 'v2.'), 'vault_cards.pan_ciphertext', 'vlt_1')).toThrow();
  });

  it('opens envelopes sealed by any key of the ring', () => {
    const old = entry('old');
    const sealed = parseKeyRing(old).encrypt('secret');
    expect(parseKeyRing(`${entry('new')},${old}`).decrypt(sealed)).toBe('secret');
  });

  it('refuses other associated data, a tampered envelope and an unknown key', () => {
    const ring = parseKeyRing(entry('k1'));
    const envelope = ring.encrypt('secret', 'row-1');
    expect(() => ring.decrypt(envelope, 'row-2')).toThrow();
    const parts = envelope.split('.');
    parts[3] = Buffer.from('tampered').toString('base64url');
    expect(() => ring.decrypt(parts.join('.'), 'row-1')).toThrow();
    expect(() => parseKeyRing(entry('k2')).decrypt(envelope, 'row-1')).toThrow(/not in the key ring/);
    expect(() => ring.decrypt('plain text')).toThrow(/not a key-ring envelope/);
  });

  it('refuses a shortened tag, an IV of another length and extra parts', () => {
    const ring = parseKeyRing(entry('k1'));
    const [version, keyId, iv, ciphertext, tag] = ring.encrypt('4111111111111111', 'row-1').split('.');
    const bytes = (part: string | undefined) => Buffer.from(part as string, 'base64url');
    const forms = [
      [version, keyId, iv, ciphertext, bytes(tag).subarray(0, 12).toString('base64url')],
      [version, keyId, iv, ciphertext, bytes(tag).subarray(0, 4).toString('base64url')],
      [version, keyId, Buffer.concat([bytes(iv), Buffer.alloc(4)]).toString('base64url'), ciphertext, tag],
      [version, keyId, iv, ciphertext, tag, 'junk'],
    ];
    for (const form of forms) expect(() => ring.decrypt(form.join('.'), 'row-1')).toThrow();
    expect(ring.decrypt([version, keyId, iv, ciphertext, tag].join('.'), 'row-1')).toBe('4111111111111111');
  });

  it('gives equal keyed hashes for equal values, under a key that changes with the primary key', () => {
    const key = entry('k1');
    expect(parseKeyRing(key).hmac('4111')).toBe(parseKeyRing(key).hmac('4111'));
    expect(parseKeyRing(key).hmac('4111')).not.toBe(parseKeyRing(key).hmac('4112'));
    expect(parseKeyRing(`${entry('k2')},${key}`).hmac('4111')).not.toBe(parseKeyRing(key).hmac('4111'));
  });

  it.each([
    ['k1', 'must be comma-separated id:base64key entries'],
    ['k1:AAAA', 'key "k1" must be 32 bytes of base64, got 3'],
    [`${entry('k1')},${entry('k1')}`, 'key ids must be unique'],
    [`bad id:${randomBytes(32).toString('base64')}`, 'must be comma-separated id:base64key entries'],
  ])('refuses VAULT_KEYS=%s with a ConfigError', (raw, message) => {
    expect(() => parseKeyRing(raw)).toThrow(ConfigError);
    expect(() => parseKeyRing(raw)).toThrow(message);
  });

  it('needs at least one key', () => {
    expect(() => new KeyRing([])).toThrow();
  });
});

describe('staging key file', () => {
  it('is generated once with mode 0600 and a warning, then reused', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-keys-'));
    const warnings: string[] = [];
    const first = loadKeyRing({ vaultKeys: undefined, dataDir, warn: (message) => warnings.push(message) });
    const file = path.join(dataDir, STAGING_KEYS_FILE);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('VAULT_KEYS is not set');
    const second = loadKeyRing({ vaultKeys: undefined, dataDir, warn: (message) => warnings.push(message) });
    expect(warnings).toHaveLength(1);
    expect(second.decrypt(first.encrypt('x'))).toBe('x');

    const rotated = addStagingKey(dataDir);
    expect(rotated.primaryKeyId).not.toBe(first.primaryKeyId);
    expect(rotated.keyIds).toContain(first.primaryKeyId);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('that cannot be read stops the load with a DATA_DIR error naming it, and is left as it was', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-keys-'));
    const file = path.join(dataDir, STAGING_KEYS_FILE);
    fs.mkdirSync(file, { mode: 0o755 });
    fs.chmodSync(file, 0o755);
    const load = () => loadKeyRing({ vaultKeys: undefined, dataDir, warn: () => {} });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(`DATA_DIR: cannot read the staging key ring ${file}: it is not a file`);
    expect(fs.statSync(file).mode & 0o777).toBe(0o755);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('is made private to its owner, with a warning, when others could read it', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-keys-'));
    const file = path.join(dataDir, STAGING_KEYS_FILE);
    fs.writeFileSync(file, `${entry('k1')}\n`, { mode: 0o644 });
    fs.chmodSync(file, 0o644);
    const warnings: string[] = [];
    expect(
      loadKeyRing({ vaultKeys: undefined, dataDir, warn: (message) => warnings.push(message) }).primaryKeyId,
    ).toBe('k1');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(warnings).toEqual([`${file} was readable by other users (mode 644): made it 0600.`]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('is created by one of several processes starting at once, and all of them read the same ring', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-keys-'));
    const printed = await inProcesses(
      6,
      `const { loadKeyRing } = await import(${JSON.stringify(KEYRING_MODULE)});
       console.log(loadKeyRing({ vaultKeys: undefined, dataDir: ${JSON.stringify(dataDir)}, warn: () => {} }).primaryKeyId);`,
    );
    expect(new Set(printed).size).toBe(1);
    expect(loadKeyRing({ vaultKeys: undefined, dataDir, warn: () => {} }).primaryKeyId).toBe(printed[0]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps every key when several rotations add theirs at once', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-keys-'));
    const first = loadKeyRing({ vaultKeys: undefined, dataDir, warn: () => {} });
    const printed = await inProcesses(
      6,
      `const { addStagingKey } = await import(${JSON.stringify(KEYRING_MODULE)});
       console.log(addStagingKey(${JSON.stringify(dataDir)}).primaryKeyId);`,
    );
    const ring = loadKeyRing({ vaultKeys: undefined, dataDir, warn: () => {} });
    expect(ring.keyIds).toHaveLength(7);
    expect(ring.keyIds).toEqual(expect.arrayContaining([first.primaryKeyId, ...printed]));
    expect(fs.readdirSync(dataDir)).toEqual([STAGING_KEYS_FILE]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('is read again by a running ring that meets a key it does not know, after a rotation', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-keys-'));
    const running = loadKeyRing({ vaultKeys: undefined, dataDir, warn: () => {} });
    const before = running.primaryKeyId;
    const rotated = addStagingKey(dataDir);
    expect(running.primaryKeyId).toBe(before);

    expect(running.decrypt(rotated.encrypt('4111111111111111', 'row-1'), 'row-1')).toBe('4111111111111111');
    expect(running.primaryKeyId).toBe(rotated.primaryKeyId);
    expect(running.keyIds).toEqual(rotated.keyIds);
    expect(running.keyIdOf(running.encrypt('x'))).toBe(rotated.primaryKeyId);
    expect(running.hmac('4111111111111111')).toBe(rotated.hmac('4111111111111111'));
    // A key in no file is still refused, and a ring from VAULT_KEYS never reads a file.
    const stranger = new KeyRing([{ id: 'k-other', key: randomBytes(32) }]);
    expect(() => running.decrypt(stranger.encrypt('x'))).toThrow(/not in the key ring/);
    const fromEnv = parseKeyRing(entry('env'));
    expect(() => fromEnv.decrypt(rotated.encrypt('x'))).toThrow(/not in the key ring/);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('is read again after a rotation also once the wall clock was set back an hour', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-keys-'));
    const running = loadKeyRing({ vaultKeys: undefined, dataDir, warn: () => {} });
    const stranger = new KeyRing([{ id: 'k-other', key: randomBytes(32) }]);
    vi.useFakeTimers({ toFake: ['Date', 'performance'] });
    try {
      // A reload now, for a key in no file; then the clock goes back an hour, a second passes, a rotation.
      expect(() => running.decrypt(stranger.encrypt('x'))).toThrow(/not in the key ring/);
      vi.setSystemTime(Date.now() - 3_600_000);
      vi.advanceTimersByTime(1_000);
      const rotated = addStagingKey(dataDir);
      expect(running.decrypt(rotated.encrypt('x'))).toBe('x');
      expect(running.primaryKeyId).toBe(rotated.primaryKeyId);
    } finally {
      vi.useRealTimers();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('is never used when VAULT_KEYS is set', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-keys-'));
    const ring = loadKeyRing({ vaultKeys: entry('env'), dataDir, warn: () => {} });
    expect(ring.primaryKeyId).toBe('env');
    expect(fs.existsSync(path.join(dataDir, STAGING_KEYS_FILE))).toBe(false);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
});
