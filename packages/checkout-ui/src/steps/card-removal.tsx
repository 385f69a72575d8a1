import { useEffect, useId, useRef, useState } from 'preact/hooks';
import type { WalletCard } from '../api.js';
import { brandName } from '../ui.js';

/** "Visa ending in 1111": the card as the step's sentences name it. */
export const cardName = (card: WalletCard): string =>
  `${brandName(card.cardBrand)} ending in ${card.last4CardNumber}`;

/** What a removal asks about: the cards, the link that asked, and the sentences that name them. */
export interface Removal {
  cards: WalletCard[];
  from: 'selected' | 'expired';
  question: string;
  done: string;
}

export function removalOf(cards: WalletCard[], from: Removal['from']): Removal {
  const [only] = cards;
  if (cards.length === 1 && only) {
    const name = cardName(only);
    return {
      cards,
      from,
      question: `Remove ${name} from your wallet?`,
      done: `${name} was removed from your wallet.`,
    };
  }
  return {
    cards,
    from,
    question: `Remove the ${cards.length} expired cards from your wallet?`,
    done: `The ${cards.length} expired cards were removed from your wallet.`,
  };
}

/**
 * "Remove this card" (the selected one) and "Remove expired cards" (which cannot be selected): each asks
 * in place of itself, naming what goes, with "Remove" taking focus and "Keep" (or Escape) giving it back
 * to the link.
 * Once the cards have left the wallet it says so, and focus goes to the step's first control. `asking` is
 * the step's, which keeps Continue still while a removal runs. It stays mounted while `links` is false
 * (the new card form is open, as after the last card that could pay went), so its word is still said.
 */
export function CardRemoval(props: {
  cards: WalletCard[];
  selected: WalletCard | null;
  links: boolean;
  asking: Removal | null;
  onAsk: (removal: Removal | null) => void;
  busy: boolean;
  onRemove: (paymentIds: string[]) => void;
  firstControl: () => HTMLElement | null | undefined;
}) {
  const { asking, busy } = props;
  const [said, setSaid] = useState<string | null>(null);
  const links = { selected: useRef<HTMLButtonElement>(null), expired: useRef<HTMLButtonElement>(null) };
  const removeRef = useRef<HTMLButtonElement>(null);
  // The control the next render draws in place of the one pressed: it takes focus once drawn.
  const focusNext = useRef<(() => HTMLElement | null | undefined) | null>(null);
  const questionId = useId();
  const expired = props.cards.filter((card) => card.expired);
  const removing = busy && asking !== null;

  // After every render; declared first, so it runs after the render the effects below cause is drawn.
  useEffect(() => {
    focusNext.current?.()?.focus();
    focusNext.current = null;
  });

  // All asked about have gone: say so, and focus the step's first control. Some went and one failed: the
  // question is now about those left, for "Remove" to try again.
  useEffect(() => {
    if (!asking) return;
    const left = asking.cards.filter((card) => props.cards.some((c) => c.paymentId === card.paymentId));
    if (left.length === asking.cards.length) return;
    if (left.length > 0) return props.onAsk(removalOf(left, asking.from));
    setSaid(asking.done);
    props.onAsk(null);
    focusNext.current = props.firstControl;
  }, [props.cards]);

  const ask = (cards: WalletCard[], from: Removal['from']) => {
    setSaid(null);
    props.onAsk(removalOf(cards, from));
    focusNext.current = () => removeRef.current;
  };
  const keep = () => {
    if (busy || !asking) return;
    props.onAsk(null);
    focusNext.current = () => links[asking.from].current;
  };
  // Escape answers "Keep" here, rather than closing the whole checkout as it does elsewhere.
  const escapeKeeps = (event: KeyboardEvent) => {
    if (event.key !== 'Escape') return;
    event.stopPropagation();
    event.preventDefault();
    keep();
  };

  return (
    <>
      {props.links && !asking && props.selected && (
        <button
          type="button"
          class="link"
          ref={links.selected}
          onClick={() => ask([props.selected as WalletCard], 'selected')}
        >
          Remove this card
        </button>
      )}
      {props.links && !asking && expired.length > 0 && (
        <button type="button" class="link" ref={links.expired} onClick={() => ask(expired, 'expired')}>
          Remove expired cards
        </button>
      )}
      {props.links && asking && (
        <div class="confirm">
          {/* Said as it appears, and again as the description of "Remove", which takes focus. */}
          <p id={questionId} role="status">
            {asking.question}
          </p>
          <div class="actions">
            <button
              type="button"
              class="link"
              ref={removeRef}
              aria-describedby={questionId}
              aria-busy={removing ? 'true' : 'false'}
              aria-disabled={busy ? 'true' : undefined}
              onClick={() => !busy && props.onRemove(asking.cards.map((card) => card.paymentId))}
              onKeyDown={escapeKeeps}
            >
              {removing && <span class="spinner" aria-hidden="true" />}
              {asking.cards.length === 1 ? 'Remove card' : 'Remove cards'}
            </button>
            <button
              type="button"
              class="link"
              aria-disabled={busy ? 'true' : undefined}
              onClick={keep}
              onKeyDown={escapeKeeps}
            >
              {asking.cards.length === 1 ? 'Keep it' : 'Keep them'}
            </button>
          </div>
        </div>
      )}
      <p class="sr-only" role="status">
        {said}
      </p>
    </>
  );
}
