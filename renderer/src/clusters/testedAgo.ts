/**
 * How long ago a cluster was tested, in the coarse words a status line needs ("tested 3 h ago"): the
 * largest whole unit, with the exact time left to a tooltip. Pure.
 */
export function testedAgo(at: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - at) / 1000));
  if (seconds < 60) return 'tested just now';
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `tested ${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `tested ${hours} h ago`;
  return `tested ${Math.floor(hours / 24)} days ago`;
}
