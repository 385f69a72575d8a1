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
  // Not framed (opened directly): there is no parent to tell.
  const parent = window.parent !== window ? window.parent : null;
  root.replaceChildren();
  root.removeAttribute('aria-busy');
  render(
    <App
      config={config}
      api={createApi(config.orderId, { device: storedDeviceMemory(config.merchantId) })}
      messenger={createMessenger(parent, config.parentOrigin)}
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
