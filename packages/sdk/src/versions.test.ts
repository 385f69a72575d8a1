import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VERSION } from './version.js';

/**
 * A version's file never changes. Merchants pin `/sdk/<version>/wallet-sdk.js` by its integrity hash
 * (`GET /sdk/latest.json`), and a browser refuses to run a pinned file whose bytes differ: their button
 * would vanish. `versions.json` records the hash each version was released with, so a change to the
 * SDK's code must come with a new version.
 */
const packageDir = new URL('../', import.meta.url);
const read = (file: string) => fs.readFileSync(new URL(file, packageDir), 'utf8');

describe('the SDK version', () => {
  it('is the same in package.json (the served path) and in WalletSDK.version', () => {
    expect((JSON.parse(read('package.json')) as { version: string }).version).toBe(VERSION);
  });

  it('names the file it was released with, byte for byte', () => {
    // The file the service serves, as `npm run build` makes it (a fresh checkout has not built it yet).
    if (!fs.existsSync(new URL('dist/wallet-sdk.js', packageDir))) {
      execFileSync(process.execPath, ['build.mjs'], { cwd: packageDir });
    }
    const built = `sha384-${createHash('sha384')
      .update(fs.readFileSync(new URL('dist/wallet-sdk.js', packageDir)))
      .digest('base64')}`;
    const released = (JSON.parse(read('versions.json')) as Record<string, string>)[VERSION];
    expect(
      built,
      `The SDK's code changed under version ${VERSION}, whose file merchants may have pinned. Give it a new version in package.json and src/version.ts, and record it in versions.json as "<version>": "${built}".`,
    ).toBe(released);
  });
});
