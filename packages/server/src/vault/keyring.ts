import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../config.js';
import { makeFolders, reasonOf } from '../files.js';

/**
 * AES-256-GCM with a key id in every ciphertext, so keys can rotate. An envelope reads
 * `v2.<keyId>.<iv>.<ciphertext>.<tag>` (base64url parts). The first key of the ring encrypts; every key
 * decrypts. `VAULT_KEYS` is `id:base64key[,id:base64key…]`, each key 32 random bytes.
 *
 * Stored values are sealed to their place: `seal(plaintext, column, id)` authenticates the column and
 * the row's id as associated data, so a ciphertext copied into another column or row (a network token's
 * into the card-number column of the same vault id, say) does not open. Envelopes written before
 * version 2 (`v1.…`) were bound to the row id alone; they still open, and `vault rotate-key` rewrites
 * them as version 2.
 */
export interface KeyRingKey {
  id: string;
  key: Buffer;
}

const VERSION = 'v2';
/** Bound to the row id alone: opened, never written. */
const LEGACY_VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

/** Every column that holds envelopes, as `table.column`: part of what each one is bound to. */
export type SealedColumn =
  | 'vault_cards.pan_ciphertext'
  | 'network_tokens.token_ciphertext'
  | 'webhook_secrets.secret_ciphertext'
  | 'external_responses.psp_raw_response_ciphertext'
  | 'orders.transaction_details_ciphertext'
  | 'gateway_accounts.credentials_ciphertext'
  | 'pending_enrolments.details_ciphertext';

/** An envelope sealed under a key the ring does not hold. */
export class UnknownKeyError extends Error {
  constructor(readonly keyId: string) {
    super(`key "${keyId}" is not in the key ring`);
    this.name = 'UnknownKeyError';
  }
}

/** A ring that can read its keys again reads them at most this often (1 s), whatever it meets. */
const RELOAD_INTERVAL_MS = 1_000;

export class KeyRing {
  #keys!: Map<string, Buffer>;
  #primary!: KeyRingKey;
  /** HMAC keys, the primary key's first. */
  #hmacKeys!: Buffer[];
  readonly #reload: (() => KeyRingKey[]) | undefined;
  /** performance.now() of the last reload; none yet, so the first may come at once. */
  #reloadedAt = Number.NEGATIVE_INFINITY;

  /**
   * `options.reload` reads the keys again from where they came from: a ring that meets a ciphertext under
   * a key it does not know (the staging key file was rotated by `vault rotate-key` while this process
   * ran) takes the keys read, new primary key included, instead of failing until a restart.
   */
  constructor(keys: KeyRingKey[], options: { reload?: () => KeyRingKey[] } = {}) {
    this.#use(keys);
    this.#reload = options.reload;
  }

