import fs from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * The colour contrast axe-core cannot measure. The browser tests audit every screen with axe-core
 * (test/e2e/accessibility.test.ts), but a saved card's tile has a gradient behind its text, from
 * `--surface` to `--bg`, and axe leaves text on a gradient unjudged. Along a linear gradient each channel,
 * and so the luminance, moves steadily from one end to the other: text that keeps 4.5:1 (WCAG 1.4.3)
 * against both ends keeps it everywhere between.
 */
const css = fs.readFileSync(new URL('./styles.css', import.meta.url), 'utf8');

/** The custom properties set in the first rule whose selector is `selector`. */
function properties(selector: string): Record<string, string> {
  const start = css.indexOf(`${selector} {`);
  if (start < 0) throw new Error(`no rule for ${selector} in styles.css`);
  const body = css.slice(css.indexOf('{', start) + 1, css.indexOf('}', start));
  return Object.fromEntries(
    [...body.matchAll(/(--[\w-]+):\s*([^;]+);/g)].map(([, name, value]) => [name, value]),
  );
}

/** WCAG 2.2's relative luminance of a `#rgb` or `#rrggbb` colour. */
function luminance(hex: string): number {
  const digits =
    hex.length === 4
      ? [...hex.slice(1)].map((digit) => digit + digit)
      : [1, 3, 5].map((i) => hex.slice(i, i + 2));
  const [r, g, b] = digits.map((pair) => {
    const channel = Number.parseInt(pair, 16) / 255;
    return channel <= 0.04045 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(one: string, other: string): number {
  const [lighter, darker] = [luminance(one), luminance(other)].sort((a, b) => b - a) as [number, number];
  return (lighter + 0.05) / (darker + 0.05);
}

const themes = {
  light: properties(':root'),
  dark: properties(':root[data-theme="dark"]'),
};

describe("the checkout's colours", () => {
  it.each(Object.entries(themes))(
    'keep the card tiles’ text at 4.5:1 or more against both ends of their gradient (%s)',
    (_theme, colours) => {
      const ratios: Record<string, number> = {};
      for (const text of ['--text', '--muted']) {
        for (const end of ['--surface', '--bg']) {
          ratios[`${text} on ${end}`] =
            Math.round(contrast(colours[text] ?? '', colours[end] ?? '') * 100) / 100;
        }
      }
      expect(Object.keys(ratios)).toHaveLength(4);
      expect(Object.entries(ratios).filter(([, ratio]) => ratio < 4.5)).toEqual([]);
    },
  );

  it('are the same in the dark theme whether the system asks for it or the page forces it', () => {
    const system = properties(':root:not([data-theme="light"])');
    const media = css.indexOf('@media (prefers-color-scheme: dark)');
    expect(media).toBeGreaterThan(-1);
    expect(css.indexOf(':root:not([data-theme="light"]) {')).toBeGreaterThan(media);
    expect(Object.keys(system).length).toBeGreaterThan(5);
    expect(system).toEqual(themes.dark);
  });
});
