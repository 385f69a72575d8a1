/**
 * The API reference at /docs in real Chromium, under its Content-Security-Policy: Swagger UI renders the
 * operations and expands one, with no violation or other error in the console and no request to another
 * origin (no validator badge).
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../packages/server/src/test-support/service.js';
import { launchChromium, openTab } from './support.js';

describe('the API reference at /docs in real Chromium', () => {
  let service: TestService | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    service = await startTestService('sqlite');
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('renders and expands an operation with nothing refused and nothing asked of another origin', async () => {
    if (!service || !browser) throw new Error('setup did not finish');
    const tab = await openTab(browser);
    const origins = new Set<string>();
    tab.page.on('request', (request) => {
      if (!request.url().startsWith('data:')) origins.add(new URL(request.url()).origin);
    });
    try {
      await tab.page.goto(`${service.url}/docs/`);
      const operation = tab.page
        .locator('.opblock-post')
        .filter({ has: tab.page.locator('[data-path="/payments/credentials"]') });
      await operation.locator('.opblock-summary').click();
      await operation.getByText('SESSION_NOT_FOUND').first().waitFor();
      expect(tab.consoleErrors).toEqual([]);
      expect([...origins]).toEqual([service.url]);
    } finally {
      await tab.close();
    }
  });
});