  #use(keys: KeyRingKey[]): void {
    const primary = keys[0];
    if (!primary) throw new Error('a key ring needs at least one key');
    this.#primary = primary;
    this.#keys = new Map(keys.map((entry) => [entry.id, entry.key]));
    // Derived, not stored: changes with the primary key, and rotation recomputes every keyed hash.
    this.#hmacKeys = keys.map((entry) =>
      Buffer.from(hkdfSync('sha256', entry.key, Buffer.alloc(0), 'wallet-checkout pan-hmac', 32)),
    );
  }

  /** The key named `keyId`, reading the keys again once if the ring can and has not just done so. */
  #key(keyId: string): Buffer | undefined {
    const key = this.#keys.get(keyId);
    // The monotonic clock: a wall clock set back an hour would otherwise stop reloads for an hour.
    if (key || !this.#reload || performance.now() - this.#reloadedAt < RELOAD_INTERVAL_MS) return key;
    this.#reloadedAt = performance.now();
    try {
      this.#use(this.#reload());
    } catch {
      return undefined;
    }
    return this.#keys.get(keyId);
  }

  get primaryKeyId(): string {
    return this.#primary.id;
  }

  get keyIds(): string[] {
    return [...this.#keys.keys()];
  }

  encrypt(plaintext: string, associatedData = ''): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#primary.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(associatedData));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [
      VERSION,
      this.#primary.id,
      iv.toString('base64url'),
      ciphertext.toString('base64url'),
      tag.toString('base64url'),
    ].join('.');
  }

  /**
   * Opens an envelope sealed with `associatedData`; a version 1 envelope with `legacyAssociatedData`, what
   * such envelopes were sealed with.
   */
  decrypt(envelope: string, associatedData = '', legacyAssociatedData = associatedData): string {
    const parts = envelope.split('.');
    const [version, keyId, iv, ciphertext, tag] = parts;
    if (
      parts.length !== 5 ||
      (version !== VERSION && version !== LEGACY_VERSION) ||
      !keyId ||
      ciphertext === undefined
    ) {
      throw new Error('not a key-ring envelope');
    }
    const key = this.#key(keyId);
    if (!key) throw new UnknownKeyError(keyId);
    const ivBytes = Buffer.from(iv as string, 'base64url');
    const tagBytes = Buffer.from(tag as string, 'base64url');
    // Exactly what encrypt() writes: a shortened tag would be easier to forge.
    if (ivBytes.length !== IV_BYTES || tagBytes.length !== TAG_BYTES)
      throw new Error('not a key-ring envelope');
    const decipher = createDecipheriv('aes-256-gcm', key, ivBytes, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(version === VERSION ? associatedData : legacyAssociatedData));
    decipher.setAuthTag(tagBytes);
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  }

  /** Encrypts a value stored in `column` of the row `id`, bound to both. */
  seal(plaintext: string, column: SealedColumn, id: string): string {
    return this.encrypt(plaintext, `${column}:${id}`);
  }

  /** Opens what `seal` wrote for `column` of the row `id` (or, before version 2, for the row `id`). */
  open(envelope: string, column: SealedColumn, id: string): string {
    return this.decrypt(envelope, `${column}:${id}`, id);
  }

  /** The key id an envelope was sealed with. */
  keyIdOf(envelope: string): string | undefined {
    return envelope.split('.')[1];
  }

  /** Whether an envelope is sealed the way this ring seals now: this version, the primary key. */
  isCurrent(envelope: string): boolean {
    return envelope.startsWith(`${VERSION}.`) && this.keyIdOf(envelope) === this.#primary.id;
  }

  /** Keyed hash for equality look-ups (card de-duplication) that reveals nothing without the key. */
  hmac(value: string): string {
    return keyedHash(this.#hmacKeys[0] as Buffer, value);
  }

  /**
   * The keyed hash of `value` under every key of the ring, the primary key's first: a look-up matches
   * rows hashed before a rotation has recomputed them, as well as those hashed since.
   */
  hmacs(value: string): string[] {
    return this.#hmacKeys.map((key) => keyedHash(key, value));
  }

  /**
   * A sub-key for one purpose (e.g. sandbox cryptograms), derived from the key `keyId` names, or from the
   * primary key when it names none or one no longer in the ring.
   */
  deriveKey(purpose: string, keyId?: string | null): Buffer {
    const key = (keyId && this.#keys.get(keyId)) || this.#primary.key;
    return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `wallet-checkout ${purpose}`, 32));
  }
}

function keyedHash(key: Buffer, value: string): string {
  return createHmac('sha256', key).update(value).digest('base64url');
}

export function parseKeyRing(raw: string, variable = 'VAULT_KEYS'): KeyRing {
  return new KeyRing(parseKeys(raw, variable));
}

function parseKeys(raw: string, variable: string): KeyRingKey[] {
  const keys = raw.split(',').map((entry) => {
    const [id, encoded, ...rest] = entry.trim().split(':');
    if (!id || !encoded || rest.length > 0 || !KEY_ID.test(id)) {
      throw new ConfigError(
        variable,
        'must be comma-separated id:base64key entries (id: letters, digits, - and _)',
      );
    }
    const key = Buffer.from(encoded, 'base64');
    if (key.length !== 32)
      throw new ConfigError(variable, `key "${id}" must be 32 bytes of base64, got ${key.length}`);
    return { id, key };
  });
  if (new Set(keys.map((key) => key.id)).size !== keys.length) {
    throw new ConfigError(variable, 'key ids must be unique');
  }
  return keys;
}

export function newKeyEntry(): string {
  // The time orders keys for an operator reading the file; the random part keeps ids unique.
  return `k${Date.now().toString(36)}${randomBytes(3).toString('hex')}:${randomBytes(32).toString('base64')}`;
}

export const STAGING_KEYS_FILE = 'vault-keys';

