import { describe, expect, it, vi } from 'vitest';
import { ApiError, createApi, type DeviceMemory, storedDeviceMemory } from './api.js';

interface Call {
  url: string;
  init: RequestInit | undefined;
}

function fakeFetch(
  answers: Array<{ status?: number; body?: unknown; headers?: Record<string, string> } | Error>,
) {
  const calls: Call[] = [];
  const fetch = async (url: string, init?: RequestInit) => {
    calls.push({ url, init });
    const answer = answers.shift();
    if (!answer) throw new Error('no more answers');
    if (answer instanceof Error) throw answer;
    return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), {
      status: answer.status ?? 200,
      headers: answer.headers ?? {},
    });
  };
  return { fetch, calls };
}

const headers = (call: Call | undefined) => (call?.init?.headers ?? {}) as Record<string, string>;
const bodyOf = (call: Call | undefined) => JSON.parse(String(call?.init?.body));

/** A fake boundary: DeviceMemory in a variable instead of the browser's storage. */
function memoryDevice(
  initial: string | null = null,
): DeviceMemory & { token: string | null; expiresAt: string | null } {
  return {
    token: initial,
    expiresAt: null,
    available: true,
    get() {
      return this.token;
    },
    set(deviceToken, expiresAt) {
      this.token = deviceToken;
      this.expiresAt = expiresAt;
    },
    clear() {
      this.token = null;
    },
  };
}

/**
 * A fake boundary: `document.cookie` over a Map, keeping a cookie until it is written expired (or with
 * `Max-Age=0`) as a browser does, or keeping none (a browser refusing it, as over plain http). Every
 * line written is recorded.
 */
