/**
 * The script-tag build: `<script src="https://<service>/sdk/wallet-sdk.js?merchantId=mch_…">` (or a
 * `data-merchant-id` attribute) defines `window.WalletSDK`.
 */
import { createButton, type WalletButton } from './button.js';
import { VERSION } from './version.js';

function fromScript(): { serviceOrigin: string; merchantId: string } {
  const script = document.currentScript as HTMLScriptElement | null;
  const src = script?.src ? new URL(script.src) : undefined;
  const merchantId = src?.searchParams.get('merchantId') ?? script?.dataset.merchantId ?? '';
  if (!src || !merchantId) {
    console.error(
      'WalletSDK: load the SDK with ?merchantId=<your merchant id> on its URL or a data-merchant-id attribute',
    );
  }
  return { serviceOrigin: src?.origin ?? location.origin, merchantId };
}

const config = fromScript();

function Button(options: unknown): WalletButton {
  return createButton(config, options);
}

(window as unknown as { WalletSDK: unknown }).WalletSDK = { Button, version: VERSION };
