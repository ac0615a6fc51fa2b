import { createHash } from 'node:crypto';
import { z } from 'zod';
import { CLUSTER_STORE_FORMAT } from '../../engine/node/hosts/clusterStore.js';
import { DEPLOY_RECORD_FORMAT } from '../../engine/node/jobs/deployRecord.js';
import { RUN_META_FORMAT } from '../../engine/node/jobs/runMeta.js';
import { RUN_RECORD_FORMAT } from '../../engine/node/jobs/runRecord.js';
import { AgentMessageSchema } from '../../engine/protocol/agentReplies.js';
import { AgentRequestSchema } from '../../engine/protocol/agentRequests.js';
import { ControlReplySchema, ControlRequestSchema, EventFrameSchema, StateReplySchema } from '../../engine/protocol/controlWire.js';
import { JobEventSchema } from '../../engine/protocol/events.js';
import { CoordinatorHelloSchema, HandshakeFrameSchema, PeerHelloSchema, PROTOCOL_VERSION } from '../../engine/protocol/handshake.js';
import { AgentConfigSchema, CoordinatorProcessConfigSchema } from '../../engine/protocol/processConfig.js';
import { PROJECT_FORMAT } from '../../engine/protocol/project.js';
import type { RecordFormat } from '../../engine/protocol/versionedRecord.js';
import { CHECKPOINT_HEADER_FORMAT } from '../../engine/wire/checkpointFile.js';

/**
 * Every schema that crosses a process or outlives one — the wire between studio, coordinator and
 * agents, and each record on disk — with the version constant that must change when it does.
 */
export interface VersionedSchemas {
  /** The constant's name, as the failure message tells the reader to bump it. */
  versionName: string;
  version: number;
  schemas: Record<string, z.ZodType>;
}

const record = (versionName: string, format: RecordFormat<z.ZodType>): VersionedSchemas => ({ versionName, version: format.version, schemas: { [format.what]: format.schema } });

export const VERSIONED: Record<string, VersionedSchemas> = {
  wire: {
    versionName: 'PROTOCOL_VERSION (engine/protocol/handshake.ts)',
    version: PROTOCOL_VERSION,
    schemas: { AgentRequestSchema, AgentMessageSchema, ControlRequestSchema, ControlReplySchema, EventFrameSchema, StateReplySchema, HandshakeFrameSchema, CoordinatorHelloSchema, PeerHelloSchema, CoordinatorProcessConfigSchema, AgentConfigSchema, JobEventSchema },
  },
  run: record('RUN_RECORD_VERSION (engine/node/jobs/runRecord.ts)', RUN_RECORD_FORMAT),
  deploy: record('DEPLOY_RECORD_VERSION (engine/node/jobs/deployRecord.ts)', DEPLOY_RECORD_FORMAT),
  checkpoint: record('CHECKPOINT_VERSION (engine/wire/checkpointFile.ts)', CHECKPOINT_HEADER_FORMAT),
  clusters: record('CLUSTER_STORE_VERSION (engine/node/hosts/clusterStore.ts)', CLUSTER_STORE_FORMAT),
  project: record('PROJECT_VERSION (engine/protocol/project.ts)', PROJECT_FORMAT),
  runMeta: record('RUN_META_VERSION (engine/node/jobs/runMeta.ts)', RUN_META_FORMAT),
};

export interface Fingerprint {
  version: number;
  sha256: string;
}

/** A hash of the schemas' JSON Schema: what a reader of the data relies on (refinements' code is not in it). */
export function fingerprintOf(entry: VersionedSchemas): Fingerprint {
  const hash = createHash('sha256');
  for (const [name, schema] of Object.entries(entry.schemas).sort(([a], [b]) => a.localeCompare(b))) {
    hash.update(name).update('\0').update(JSON.stringify(z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }))).update('\0');
  }
  return { version: entry.version, sha256: hash.digest('hex') };
}

export const UPDATE_COMMAND = 'SHOAL_UPDATE_FINGERPRINTS=1 npx vitest run test/unit/schemaFingerprints.test.ts';

/** What is wrong between the committed fingerprint and the schemas now; null when they agree. */
export function fingerprintProblem(name: string, entry: VersionedSchemas, committed: Fingerprint | undefined): string | null {
  const now = fingerprintOf(entry);
  if (!committed) return `The ${name} schemas have no committed fingerprint: add it with ${UPDATE_COMMAND}.`;
  if (committed.sha256 === now.sha256 && committed.version === now.version) return null;
  if (committed.sha256 !== now.sha256 && committed.version === now.version) {
    return `The ${name} schemas changed but ${entry.versionName} is still ${now.version}: bump ${entry.versionName.split(' ')[0]} (records: with an upgrade from ${now.version}) and update the fingerprint with ${UPDATE_COMMAND}.`;
  }
  return `${entry.versionName} is ${now.version} but the committed fingerprint of the ${name} schemas is of version ${committed.version}: update the fingerprint with ${UPDATE_COMMAND}.`;
}
