/**
 * The Content-Security-Policy both shells apply to the renderer: scripts, styles and workers from our own
 * origin only, no inline script, no eval, no framing, no plugins. `connect` is the shell's own origin
 * (the browser shell's WebSocket) and nothing else.
 */
export function contentSecurityPolicy(connectOrigins: string[] = []): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self'${connectOrigins.map((o) => ` ${o}`).join('')}`,
    "worker-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}
