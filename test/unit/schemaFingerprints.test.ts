import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fingerprintOf, fingerprintProblem, VERSIONED, type Fingerprint } from '../support/schemaFingerprints.js';

/** A wire or record schema changed without its version: this test names the constant to bump. */
const FILE = new URL('./schemaFingerprints.json', import.meta.url);
const committed = JSON.parse(readFileSync(FILE, 'utf8')) as Record<string, Fingerprint>;

describe('schema fingerprints', () => {
  if (process.env.SHOAL_UPDATE_FINGERPRINTS) {
    const now = Object.fromEntries(Object.entries(VERSIONED).map(([name, entry]) => [name, fingerprintOf(entry)]));
    writeFileSync(FILE, JSON.stringify(now, null, 2) + '\n');
    Object.assign(committed, now);
  }

  it.each(Object.keys(VERSIONED))('the %s schemas match their committed fingerprint and version', (name) => {
    expect(fingerprintProblem(name, VERSIONED[name], committed[name])).toBeNull();
  });

  it('lists no fingerprint for schemas that are gone', () => {
    expect(Object.keys(committed).sort()).toEqual(Object.keys(VERSIONED).sort());
  });

  it('a changed schema without a new version fails, naming the constant to bump', () => {
    const run = VERSIONED.run;
    const changed = { ...run, schemas: Object.fromEntries(Object.entries(run.schemas).map(([k, s]) => [k, (s as z.ZodObject).extend({ extra: z.string() })])) };
    expect(fingerprintProblem('run', changed, committed.run)).toMatch(new RegExp(`^The run schemas changed but RUN_RECORD_VERSION \\(engine/node/jobs/runRecord\\.ts\\) is still ${run.version}: bump RUN_RECORD_VERSION .*SHOAL_UPDATE_FINGERPRINTS=1`));
    // A refinement's limit is part of what readers rely on, too.
    const wire = VERSIONED.wire;
    const stricter = { ...wire, schemas: { ...wire.schemas, AgentConfigSchema: (wire.schemas.AgentConfigSchema as z.ZodObject).extend({ secret: z.string().min(64) }) } };
    expect(fingerprintProblem('wire', stricter, committed.wire)).toMatch(/bump PROTOCOL_VERSION/);
    // A bumped version with the old fingerprint asks for the fingerprint to be updated.
    expect(fingerprintProblem('run', { ...changed, version: run.version + 1 }, committed.run)).toMatch(/update the fingerprint/);
  });
});
