/** IPC channel names between the Electron main process and the preload bridge. */
export const IPC = {
  /** invoke: an RpcCall in, an RpcResult out. */
  call: 'shoal:call',
  /** send: start pushing job events to this window. */
  subscribe: 'shoal:subscribe',
  /** main → renderer: one RpcEvent. */
  event: 'shoal:event',
  /** invoke: 'file' | 'folder' in, the path the user picked (or null) out — the Data section's picker. */
  pickDataPath: 'shoal:pick-data-path',
} as const;
