import { describe, expect, it } from 'vitest';
import { wrapTarget } from './focus-trap.js';

describe('wrapTarget', () => {
  const controls = ['close', 'email', 'continue'];

  it('wraps Tab from the last control to the first, and Shift+Tab from the first to the last', () => {
    expect(wrapTarget(controls, 'continue', false)).toBe('close');
    expect(wrapTarget(controls, 'close', true)).toBe('continue');
  });

  it('leaves the browser to move focus between the others', () => {
    expect(wrapTarget(controls, 'close', false)).toBeUndefined();
    expect(wrapTarget(controls, 'email', false)).toBeUndefined();
    expect(wrapTarget(controls, 'email', true)).toBeUndefined();
    expect(wrapTarget(controls, 'continue', true)).toBeUndefined();
  });

  it('brings focus from outside the controls (the body, a step title) to the first, or the last backwards', () => {
    expect(wrapTarget(controls, null, false)).toBe('close');
    expect(wrapTarget(controls, 'title', false)).toBe('close');
    expect(wrapTarget(controls, 'title', true)).toBe('continue');
  });

  it('does nothing when there is nothing to focus', () => {
    expect(wrapTarget([], null, false)).toBeUndefined();
  });
});
