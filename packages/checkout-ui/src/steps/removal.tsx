import { useEffect, useId, useRef, useState } from 'preact/hooks';

/** What a removal asks about: the items, the offer that asked, and the sentences that name them. */
export interface Removal<T> {
  items: T[];
  from: string;
  question: string;
  done: string;
}

/** A link that offers to remove `items` ("Remove this card"); not drawn while `items` is empty. */
export interface RemovalOffer<T> {
  key: string;
  label: string;
  items: T[];
}

/**
 * The removal links of a step, each asking in place of itself, naming what goes, with "Remove" taking
 * focus and "Keep" (or Escape) giving it back to the link. Once the items have left the wallet it says
 * so, and focus goes to the step's first control; when some went and one failed, the question is asked
 * again about those left. `asking` is the step's, which keeps its Continue still while a removal runs.
 * It stays mounted while `links` is false (a form is open, as after the last item that could be chosen
 * went), so its word is still said.
 */
export function RemovalControls<T>(props: {
  /** Every item in the wallet now: those asked about that are no longer here have gone. */
  items: T[];
  idOf: (item: T) => string;
  offers: RemovalOffer<T>[];
  /** The question and the sentence said once done, for these items asked about from that offer. */
  describe: (items: T[], from: string) => Removal<T>;
  /** "card", "cards": the words of the answers ("Remove card", "Keep them"). */
  noun: { one: string; many: string };
  /** The answer's verb: "Remove" unless said otherwise. */
  verb?: string;
  links: boolean;
  asking: Removal<T> | null;
  onAsk: (removal: Removal<T> | null) => void;
  busy: boolean;
  onRemove: (ids: string[]) => void;
  firstControl: () => HTMLElement | null | undefined;
}) {
  const { asking, busy, idOf } = props;
  const [said, setSaid] = useState<string | null>(null);
  const links = useRef(new Map<string, HTMLButtonElement>());
  const removeRef = useRef<HTMLButtonElement>(null);
  // The control the next render draws in place of the one pressed: it takes focus once drawn.
  const focusNext = useRef<(() => HTMLElement | null | undefined) | null>(null);
  const questionId = useId();
  const removing = busy && asking !== null;

  // After every render; declared first, so it runs after the render the effects below cause is drawn.
  useEffect(() => {
    focusNext.current?.()?.focus();
    focusNext.current = null;
  });

  useEffect(() => {
    if (!asking) return;
    const here = new Set(props.items.map(idOf));
    const left = asking.items.filter((item) => here.has(idOf(item)));
    if (left.length === asking.items.length) return;
    if (left.length > 0) return props.onAsk(props.describe(left, asking.from));
    setSaid(asking.done);
    props.onAsk(null);
    focusNext.current = props.firstControl;
  }, [props.items]);

  const ask = (offer: RemovalOffer<T>) => {
    setSaid(null);
    props.onAsk(props.describe(offer.items, offer.key));
    focusNext.current = () => removeRef.current;
  };
  const keep = () => {
    if (busy || !asking) return;
    props.onAsk(null);
    focusNext.current = () => links.current.get(asking.from);
  };
  // Escape answers "Keep" here, rather than closing the whole checkout as it does elsewhere.
  const escapeKeeps = (event: KeyboardEvent) => {
    if (event.key !== 'Escape') return;
    event.stopPropagation();
    event.preventDefault();
    keep();
  };
  const one = asking?.items.length === 1;

  return (
    <>
      {props.links &&
        !asking &&
        props.offers
          .filter((offer) => offer.items.length > 0)
          .map((offer) => (
            <button
              type="button"
              class="link"
              key={offer.key}
              ref={(element) => {
                if (element) links.current.set(offer.key, element);
              }}
              onClick={() => ask(offer)}
            >
              {offer.label}
            </button>
          ))}
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
              onClick={() => !busy && props.onRemove(asking.items.map(idOf))}
              onKeyDown={escapeKeeps}
            >
              {removing && <span class="spinner" aria-hidden="true" />}
              {props.verb ?? 'Remove'} {one ? props.noun.one : props.noun.many}
            </button>
            <button
              type="button"
              class="link"
              aria-disabled={busy ? 'true' : undefined}
              onClick={keep}
              onKeyDown={escapeKeeps}
            >
              {one ? 'Keep it' : 'Keep them'}
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

/** What a step gives its removal links; the kind of item decides the rest. */
export type RemovalProps<T> = Omit<
  Parameters<typeof RemovalControls<T>>[0],
  'idOf' | 'offers' | 'describe' | 'noun'
>;
