/**
 * A wait as the resend button shows it: seconds under two minutes, then minutes, then hours (a day's
 * cap of codes can mean a wait of 24 hours), rounded up so that the button never opens before it says.
 */
export function formatWait(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7_200) return `${Math.ceil(seconds / 60)} min`;
  return `${Math.ceil(seconds / 3_600)} h`;
}
