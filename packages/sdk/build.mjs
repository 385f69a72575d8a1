// Builds the SDK twice: one minified IIFE file for the script tag (served by the service at
// /sdk/wallet-sdk.js) and an ESM module for bundlers. Types come from tsc.
import { build } from 'esbuild';

const common = { bundle: true, target: ['es2019'], legalComments: 'none', logLevel: 'warning' };
await build({
  ...common,
  entryPoints: ['src/global.ts'],
  outfile: 'dist/wallet-sdk.js',
  format: 'iife',
  minify: true,
});
await build({ ...common, entryPoints: ['src/index.ts'], outdir: 'dist/esm', format: 'esm' });
