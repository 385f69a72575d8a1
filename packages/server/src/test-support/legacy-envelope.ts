import { createCipheriv, randomBytes } from 'node:crypto';
import type { KeyRingKey } from '../vault/keyring.js';

/** An envelope as the vault wrote it before version 2: `v1.…`, bound to the row id alone. */
export function legacyEnvelope(key: KeyRingKey, plaintext: string, id: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.key, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(id));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', key.id, iv, ciphertext, cipher.getAuthTag()]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}
