import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorsTable } from './errors-table.js';

describe('docs/errors.md', () => {
  it('lists every error code with its HTTP status and meaning', () => {
    const doc = fs.readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
    expect(doc).toContain(errorsTable());
  });
});
