import { render } from 'preact';
import { createApi, storedDeviceMemory } from './api.js';
import { App } from './app.js';
import { parseConfig } from './config.js';
import { createMessenger } from './messages.js';
import './styles.css';

/** Mounts the checkout on the server's page shell (`<main id="checkout">`, `#checkout-config`). */
const root = document.getElementById('checkout') as HTMLElement;
try {
  const config = parseConfig(
    document.getElementById('checkout-config')?.textContent,
    location.hash,
    location.search,
  );
  if (config.theme) document.documentElement.dataset.theme = config.theme;
  // Only in the shop's modal, whose page `frame-ancestors` vouches for. Opened on its own (a link, a popup),
  // the checkout would take a payment no shop page waits for, of an order anyone can create outside a
  // browser by naming the shop's origin, described as they please.
  if (window.parent === window) {
    throw new Error('This checkout opens from the shop’s page only: go back to the shop and pay from there.');
  }
  root.replaceChildren();
  root.removeAttribute('aria-busy');
  render(
    <App
      config={config}
      api={createApi(config.orderId, { device: storedDeviceMemory(config.merchantId) })}
      messenger={createMessenger(window.parent, config.parentOrigin)}
    />,
    root,
  );
} catch (error) {
  root.removeAttribute('aria-busy');
  root.innerHTML = '';
  const p = document.createElement('p');
  p.setAttribute('role', 'alert');
  p.textContent = error instanceof Error ? error.message : 'The checkout could not start.';
  root.append(p);
}
