/**
 * The caps on every input Shoal reads: plan, cluster and model files and command-line options. Each is
 * checked before any work or allocation proportional to the value it bounds, so a hostile or mistyped
 * file ("dataParallel": 2147483648, a device "count" of 1e9, a model of nested sub-models that expands
 * to millions of layers) is refused at once with a diagnostic instead of exhausting memory. The caps
 * sit far above any cluster or model Shoal trains today; README.md's "Limits" lists them.
 */
export const LIMITS = {
  /**
   * Devices a cluster spec may describe, and agents (ranks) a plan may use. The plan search grows
   * faster than linearly with devices: 1,024 on one host take seconds, 4,096 minutes.
   */
  devices: 1024,
  /** Pipeline stages of one plan. */
  stages: 1024,
  /** Layers of one model after nested sub-models are expanded, and layer ids one plan may name. */
  layers: 20_000,
  /** How deep sub-models may nest inside a model (a model inside a model inside …). */
  nestingDepth: 64,
  /** Micro-batches per virtual node, and virtual nodes per plan: the simulator draws each one. */
  microBatches: 65_536,
  virtualNodes: 65_536,
  /** Steps of one job (--steps, or what --epochs comes to): far beyond any run, well inside the step counters. */
  steps: 1_000_000_000,
  /** Samples of one global batch (an int32 index in the data order). */
  globalBatch: 2 ** 31 - 1,
  /** Bytes of a plan, cluster or model JSON file read from disk. */
  fileBytes: 64 * 1024 * 1024,
  /** Findings a check keeps; past it they are counted, not stored. */
  findingsKept: 200,
  /** Diagnostics printed; the rest are counted in one closing line. */
  diagnosticsShown: 20,
  /** Agent processes `local:N` may start on one machine without an explicit override. */
  localAgents: 64,
} as const;

/** The environment variable that raises LIMITS.localAgents (read by the Node commands, not here). */
export const LOCAL_AGENTS_OVERRIDE = 'SHOAL_MAX_LOCAL_AGENTS';
