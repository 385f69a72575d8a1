import { ERROR_DESCRIPTIONS, ERROR_STATUS, type ErrorCode } from './errors.js';

/** The Markdown table of every error code, as `docs/errors.md` carries it (a test keeps the two equal). */
export function errorsTable(): string {
  const codes = (Object.keys(ERROR_STATUS) as ErrorCode[]).sort(
    (a, b) => ERROR_STATUS[a] - ERROR_STATUS[b] || a.localeCompare(b),
  );
  const rows = codes.map((code) => `| \`${code}\` | ${ERROR_STATUS[code]} | ${ERROR_DESCRIPTIONS[code]} |`);
  return ['| errorCode | HTTP status | meaning |', '|---|---|---|', ...rows].join('\n');
}
