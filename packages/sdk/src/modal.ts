/**
 * The checkout modal: an overlay on the merchant's page holding the service's checkout in an iframe.
 * It opens synchronously on the click (a loading state first), locks the page's scroll, keeps keyboard
 * focus inside itself, closes on Escape, and gives focus back to where it was.
 */

/**
 * `dvh` where the browser has it: on a phone, `100vh` counts the space under the address bar, and the
 * checkout's bottom (its Pay button) would sit below the visible page. Older browsers keep the `vh` line.
 */
const STYLE = `
.wc-overlay{position:fixed;inset:0;z-index:2147483647;display:flex;align-items:center;justify-content:center;background:rgba(15,23,42,.55)}
.wc-frame{width:min(100vw,440px);height:min(100vh,720px);height:min(100dvh,720px);border:0;border-radius:12px;background:#fff;box-shadow:0 20px 60px rgba(0,0,0,.35)}
@media (max-width:480px){.wc-frame{width:100vw;height:100vh;height:100dvh;border-radius:0}}
.wc-close{position:absolute;top:12px;right:12px;width:40px;height:40px;border:0;border-radius:20px;background:rgba(255,255,255,.9);font:24px/40px system-ui,sans-serif;cursor:pointer}
.wc-close:focus-visible{outline:3px solid #2563eb;outline-offset:2px}
.wc-loading{position:absolute;color:#fff;font:16px system-ui,sans-serif}`;

export interface Modal {
  /** The iframe's window, to check where messages come from. */
  readonly frameWindow: Window | null;
  /** Shows the checkout at `url` in place of the loading state. */
  load(url: string): void;
  /** The checkout said it is ready: it has its own Close control, so ours steps aside. */
  ready(): void;
  close(): void;
}

export function openModal(onDismiss: () => void): Modal {
  // The element that had focus, looking into shadow roots: the wallet button lives in one, and focusing
  // its host (not focusable itself) would leave focus on the body.
  let previousFocus = document.activeElement as HTMLElement | null;
  while (previousFocus?.shadowRoot?.activeElement) {
    previousFocus = previousFocus.shadowRoot.activeElement as HTMLElement;
  }
  const previousOverflow = document.documentElement.style.overflow;
  document.documentElement.style.overflow = 'hidden';

  const host = document.createElement('div');
  const root = host.attachShadow({ mode: 'open' });
  const style = document.createElement('style');
  style.textContent = STYLE;
  const overlay = document.createElement('div');
  overlay.className = 'wc-overlay';
  overlay.setAttribute('role', 'dialog');
  overlay.setAttribute('aria-modal', 'true');
  overlay.setAttribute('aria-label', 'Wallet checkout');
  const loading = document.createElement('div');
  loading.className = 'wc-loading';
  loading.setAttribute('role', 'status');
  loading.textContent = 'Loading checkout…';
  const frame = document.createElement('iframe');
  frame.className = 'wc-frame';
  frame.title = 'Wallet checkout';
  frame.setAttribute('allow', 'payment');
  frame.style.visibility = 'hidden';
  const close = document.createElement('button');
  close.type = 'button';
  close.className = 'wc-close';
  close.setAttribute('aria-label', 'Close');
  close.textContent = '×';
  close.addEventListener('click', onDismiss);
  // A click on the dimmed page around the checkout leaves focus where it was, inside the modal, rather
  // than on the shop's page beneath it.
  overlay.addEventListener('mousedown', (event) => {
    if (event.target === overlay) event.preventDefault();
  });
  overlay.append(loading, frame, close);
  root.append(style, overlay);
  document.body.append(host);
  close.focus();

  let checkoutReady = false;
  const onKey = (event: KeyboardEvent) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      // Once the checkout shows, it decides: it closes on its own Escape, and not while a payment is
      // under way. Closed from here, the order would be paid with no `success`, or left open.
      if (checkoutReady) frame.focus();
      else onDismiss();
    } else if (event.key === 'Tab') {
      // Page-side stops: our close button until the checkout is ready, and the frame (which tabs within itself).
      event.preventDefault();
      (checkoutReady || root.activeElement === close ? frame : close).focus();
    }
  };
  document.addEventListener('keydown', onKey, true);

  let closed = false;
  return {
    get frameWindow() {
      return frame.contentWindow;
    },
    load(url: string) {
      frame.addEventListener(
        'load',
        () => {
          loading.remove();
          frame.style.visibility = 'visible';
          frame.focus();
        },
        { once: true },
      );
      frame.src = url;
    },
    ready() {
      checkoutReady = true;
      close.hidden = true;
      frame.focus();
    },
    close() {
      if (closed) return;
      closed = true;
      document.removeEventListener('keydown', onKey, true);
      host.remove();
      document.documentElement.style.overflow = previousOverflow;
      previousFocus?.focus?.();
    },
  };
}
