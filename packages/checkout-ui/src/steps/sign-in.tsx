import { useEffect, useId, useRef, useState } from 'preact/hooks';
import type { CodeState } from '../flow.js';
import {
  Alert,
  CheckField,
  Field,
  focusFirstInvalid,
  LiveNotice,
  Notice,
  onSubmitGuard,
  StepTitle,
  Submit,
} from '../ui.js';
import { formatWait } from '../wait.js';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function EmailStep(props: {
  email: string;
  merchantName: string;
  busy: boolean;
  error: string | null;
  /** Said above the field, as the step appears (after "Delete my wallet"). */
  notice: string | null;
  onSubmit: (email: string) => void;
}) {
  const [email, setEmail] = useState(props.email);
  const [invalid, setInvalid] = useState<string | null>(null);
  const submit = onSubmitGuard(props.busy, () => {
    const value = email.trim();
    if (!EMAIL.test(value)) {
      setInvalid('Enter an email address like name@example.com.');
      return focusFirstInvalid();
    }
    setInvalid(null);
    props.onSubmit(value);
  });
  return (
    <form onSubmit={submit} noValidate>
      <StepTitle>Check out with your wallet</StepTitle>
      <Notice message={props.notice} />
      <p class="lead">
        Pay {props.merchantName} with a card saved in your wallet. We’ll email you a one-time code.
      </p>
      <Field
        label="Email"
        type="email"
        autocomplete="email"
        inputMode="email"
        value={email}
        onValue={setEmail}
        error={invalid}
        data-autofocus
      />
      <Alert message={props.error} />
      <Submit busy={props.busy}>Continue</Submit>
    </form>
  );
}

/** Seconds left until `at`, ticking once a second while positive. */
function useCountdown(at: number): number {
  const [now, setNow] = useState(Date.now());
  const left = Math.max(0, Math.ceil((at - now) / 1000));
  useEffect(() => {
    if (left <= 0) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [left > 0, at]);
  return left;
}

export function CodeStep(props: {
  code: CodeState;
  busy: boolean;
  error: string | null;
  /** Said above the field: why a code is asked of a shopper already signed in. */
  notice: string | null;
  /** Days "Remember me on this device" lasts, where the service and the browser allow it; else null. */
  rememberDeviceDays: number | null;
  onVerify: (code: string, rememberDevice: boolean) => void;
  onResend: () => void;
  onChangeEmail: () => void;
}) {
  const [value, setValue] = useState('');
  // Not ticked unless the shopper asks: the checkout may be open on a shared computer.
  const [remember, setRemember] = useState(false);
  const [invalid, setInvalid] = useState<string | null>(null);
  // The server refused the code in the field: marked invalid until the shopper types again.
  const [refused, setRefused] = useState(false);
  const secondsLeft = useCountdown(props.code.resendAt);
  const usable = props.code.status === 'open';
  const waiting = secondsLeft > 0 || props.busy;
  const ids = useId();
  const [sentId, errorId] = [`${ids}-sent`, `${ids}-error`];
  const resendButton = useRef<HTMLButtonElement>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const findCodeField = () =>
    formRef.current?.querySelector<HTMLInputElement>('input[autocomplete="one-time-code"]') ?? null;
  // A new code clears the old attempt and, sent again from this step, takes focus; not on mount, when
  // the effect runs after the first paint and would wipe a code already typed or autofilled.
  const codeKey = `${props.code.destination}|${props.code.resendAt}`;
  const shownKey = useRef(codeKey);
  useEffect(() => {
    if (shownKey.current === codeKey) return;
    shownKey.current = codeKey;
    setValue('');
    setRefused(false);
    if (props.code.resent) findCodeField()?.focus();
  }, [codeKey]);
  // A refused code is cleared for the next; once no code can be tried, focus goes to sending a new one.
  const shownRefusals = useRef(props.code.refused);
  useEffect(() => {
    if (shownRefusals.current === props.code.refused) return;
    shownRefusals.current = props.code.refused;
    setValue('');
    setRefused(true);
    (usable ? findCodeField() : resendButton.current)?.focus();
  }, [props.code.refused]);

  const submit = onSubmitGuard(props.busy, () => {
    if (!/^\d{6}$/.test(value)) {
      setInvalid('Enter the 6 digits from the email.');
      return focusFirstInvalid();
    }
    setInvalid(null);
    props.onVerify(value, remember);
  });
  const resend = () => {
    if (waiting) return;
    // Focus stays where the next code is typed while it is sent.
    if (usable) findCodeField()?.focus();
    props.onResend();
  };
  return (
    <form onSubmit={submit} noValidate ref={formRef}>
      <StepTitle>Enter your code</StepTitle>
      <Notice message={props.notice} />
      <LiveNotice message={props.code.resent ? `We sent a new code to ${props.code.destination}.` : null} />
      <p class="lead" id={sentId}>
        We sent a 6-digit code to <strong>{props.code.destination}</strong>. It works for 10 minutes.
      </p>
      <Field
        label="One-time code"
        class="code"
        inputMode="numeric"
        autocomplete="one-time-code"
        pattern="[0-9]*"
        value={value}
        // No maxLength: it would cut a pasted "123 456" or "123-456" before the spaces and dashes go.
        clean={(typed) => typed.replace(/\D/g, '').slice(0, 6)}
        onValue={(next) => {
          setRefused(false);
          setValue(next);
        }}
        error={invalid}
        describedBy={props.error ? `${sentId} ${errorId}` : sentId}
        invalid={refused && props.error !== null}
        disabled={!usable}
        data-autofocus
      />
      {usable && props.rememberDeviceDays !== null && (
        <CheckField
          label={`Remember me on this device for ${props.rememberDeviceDays} days`}
          hint="Next time, no code: your wallet opens at once. Not on a shared computer."
          checked={remember}
          onChecked={setRemember}
        />
      )}
      <Alert message={props.error} id={errorId} />
      {usable && <Submit busy={props.busy}>Verify</Submit>}
      <div class="row">
        {/* aria-disabled, not disabled, while it waits: focus stays on it (a disabled button drops focus). */}
        <button
          type="button"
          class={usable ? 'link' : 'primary'}
          onClick={resend}
          aria-disabled={waiting ? 'true' : undefined}
          ref={resendButton}
        >
          {secondsLeft > 0
            ? `Resend code in ${formatWait(secondsLeft)}`
            : usable
              ? 'Resend code'
              : 'Send a new code'}
        </button>
        <button type="button" class="link" onClick={props.onChangeEmail}>
          Use another email
        </button>
      </div>
    </form>
  );
}

/** What the shopper reads for each refusal of a code (the server's message is a fallback). */
export function codeErrorMessage(reason: 'invalid' | 'locked' | 'expired', triesLeft: number | null): string {
  switch (reason) {
    case 'invalid':
      return triesLeft === null
        ? 'That code is not right. Check the email and try again.'
        : `That code is not right. ${triesLeft} ${triesLeft === 1 ? 'try' : 'tries'} left.`;
    case 'locked':
      return 'Too many wrong tries: this code no longer works. Send a new code to continue.';
    case 'expired':
      return 'This code has expired or was already used. Send a new code to continue.';
  }
}
