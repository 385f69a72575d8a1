import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VERSION } from './version.js';

/**
 * A version's file never changes, and stays served. Merchants pin `/sdk/<version>/wallet-sdk.js` by its
 * integrity hash (`GET /sdk/latest.json`), and a browser refuses to run a pinned file whose bytes differ,
 * or that is gone: their button would vanish. `versions.json` records the hash each version was released
 * with, so a change to the SDK's code must come with a new version; the file of every earlier version is
 * kept in `releases/<version>/wallet-sdk.js`, which the service serves.
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
      `The SDK's code changed under version ${VERSION}, whose file merchants may have pinned. Keep its file: build the last commit of ${VERSION} and copy its dist/wallet-sdk.js to releases/${VERSION}/wallet-sdk.js. Then give the SDK a new version in package.json and src/version.ts, record it in versions.json as "<version>": "${built}", and say what it changed in CHANGELOG.md.`,
    ).toBe(released);
  });

  it('keeps the file of every earlier version, byte for byte', () => {
    const released = JSON.parse(read('versions.json')) as Record<string, string>;
    for (const [version, integrity] of Object.entries(released)) {
      if (version === VERSION) continue;
      const file = new URL(`releases/${version}/wallet-sdk.js`, packageDir);
      expect(fs.existsSync(file), `releases/${version}/wallet-sdk.js is missing`).toBe(true);
      const kept = `sha384-${createHash('sha384').update(fs.readFileSync(file)).digest('base64')}`;
      expect(kept, `releases/${version}/wallet-sdk.js is not the file ${version} was released as`).toBe(
        integrity,
      );
    }
  });

  it('has an entry in CHANGELOG.md for every released version', () => {
    const entries = [...read('CHANGELOG.md').matchAll(/^## (\S+) \(/gm)].map((match) => match[1]);
    const released = Object.keys(JSON.parse(read('versions.json')) as Record<string, string>);
    expect([...entries].sort()).toEqual([...released].sort());
  });
});
