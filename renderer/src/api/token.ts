/**
 * The browser shell's access token arrives in the URL fragment (#token=…), which browsers never send to
 * a server. We move it to sessionStorage and clear it from the address bar, so it does not linger on
 * screen or in screenshots, while a reload of this tab still works.
 */
const KEY = 'shoal.token';

export function takeAccessToken(): string | null {
  const fromHash = new URLSearchParams(window.location.hash.replace(/^#/, '')).get('token');
  if (fromHash) {
    sessionStorage.setItem(KEY, fromHash);
    history.replaceState(null, '', window.location.pathname + window.location.search);
    return fromHash;
  }
  return sessionStorage.getItem(KEY);
}
