import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Order } from '../../orders/index.js';
import { TEST_ACTOR } from '../../test-support/actor.js';
import { engines } from '../../test-support/db.js';
import { startTestService, type TestService } from '../../test-support/service.js';
import { checkoutCsp, checkoutPage } from './page.js';

const SHOP = 'https://shop.example';

describe.each(engines())('GET /checkout/{orderId} on %s', (engine) => {
  let service: TestService;
  let merchantId: string;

  const createOrder = async () => {
    const response = await service.call('POST', '/checkout/orders', {
      body: { merchantId, order: { lineItems: [{ SKU: 'TEE', amount: 2500 }] } },
      headers: { origin: SHOP },
    });
    return response.json.orderId as string;
  };

  beforeAll(async () => {
    service = await startTestService(engine);
    ({ merchantId } = await service.merchant({ allowedOrigins: [SHOP] }));
  });
  afterAll(() => service.close());

  it('serves the page shell, framable only by the origin the order was created from', async () => {
    const orderId = await createOrder();
    const response = await service.call('GET', `/checkout/${orderId}`);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-store');
    const csp = response.headers['content-security-policy'] as string;
    expect(csp.split('; ')).toContain(`frame-ancestors ${SHOP}`);
    expect(csp.split('; ')).toContain("default-src 'self'");
    // Scripts run by the page's nonce only, new on every answer, which its script elements carry.
    const nonce = /script-src 'nonce-([A-Za-z0-9+/=]{24})'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    expect(response.text).not.toMatch(/<script type="module"(?! nonce="[^"]+")/);
    for (const [, value] of response.text.matchAll(/<script type="module" nonce="([^"]+)"/g)) {
      expect(value).toBe(nonce);
    }
    const again = await service.call('GET', `/checkout/${orderId}`);
    expect(again.headers['content-security-policy']).not.toContain(`'nonce-${nonce}'`);
    expect(response.text).toContain('<main id="checkout"');
    const config = /<script type="application\/json" id="checkout-config">(.*?)<\/script>/.exec(
      response.text,
    )?.[1];
    expect(JSON.parse(config as string)).toEqual({ orderId, merchantId, parentOrigin: SHOP });
  });

  it('answers an unknown order with a small HTML 404', async () => {
    const response = await service.call('GET', '/checkout/ord_nothing');
    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.text).toContain('This checkout does not exist.');
    expect(response.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors *");
  });

  it('answers an open order whose origin the merchant has since removed with a small HTML 403', async () => {
    const orderId = await createOrder();
    await service.services.merchants.update(
      merchantId,
      { allowedOrigins: ['https://elsewhere.example'] },
      TEST_ACTOR,
    );
    try {
      const response = await service.call('GET', `/checkout/${orderId}`);
      expect(response.status).toBe(403);
      expect(response.text).toContain('This shop no longer offers its checkout on this site.');
      expect(response.headers['content-security-policy']).toBe(`default-src 'none'; frame-ancestors ${SHOP}`);
    } finally {
      await service.services.merchants.update(merchantId, { allowedOrigins: [SHOP] }, TEST_ACTOR);
    }
    expect((await service.call('GET', `/checkout/${orderId}`)).status).toBe(200);
  });

  it('answers a closed order with a small HTML 404, still framable by its origin', async () => {
    const orderId = await createOrder();
    await service.services.orders.abandon(orderId);
    const response = await service.call('GET', `/checkout/${orderId}`);
    expect(response.status).toBe(404);
    expect(response.text).toContain('This checkout has ended.');
    expect(response.headers['content-security-policy']).toBe(`default-src 'none'; frame-ancestors ${SHOP}`);
  });
});

describe('checkoutPage', () => {
  const order = { id: 'ord_1', origin: 'https://shop.example' } as Order;

  it('injects the checkout UI bundle, escaped', () => {
    const html = checkoutPage(order, 'n0nce', {
      scripts: ['/checkout/assets/index-abc.js'],
      styles: ['/checkout/assets/a"b.css'],
    });
    expect(html).toContain(
      '<script type="module" nonce="n0nce" src="/checkout/assets/index-abc.js"></script>',
    );
    expect(html).toContain('<link rel="stylesheet" href="/checkout/assets/a&#34;b.css">');
  });

  it('cannot be broken out of by a value in the configuration', () => {
    const html = checkoutPage({ ...order, id: '</script><script>alert(1)' } as Order, 'n0nce');
    expect(html).not.toContain('</script><script>alert(1)');
    expect(html).toContain('\\u003c/script>');
  });
});

describe('checkoutCsp', () => {
  it("names the order's allowed origin as the only ancestor; one saved before origins were checked frames nothing", () => {
    expect(checkoutCsp('https://shop.example', 'n')).toContain('frame-ancestors https://shop.example');
    expect(checkoutCsp('https://*', 'n')).toContain("frame-ancestors 'none'");
    expect(checkoutCsp('https://a.example;script-src', 'n')).toContain("frame-ancestors 'none'");
  });
});