/** How long `vault rotate-key` waits for another one to finish with the staging key file. */
const LOCK_WAIT_MS = 10_000;
const LOCK_RETRY_MS = 20;

/**
 * The staging key file, written whole or not at all: a temporary file (mode 0600) flushed to disk and
 * then renamed over it, or, with `create`, linked into place only if there is none yet. A reader never
 * sees it empty or half-written, and a crash leaves the old file.
 */
function writeKeyFile(file: string, content: string, mode: 'create' | 'replace'): boolean {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = fs.openSync(temporary, 'wx', 0o600);
  try {
    fs.writeSync(fd, content);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    if (mode === 'replace') {
      fs.renameSync(temporary, file);
      return true;
    }
    fs.linkSync(temporary, file);
    return true;
  } catch (error) {
    if (mode === 'create' && (error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}

/**
 * Reads the staging key file, first making it private to its owner if it was not. A file that cannot be
 * read is a DATA_DIR error naming it: Node's own (`EISDIR: illegal operation on a directory, read`)
 * names neither the file nor the setting.
 */
function readKeyFile(file: string, warn: (message: string) => void): string {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) throw new Error('it is not a file');
    if ((stat.mode & 0o077) !== 0) {
      fs.chmodSync(file, 0o600);
      warn(`${file} was readable by other users (mode ${(stat.mode & 0o777).toString(8)}): made it 0600.`);
    }
    return fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new ConfigError('DATA_DIR', `cannot read the staging key ring ${file}: ${reasonOf(error)}`);
  }
}

/**
 * The key ring from `VAULT_KEYS`, or in staging from `<dataDir>/vault-keys` (created with mode 0600 on
 * first use; of several processes starting at once, one creates it and the others read it). Production
 * never reaches the file: configuration refuses to start without `VAULT_KEYS`. A ring from the file
 * reads it again when it meets a key it does not know, so a running service follows `vault rotate-key`.
 */
export function loadKeyRing(options: {
  vaultKeys: string | undefined;
  dataDir: string;
  warn: (message: string) => void;
  /** Warn of a staging file made before too, not only of one made now: the service does at each start. */
  warnEachLoad?: boolean;
}): KeyRing {
  if (options.vaultKeys) return parseKeyRing(options.vaultKeys);
  const file = path.join(options.dataDir, STAGING_KEYS_FILE);
  if (!fs.existsSync(file) && createStagingRing(file, options.dataDir)) {
    options.warn(
      `VAULT_KEYS is not set: generated a staging key ring in ${file}. Never do this in production.`,
    );
  } else if (options.warnEachLoad) {
    options.warn(
      `VAULT_KEYS is not set: using the staging key ring in ${file}. Never do this in production.`,
    );
  }
  const read = () => parseKeys(readKeyFile(file, options.warn), file);
  return new KeyRing(read(), { reload: read });
}

/** False when another process made it first. */
function createStagingRing(file: string, dataDir: string): boolean {
  try {
    makeFolders(dataDir);
    return writeKeyFile(file, `${newKeyEntry()}\n`, 'create');
  } catch (error) {
    throw new ConfigError('DATA_DIR', `cannot create the staging key ring ${file}: ${reasonOf(error)}`);
  }
}

/** Blocks the thread for `ms` (the CLI's one command waiting for a lock; never the service's event loop). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Runs `work` holding `<file>.lock`, made with O_EXCL, so that two rotations never interleave. */
function withFileLock<T>(file: string, work: () => T): T {
  const lock = `${file}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      fs.closeSync(fs.openSync(lock, 'wx', 0o600));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (Date.now() > deadline) {
        throw new Error(
          `${lock} has been held for ${LOCK_WAIT_MS / 1000} s: another vault rotate-key is running, or one crashed (then remove the file)`,
        );
      }
      sleepSync(LOCK_RETRY_MS);
    }
  }
  try {
    return work();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

/**
 * Adds a new primary key to the staging key file and returns the new ring (used by `vault rotate-key`).
 * Several at once each add their key: none is lost.
 */
export function addStagingKey(dataDir: string): KeyRing {
  const file = path.join(dataDir, STAGING_KEYS_FILE);
  return withFileLock(file, () => {
    const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : '';
    const next = current ? `${newKeyEntry()},${current}` : newKeyEntry();
    writeKeyFile(file, `${next}\n`, 'replace');
    return parseKeyRing(next, file);
  });
}