function fakeCookieJar({ keeps = true } = {}) {
  const cookies = new Map<string, string>();
  const written: string[] = [];
  return {
    written,
    get cookie() {
      return [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    },
    set cookie(line: string) {
      written.push(line);
      if (!keeps) return;
      const [pair = '', ...attributes] = line.split('; ');
      const [name = '', value = ''] = pair.split('=', 2);
      const expired = attributes.some(
        (attribute) =>
          attribute === 'Max-Age=0' ||
          (attribute.startsWith('Expires=') && Date.parse(attribute.slice('Expires='.length)) <= Date.now()),
      );
      if (expired) cookies.delete(name);
      else cookies.set(name, value);
    },
  };
}

/** A fake boundary: `localStorage` over a Map. */
function fakeStorage(store = new Map<string, string>()) {
  return () =>
    ({
      getItem: (key: string) => store.get(key) ?? null,
      setItem: (key: string, value: string) => void store.set(key, value),
      removeItem: (key: string) => void store.delete(key),
    }) as unknown as Storage;
}

/** A fake boundary: the `localStorage` of a frame the browser refuses storage to. */
const refusedStorage = () => {
  throw new DOMException('The operation is insecure.', 'SecurityError');
};

const GRANT = { shopperToken: 'tok_secret', expiresAt: '2030-01-01T00:00:00.000Z' };
const DEVICE_EXPIRY = '2030-01-01T00:00:00.000Z';

describe('the checkout API client', () => {
  it('keeps the shopper token in memory and sends it as a bearer token, never a cookie', async () => {
    const { fetch, calls } = fakeFetch([
      { body: { shopperToken: 'tok_secret', expiresAt: '2030-01-01T00:00:00Z' } },
      { body: { email: 'a@b.example', phone: null, cards: [], addresses: [] } },
    ]);
    const api = createApi('ord_1', { fetch });
    expect(api.signedIn).toBe(false);
    await api.verifyCode('a@b.example', '123456');
    expect(api.signedIn).toBe(true);
    await api.getWallet();
    expect(calls[0]?.url).toBe('/checkout/api/orders/ord_1/otp/verify');
    expect(JSON.parse(String(calls[0]?.init?.body))).toEqual({ email: 'a@b.example', code: '123456' });
    expect(headers(calls[0]).authorization).toBeUndefined();
    expect(calls[1]?.url).toBe('/checkout/api/wallet');
    expect(headers(calls[1]).authorization).toBe('Bearer tok_secret');
    expect(calls.every((call) => call.init?.credentials === 'omit')).toBe(true);
    api.forgetToken();
    expect(api.signedIn).toBe(false);
  });

  it('signs out on the server with the token, and forgets it even when the server cannot be reached', async () => {
    const { fetch, calls } = fakeFetch([
      { body: { shopperToken: 'tok_secret', expiresAt: '2030-01-01T00:00:00.000Z' } },
      { body: { signedOut: true } },
      { body: { shopperToken: 'tok_other', expiresAt: '2030-01-01T00:00:00.000Z' } },
      { status: 503, body: { errorCode: 'INTERNAL_ERROR', errorMessage: 'down' } },
    ]);
    const api = createApi('ord_1', { fetch });
    await api.verifyCode('a@b.example', '123456');
    await api.signOut();
    expect([calls[1]?.url, calls[1]?.init?.method]).toEqual(['/checkout/api/sign-out', 'POST']);
    expect(headers(calls[1]).authorization).toBe('Bearer tok_secret');
    expect(api.signedIn).toBe(false);
    await api.verifyCode('a@b.example', '123456');
    await api.signOut();
    expect(calls).toHaveLength(4);
    expect(api.signedIn).toBe(false);
  });

  it("sends a new shopper's enrolment to the order, then the email alone to otp", async () => {
    const { fetch, calls } = fakeFetch([
      { body: { status: 'enrol' } },
      { body: { status: 'sent', destination: 'n***@x.example' } },
    ]);
    const api = createApi('ord 1', { fetch });
    expect(await api.requestCode('new@x.example')).toEqual({ status: 'enrol' });
    const input = {
      email: 'new@x.example',
      firstName: 'New',
      lastName: 'Shopper',
      phone: '+15125550100',
      card: { number: '4242424242424242', expMonth: 12, expYear: 2030, cvv: '123' },
      billingAddress: {
        company: null,
        address1: '1 Main St',
        address2: null,
        city: 'Austin',
        state: 'TX',
        zip: '78701',
        country: 'US',
      },
    };
    expect(await api.enrol(input)).toEqual({ status: 'sent', destination: 'n***@x.example' });
    expect(calls[0]?.url).toBe('/checkout/api/orders/ord%201/otp');
    expect(JSON.parse(String(calls[0]?.init?.body))).toEqual({ email: 'new@x.example' });
    expect(calls[1]?.url).toBe('/checkout/api/orders/ord%201/enrol');
    expect(JSON.parse(String(calls[1]?.init?.body))).toEqual(input);
    expect(headers(calls[1]).authorization).toBeUndefined();
  });

  it('adds a card to the wallet with the shopper token, without a security code', async () => {
    const saved = {
      paymentId: 'pm_new',
      cardBrand: 'visa',
      last4CardNumber: '1111',
      expMonth: 12,
      expYear: 2030,
      isDefault: true,
      needsCvv: false,
      expired: false,
      nickName: null,
      fullNameCard: 'Test Shopper',
      billingAddressId: 4,
    };
    const { fetch, calls } = fakeFetch([
      { body: { shopperToken: 'tok_secret', expiresAt: '2030-01-01T00:00:00Z' } },
      { status: 201, body: saved },
      { status: 200, body: { ...saved, expYear: 2031 } },
    ]);
    const api = createApi('ord_1', { fetch });
    await api.verifyCode('a@b.example', '123456');
    const input = {
      number: '4111111111111111',
      expMonth: 12,
      expYear: 2030,
      nameOnCard: 'Test Shopper',
      billingAddressId: 4,
    };
    expect(await api.addCard(input)).toEqual(saved);
    expect(calls[1]?.url).toBe('/checkout/api/wallet/cards');
    expect(calls[1]?.init?.method).toBe('POST');
    expect(headers(calls[1]).authorization).toBe('Bearer tok_secret');
    expect(JSON.parse(String(calls[1]?.init?.body))).toEqual(input);
    // The same number again: the server renews that card and answers 200.
    expect(await api.addCard({ ...input, expYear: 2031 })).toMatchObject({
      paymentId: 'pm_new',
      expYear: 2031,
    });
  });

  it("reports a refused card with the server's code and message", async () => {
    const { fetch } = fakeFetch([
      {
        status: 400,
        body: { errorCode: 'VALIDATION_ERROR', errorMessage: 'expMonth/expYear: the card has expired' },
      },
      { status: 409, body: { errorCode: 'WALLET_FULL', errorMessage: 'The wallet is full.' } },
    ]);
    const api = createApi('ord_1', { fetch });
    const input = {
      number: '4111111111111111',
      expMonth: 1,
      expYear: 2020,
      nameOnCard: 'Test Shopper',
      billingAddressId: 4,
    };
    await expect(api.addCard(input)).rejects.toMatchObject({
      status: 400,
      errorCode: 'VALIDATION_ERROR',
      message: 'expMonth/expYear: the card has expired',
    });
    await expect(api.addCard(input)).rejects.toMatchObject({ status: 409, errorCode: 'WALLET_FULL' });
  });

  it('removes a card with the shopper token and no body, and answers the wallet as it is after', async () => {
    const after = {
      email: 'a@b.example',
      phone: null,
      firstName: 'Test',
      lastName: 'Shopper',
      cards: [],
      addresses: [],
    };
    const { fetch, calls } = fakeFetch([
      { body: { shopperToken: 'tok_secret', expiresAt: '2030-01-01T00:00:00Z' } },
      { body: after },
      {
        status: 404,
        body: { errorCode: 'PAYMENT_METHOD_NOT_FOUND', errorMessage: 'No such card in this wallet.' },
      },
    ]);
    const api = createApi('ord_1', { fetch });
    await api.verifyCode('a@b.example', '123456');
    expect(await api.removeCard('pm/1 2')).toEqual(after);
    expect(calls[1]?.url).toBe('/checkout/api/wallet/cards/pm%2F1%202');
    expect(calls[1]?.init?.method).toBe('DELETE');
    expect(headers(calls[1]).authorization).toBe('Bearer tok_secret');
    expect(calls[1]?.init?.body).toBeUndefined();
    expect(headers(calls[1])['content-type']).toBeUndefined();
    const missing = await api.removeCard('pm_other').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(ApiError);
    expect(missing).toMatchObject({
      status: 404,
      errorCode: 'PAYMENT_METHOD_NOT_FOUND',
      message: 'No such card in this wallet.',
    });
  });

  it('reads tries left from a wrong code, from a field or from the message', async () => {
    const { fetch } = fakeFetch([
      {
        status: 401,
        body: {
          errorCode: 'OTP_INVALID',
          errorMessage: 'The code is not correct; 3 tries left before a new code is needed.',
        },
      },
      { status: 401, body: { errorCode: 'OTP_INVALID', errorMessage: 'Wrong.', triesLeft: 1 } },
    ]);
    const api = createApi('ord_1', { fetch });
    await expect(api.verifyCode('a@b.example', '000000')).rejects.toMatchObject({
      errorCode: 'OTP_INVALID',
      status: 401,
      triesLeft: 3,
    });
    await expect(api.verifyCode('a@b.example', '000000')).rejects.toMatchObject({ triesLeft: 1 });
    expect(api.signedIn).toBe(false);
  });

  it('reads the wait of a throttled resend from Retry-After or the message', async () => {
    const { fetch } = fakeFetch([
      {
        status: 429,
        body: { errorCode: 'OTP_THROTTLED', errorMessage: 'wait a bit' },
        headers: { 'retry-after': '17' },
      },
      {
        status: 429,
        body: { errorCode: 'OTP_THROTTLED', errorMessage: 'wait 12 seconds before asking for another.' },
      },
    ]);
    const api = createApi('ord_1', { fetch });
    await expect(api.requestCode('a@b.example')).rejects.toMatchObject({ retryAfterSeconds: 17 });
    await expect(api.requestCode('a@b.example')).rejects.toMatchObject({ retryAfterSeconds: 12 });
  });

  it('turns a network failure or a non-JSON answer into an ApiError', async () => {
    const { fetch } = fakeFetch([new TypeError('Failed to fetch'), { status: 502 }]);
    const api = createApi('ord_1', { fetch });
    const offline = await api.getOrder().catch((error: unknown) => error);
    expect(offline).toBeInstanceOf(ApiError);
    expect(offline).toMatchObject({ status: 0, errorCode: 'NETWORK_ERROR' });
    await expect(api.getOrder()).rejects.toMatchObject({ status: 502, errorCode: 'HTTP_502' });
  });

  it('gives up on a request the service does not answer: 15 s, or 30 s for a payment', async () => {
    vi.useFakeTimers();
    try {
      const signals: AbortSignal[] = [];
      const hanging = (_url: string, init?: RequestInit) =>
        new Promise<Response>((_resolve, reject) => {
          const signal = init?.signal as AbortSignal;
          signals.push(signal);
          signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
        });
      const api = createApi('ord_1', { fetch: hanging });
      const order = api.getOrder().catch((error: unknown) => error);
      const payment = api.pay({ paymentId: 'pm_1' }, 'key-1').catch((error: unknown) => error);
      await vi.advanceTimersByTimeAsync(15_000);
      expect(await order).toMatchObject({ status: 0, errorCode: 'TIMEOUT' });
      expect(signals[1]?.aborted).toBe(false);
      await vi.advanceTimersByTimeAsync(15_000);
      expect(await payment).toMatchObject({ status: 0, errorCode: 'TIMEOUT' });
    } finally {
      vi.useRealTimers();
    }
  });

  it('pays with an Idempotency-Key and the CVV in the body only', async () => {
    const { fetch, calls } = fakeFetch([
      { body: { outcome: 'error', errorCode: '990', errorMessage: 'Card was declined' } },
    ]);
    const api = createApi('ord_1', { fetch });
    const result = await api.pay(
      { paymentId: 'pm_1', shippingAddressId: 3, shippingMethodId: 'std', cvv: '123' },
      'key-1',
    );
    expect(result).toEqual({ outcome: 'error', errorCode: '990', errorMessage: 'Card was declined' });
    expect(calls[0]?.url).toBe('/checkout/api/orders/ord_1/pay');
    expect(headers(calls[0])['idempotency-key']).toBe('key-1');
    expect(JSON.parse(String(calls[0]?.init?.body))).toEqual({
      paymentId: 'pm_1',
      shippingAddressId: 3,
      shippingMethodId: 'std',
      cvv: '123',
    });
    expect(calls[0]?.url).not.toContain('123');
  });

  it('reports closing with a request that outlives the frame', async () => {
    const { fetch, calls } = fakeFetch([{ status: 204 }]);
    createApi('ord_1', { fetch }).close();
    await Promise.resolve();
    expect(calls[0]).toMatchObject({
      url: '/checkout/api/orders/ord_1/close',
      init: { method: 'POST', keepalive: true },
    });
  });

  it('remembers the device only when asked, then signs in with it on a later order without a code (fake storage)', async () => {
    const device = memoryDevice();
    const { fetch, calls } = fakeFetch([
      { body: GRANT },
      { body: { ...GRANT, deviceToken: 'dev_secret', deviceExpiresAt: DEVICE_EXPIRY } },
      {
        body: {
          shopperToken: 'tok_later',
          expiresAt: DEVICE_EXPIRY,
          deviceExpiresAt: '2030-02-01T00:00:00.000Z',
        },
      },
      { body: { email: 'a@b.example', phone: null, cards: [], addresses: [] } },
    ]);
    const first = createApi('ord_1', { fetch, device });
    await first.verifyCode('a@b.example', '123456');
    expect(bodyOf(calls[0])).toEqual({ email: 'a@b.example', code: '123456' });
    expect([device.token, first.remembersDevice]).toEqual([null, false]);
    await first.verifyCode('a@b.example', '123456', true);
    expect(bodyOf(calls[1])).toEqual({ email: 'a@b.example', code: '123456', rememberDevice: true });
    expect([device.token, device.expiresAt]).toEqual(['dev_secret', DEVICE_EXPIRY]);

    const later = createApi('ord_2', { fetch, device });
    expect([later.remembersDevice, later.signedIn]).toEqual([true, false]);
    expect(await later.resume('a@b.example')).toBe(true);
    expect(calls[2]?.url).toBe('/checkout/api/orders/ord_2/resume');
    expect(bodyOf(calls[2])).toEqual({ deviceToken: 'dev_secret', email: 'a@b.example' });
    expect(headers(calls[2]).authorization).toBeUndefined();
    // Kept again as this shop's own, until the expiry the service answered.
    expect(device.expiresAt).toBe('2030-02-01T00:00:00.000Z');
    await later.getWallet();
    expect(headers(calls[3]).authorization).toBe('Bearer tok_later');
  });

  it('keeps the device as it is when the service tells no expiry, as one of the version before does (fake storage)', async () => {
    const device = memoryDevice('dev_secret');
    device.expiresAt = DEVICE_EXPIRY;
    const { fetch } = fakeFetch([{ body: GRANT }]);
    const api = createApi('ord_1', { fetch, device });
    expect(await api.resume()).toBe(true);
    expect([device.token, device.expiresAt, api.signedIn]).toEqual(['dev_secret', DEVICE_EXPIRY, true]);
  });

  it('forgets a device the server no longer recognizes, and keeps it when the server cannot be reached (fake storage)', async () => {
    const device = memoryDevice('dev_secret');
    const { fetch } = fakeFetch([
      new TypeError('Failed to fetch'),
      { status: 401, body: { errorCode: 'DEVICE_NOT_RECOGNIZED', errorMessage: 'Not remembered.' } },
    ]);
    const api = createApi('ord_1', { fetch, device });
    expect(await api.resume()).toBe(false);
    expect(device.token).toBe('dev_secret');
    expect(await api.resume()).toBe(false);
    expect([device.token, api.signedIn, api.remembersDevice]).toEqual([null, false, false]);
    expect(await api.resume()).toBe(false);
  });

  it('forgets the device on signing out, on the server too, and on deleting the wallet (fake storage)', async () => {
    const device = memoryDevice('dev_secret');
    const { fetch, calls } = fakeFetch([
      { body: GRANT },
      new TypeError('Failed to fetch'),
      { body: GRANT },
      { body: { deleted: true } },
    ]);
    const api = createApi('ord_1', { fetch, device });
    await api.resume();
    await api.signOut();
    expect(bodyOf(calls[1])).toEqual({ deviceToken: 'dev_secret' });
    expect([device.token, api.signedIn]).toEqual([null, false]);

    device.set('dev_again', DEVICE_EXPIRY);
    await api.resume();
    await api.deleteWallet();
    expect(device.token).toBeNull();
  });

  it('offers no remembering where the browser refuses storage and cookies (fake storage, fake cookie jar)', () => {
    const cookies = fakeCookieJar({ keeps: false });
    const refused = storedDeviceMemory('mch_1', { storage: refusedStorage, cookies });
    expect([refused.available, refused.get()]).toEqual([false, null]);
    refused.set('dev_secret', DEVICE_EXPIRY);
    expect(cookies.written.some((line) => line.includes('dev_secret'))).toBe(false);
  });

  it('keeps the token in a partitioned cookie until it expires where the frame gets no storage (fake storage, fake cookie jar)', () => {
    const cookies = fakeCookieJar();
    const [shopA, shopB] = ['mch_a', 'mch_b'].map((merchantId) =>
      storedDeviceMemory(merchantId, { storage: refusedStorage, cookies }),
    ) as [DeviceMemory, DeviceMemory];
    expect([shopA.available, shopA.get(), cookies.cookie]).toEqual([true, null, '']);
    shopA.set('dev_a/+=', DEVICE_EXPIRY);
    expect(cookies.written.at(-1)).toBe(
      'wallet-checkout.device.mch_a=dev_a%2F%2B%3D; Expires=Tue, 01 Jan 2030 00:00:00 GMT; Path=/checkout/; Secure; SameSite=None; Partitioned',
    );
    shopB.set('dev_b', DEVICE_EXPIRY);
    expect([shopA.get(), shopB.get()]).toEqual(['dev_a/+=', 'dev_b']);
    shopA.clear();
    expect([shopA.get(), shopB.get()]).toEqual([null, 'dev_b']);
    expect(cookies.cookie).toBe('wallet-checkout.device.mch_b=dev_b');
  });

  it('keeps one device token per shop, reading the one of every shop from before until the shop has its own (fake storage)', () => {
    const store = new Map<string, string>();
    const cookies = fakeCookieJar();
    const [shopA, shopB] = ['mch_a', 'mch_b'].map((merchantId) =>
      storedDeviceMemory(merchantId, { storage: fakeStorage(store), cookies }),
    ) as [DeviceMemory, DeviceMemory];
    expect(shopA.available).toBe(true);
    store.set('wallet-checkout.device', 'dev_before');
    expect([shopA.get(), shopB.get()]).toEqual(['dev_before', 'dev_before']);
    shopA.set('dev_a', DEVICE_EXPIRY);
    expect([shopA.get(), shopB.get()]).toEqual(['dev_a', 'dev_before']);
    // A shop forgets its own token only: the one from before may be another shop's on this site.
    shopB.clear();
    expect([shopA.get(), shopB.get()]).toEqual(['dev_a', 'dev_before']);
    shopB.set('dev_b', DEVICE_EXPIRY);
    shopA.clear();
    expect([shopA.get(), shopB.get()]).toEqual(['dev_before', 'dev_b']);
    expect([...store.keys()].sort()).toEqual(['wallet-checkout.device', 'wallet-checkout.device.mch_b']);
    // Where storage is kept, no cookie is.
    expect(cookies.written.filter((line) => line.includes('dev_'))).toEqual([]);
  });
});
