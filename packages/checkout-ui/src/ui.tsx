import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

/** Small building blocks shared by the steps: labelled fields, alerts, the primary button. */

export interface FieldProps {
  label: string;
  type?: 'text' | 'email' | 'tel';
  autocomplete?: string;
  inputMode?: 'text' | 'numeric' | 'email' | 'tel';
  maxLength?: number;
  pattern?: string;
  placeholder?: string;
  disabled?: boolean;
  class?: string;
  /** Takes focus when its step appears. */
  'data-autofocus'?: boolean;
  value: string;
  onValue: (value: string) => void;
  /**
   * What is kept of the text as typed or pasted, written back into the input at once: a value that stays
   * the same does not draw the input again, and would leave the dropped characters showing.
   */
  clean?: (typed: string) => string;
  error?: string | null | undefined;
  hint?: ComponentChildren;
  /** Shown after the input, inside the field's frame (the card brand). */
  adornment?: ComponentChildren;
  /** Ids of text elsewhere in the step that describes the field, read after its hint and error. */
  describedBy?: string | undefined;
  /** Marked invalid for a refusal shown elsewhere in the step (its id in `describedBy`). */
  invalid?: boolean;
}

/** The label, hint and error around one control; `describedBy` gives the control the matching ARIA. */
function FieldFrame({
  id,
  label,
  hint,
  error,
  class: className,
  children,
}: Pick<FieldProps, 'label' | 'hint' | 'error' | 'class'> & { id: string; children: ComponentChildren }) {
  return (
    <div class={`field ${className ?? ''}`}>
      <label for={id}>{label}</label>
      <div class="control">{children}</div>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

/**
 * The control's `aria-invalid` and `aria-describedby`, matching the ids FieldFrame gives the hint and
 * error, then `others` (ids of text outside the field); `invalid` for a refusal said elsewhere.
 */
function describedBy(
  id: string,
  hint: ComponentChildren,
  error: string | null | undefined,
  others?: string,
  invalid = false,
) {
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : '', others ?? '']
    .filter(Boolean)
    .join(' ');
  return {
    'aria-invalid': error || invalid ? ('true' as const) : undefined,
    'aria-describedby': described || undefined,
  };
}

export function Field({
  label,
  value,
  onValue,
  error,
  hint,
  adornment,
  class: className,
  type,
  describedBy: others,
  invalid,
  clean,
  ...input
}: FieldProps) {
  const id = useId();
  return (
    <FieldFrame id={id} label={label} hint={hint} error={error} class={className}>
      <input
        {...input}
        // Preact 11 types <input> per `type` literal; a union of text-like types is still a text input.
        type={(type ?? 'text') as 'text'}
        id={id}
        value={value}
        {...describedBy(id, hint, error, others, invalid)}
        onInput={(event) => {
          const input = event.currentTarget;
          const kept = clean ? clean(input.value) : input.value;
          if (kept !== input.value) input.value = kept;
          onValue(kept);
        }}
      />
      {adornment}
    </FieldFrame>
  );
}

export interface SelectFieldProps extends Pick<FieldProps, 'label' | 'hint' | 'error' | 'class'> {
  value: string;
  onValue: (value: string) => void;
  options: Array<{ value: string; label: string }>;
}

/** A labelled `<select>` drawn and described like Field. */
export function SelectField({
  label,
  value,
  onValue,
  options,
  error,
  hint,
  class: className,
}: SelectFieldProps) {
  const id = useId();
  return (
    <FieldFrame id={id} label={label} hint={hint} error={error} class={className}>
      <select
        id={id}
        value={value}
        {...describedBy(id, hint, error)}
        onChange={(event) => onValue(event.currentTarget.value)}
      >
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </FieldFrame>
  );
}

/** A checkbox with its label beside it. */
export function CheckField(props: {
  label: string;
  /** Under the label, and read with it. */
  hint?: string;
  checked: boolean;
  onChecked: (checked: boolean) => void;
}) {
  const id = useId();
  return (
    <div class="field check">
      <input
        type="checkbox"
        id={id}
        checked={props.checked}
        onChange={(event) => props.onChecked(event.currentTarget.checked)}
        {...describedBy(id, props.hint, null)}
      />
      <label for={id}>{props.label}</label>
      {props.hint && (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
    </div>
  );
}

/** After a refused submit: the first field that needs attention takes focus, once the errors are drawn. */
export function focusFirstInvalid(): void {
  queueMicrotask(() => document.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
}

/** Announced as soon as it appears (role="alert"); `id` for a field it is about to name it. */
export function Alert({ message, id }: { message: string | null; id?: string }) {
  if (!message) return null;
  return (
    <p class="alert" role="alert" id={id}>
      {message}
    </p>
  );
}

/** Why the step is asked, or what is under way; read out politely, not as an error. */
export function Notice({ message }: { message: string | null }) {
  if (!message) return null;
  return (
    <p class="notice" role="status">
      {message}
    </p>
  );
}

/**
 * A Notice that is there before it speaks, for what changes while the shopper waits: screen readers read
 * the changes of a live region already on the page, not always one that appears with its text.
 */
export function LiveNotice({ message }: { message: string | null }) {
  return (
    <p class={message ? 'notice' : undefined} role="status">
      {message}
    </p>
  );
}

/** The step's main action. While busy it stays focusable (aria-disabled) so keyboard focus is not lost. */
export function Submit({
  busy,
  disabled,
  children,
}: {
  busy: boolean;
  disabled?: boolean;
  children: ComponentChildren;
}) {
  return (
    <button
      type="submit"
      class="primary"
      aria-busy={busy ? 'true' : 'false'}
      aria-disabled={busy || disabled ? 'true' : undefined}
    >
      {busy && <span class="spinner" aria-hidden="true" />}
      {children}
    </button>
  );
}

/** The step title: focused when the step appears, so screen readers say where the shopper now is. */
export function StepTitle({ children }: { children: ComponentChildren }) {
  return (
    <h2 class="step-title" tabIndex={-1} data-step-title>
      {children}
    </h2>
  );
}

/** Calls `action` unless the form is busy or the button says it is disabled; Enter lands here too. */
export function onSubmitGuard(busy: boolean, action: () => void) {
  return (event: Event) => {
    event.preventDefault();
    if (busy) return;
    const submitter = (event as SubmitEvent).submitter;
    if (submitter?.getAttribute('aria-disabled') === 'true') return;
    action();
  };
}

export const BRAND_NAMES: Record<string, string> = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  amex: 'American Express',
  'american-express': 'American Express',
  discover: 'Discover',
  jcb: 'JCB',
  'diners-club': 'Diners Club',
  unionpay: 'UnionPay',
};

export const brandName = (brand: string): string =>
  BRAND_NAMES[brand.toLowerCase()] ?? brand.charAt(0).toUpperCase() + brand.slice(1);

/** One choice of a radio list, drawn as a tile; the selected one takes the step's first focus. */
export function OptionTile<T extends string | number>({
  name,
  value,
  selected,
  onSelect,
  children,
}: {
  name: string;
  value: T;
  selected: T | null;
  onSelect: (value: T) => void;
  children: ComponentChildren;
}) {
  const checked = value === selected;
  return (
    <label class="tile option">
      <input
        type="radio"
        name={name}
        value={value}
        checked={checked}
        onChange={() => onSelect(value)}
        data-autofocus={checked ? true : undefined}
      />
      {children}
    </label>
  );
}
