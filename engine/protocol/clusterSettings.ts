import { z } from 'zod';

/**
 * What a cluster sets for every host besides the hosts themselves: where Shoal keeps its files there
 * (`remoteDir`), commands run on each host at every deploy (`setup`, as Ray's setup_commands), and
 * environment variables every process Shoal starts there gets (`env`, as DeepSpeed's .deepspeed_env).
 * Stored in clusters.json in plain text and shown in progress and errors: none of it is secret.
 */

export const DEFAULT_REMOTE_DIR = '~/.shoal';

/**
 * `~/…` (under the login's $HOME) or an absolute path. The characters are those of ordinary paths, so
 * the folder can be written into sh scripts and SFTP paths without surprises.
 */
export const RemoteDirSchema = z
  .string()
  .trim()
  .min(1)
  .max(500)
  .transform((d) => (d.length > 1 ? d.replace(/\/+$/, '') : d))
  .refine((d) => d.startsWith('~/') || d.startsWith('/'), 'the remote directory must start with ~/ (under the home directory) or / (an absolute path), e.g. ~/.shoal or /scratch/$USER-shoal written out')
  .refine((d) => d !== '/' && d !== '~', 'the remote directory must be a folder of its own, not / or ~ itself')
  .refine((d) => /^~?[A-Za-z0-9._+@%=,:/-]*$/.test(d), 'the remote directory may contain letters, digits and . _ + @ % = , : / - (no spaces, quotes or $)')
  .refine((d) => !d.split('/').some((part) => part === '..' || part === '.'), 'the remote directory may not contain . or .. segments');

/** Names Shoal sets itself (SHOAL_*, NODE_PATH) or that a session depends on (HOME). */
const RESERVED_ENV = /^(SHOAL_.*|NODE_PATH|HOME)$/;

export const EnvNameSchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name uses letters, digits and _ and does not start with a digit')
  .max(200)
  .refine((n) => !RESERVED_ENV.test(n), 'SHOAL_*, NODE_PATH and HOME are set by Shoal; choose another name');

// Names are checked here rather than as the record's key schema, so that an error says what is wrong with the name.
export const EnvSchema = z
  .record(z.string(), z.string().max(4096, 'an environment value is at most 4096 characters').refine((v) => !v.includes('\0'), 'an environment value cannot contain a NUL character'))
  .superRefine((env, ctx) => {
    for (const name of Object.keys(env)) {
      const checked = EnvNameSchema.safeParse(name);
      if (!checked.success) ctx.addIssue({ code: 'custom', path: [name], message: checked.error.issues[0].message });
    }
  })
  .refine((env) => Object.keys(env).length <= 64, 'at most 64 environment variables');

export const SetupCommandSchema = z
  .string()
  .trim()
  .min(1, 'a setup command cannot be empty')
  .max(4000, 'a setup command is at most 4000 characters')
  .refine((c) => !c.includes('\0'), 'a setup command cannot contain a NUL character');

export const ClusterSettingsSchema = z.object({
  /** Where Shoal keeps agents, uploads, jobs and runs on every host; default ~/.shoal. */
  remoteDir: RemoteDirSchema.optional(),
  /** Shell commands run in order on every host at every deploy, each in its own `sh` from $HOME. */
  setup: z.array(SetupCommandSchema).max(32, 'at most 32 setup commands').optional(),
  /** Literal values (no $ expansion) exported to setup commands and to every process on the hosts. */
  env: EnvSchema.optional(),
});
export type ClusterSettings = z.infer<typeof ClusterSettingsSchema>;

/** `NAME=value` as given to --env, checked; an error says what is wrong with which one. */
export function parseEnvAssignment(text: string): [string, string] {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new Error(`--env "${text}" is not NAME=value (e.g. --env OMP_NUM_THREADS=4).`);
  const [name, value] = [text.slice(0, eq), text.slice(eq + 1)];
  const parsed = EnvSchema.safeParse({ [name]: value });
  if (!parsed.success) throw new Error(`--env ${name}: ${parsed.error.issues[0].message}.`);
  return [name, value];
}
