import { describe, expect, it } from 'vitest';
import { isTrustedMessage } from '../../sdk/src/messages.js';
import { buildMessage, createMessenger, type ParentWindow } from './messages.js';

function fakeParent() {
  const posted: { message: unknown; targetOrigin: string }[] = [];
  const parent: ParentWindow = {
    postMessage: (message, targetOrigin) => posted.push({ message, targetOrigin }),
  };
  return { parent, posted };
}

describe('messages to the SDK', () => {
  it('posts to the parent origin only, with the wallet-checkout source', () => {
    const { parent, posted } = fakeParent();
    const messenger = createMessenger(parent, 'https://shop.example');
    messenger.send({ type: 'ready' });
    messenger.send({ type: 'error', orderId: 'ord_1', errorCode: '990', errorMessage: 'Card was declined' });
    expect(posted).toEqual([
      { message: { source: 'wallet-checkout', type: 'ready' }, targetOrigin: 'https://shop.example' },
      {
        message: {
          source: 'wallet-checkout',
          type: 'error',
          orderId: 'ord_1',
          errorCode: '990',
          errorMessage: 'Card was declined',
        },
        targetOrigin: 'https://shop.example',
      },
    ]);
  });

  it.each(['*', '/', 'null', '', 'https://shop.example/path'])('refuses the target origin %j', (origin) => {
    const { parent } = fakeParent();
    expect(() => createMessenger(parent, origin)).toThrow(/refusing/);
  });

  it('builds messages the SDK accepts', () => {
    const frame = {};
    for (const message of [
      buildMessage({ type: 'ready' }),
      buildMessage({ type: 'close' }),
      buildMessage({ type: 'error', orderId: 'o', errorCode: '-1', errorMessage: null }),
    ]) {
      expect(
        isTrustedMessage(
          { origin: 'https://svc.example', source: frame, data: message },
          'https://svc.example',
          frame,
        ),
      ).toBe(true);
    }
  });
});
