/** IPC channel names between the Electron main process and the preload bridge. */
export const IPC = {
  /** invoke: an RpcCall in, an RpcResult out. */
  call: 'shoal:call',
  /** send: start pushing job events to this window. */
  subscribe: 'shoal:subscribe',
  /** main → renderer: one RpcEvent. */
  event: 'shoal:event',
} as const;
