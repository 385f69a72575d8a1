import type { WalletCard } from '../api.js';
import { brandName } from '../ui.js';
import { type Removal, RemovalControls, type RemovalProps } from './removal.js';

/** "Visa ending in 1111": the card as the step's sentences name it. */
export const cardName = (card: WalletCard): string =>
  `${brandName(card.cardBrand)} ending in ${card.last4CardNumber}`;

export function removalOf(cards: WalletCard[], from: string): Removal<WalletCard> {
  const [only] = cards;
  if (cards.length === 1 && only) {
    const name = cardName(only);
    return {
      items: cards,
      from,
      question: `Remove ${name} from your wallet?`,
      done: `${name} was removed from your wallet.`,
    };
  }
  return {
    items: cards,
    from,
    question: `Remove the ${cards.length} expired cards from your wallet?`,
    done: `The ${cards.length} expired cards were removed from your wallet.`,
  };
}

/** "Remove this card" (the selected one) and "Remove expired cards" (which cannot be selected). */
export function CardRemoval(props: RemovalProps<WalletCard> & { selected: WalletCard | null }) {
  const { selected, ...controls } = props;
  return (
    <RemovalControls
      {...controls}
      idOf={(card) => card.paymentId}
      offers={[
        { key: 'selected', label: 'Remove this card', items: selected ? [selected] : [] },
        { key: 'expired', label: 'Remove expired cards', items: props.items.filter((card) => card.expired) },
      ]}
      describe={removalOf}
      noun={{ one: 'card', many: 'cards' }}
    />
  );
}
