import { randomBytes } from 'node:crypto';
import { MAX_RESTARTS, REJOIN_EXIT_CODE, SIGNALLED_EXIT_ABOVE } from '../../plan/restartPolicy.js';
import type { ProcessSpec, ProcessState } from './launcher.js';
import { DEFAULT_REMOTE_DIR, jobDirsScript } from './remotePaths.js';
import { assertPlainName, shQuote } from './shellQuote.js';

/**
 * POSIX sh scripts that start, inspect and stop a job's processes on a host. Every launcher runs the
 * same scripts (locally with `sh -s`, over SSH, or — for Slurm — through `srun … sh -s`), so what a job
 * leaves on a host is the same everywhere (remotePaths.ts; `~/.shoal` is the cluster's remote directory):
 *
 *   ~/.shoal/jobs/<id>/<host>/   temporary: <name>.config (the secret, mode 600), <name>.pid, <name>.exit
 *   ~/.shoal/runs/<id>/          kept: <name>.log, events.jsonl, checkpoints/, profile.json
 *
 * Each host reads, signals and removes only its own `jobs/<id>/<host>/`, so hosts that share the
 * remote directory (one NFS home) never touch each other's processes.
 *
 * Scripts travel on the shell's standard input, never as arguments, because the coordinator's and
 * agents' configurations inside them carry the job secret.
 */

/**
 * The body of the detached `sh -c` that runs one process (see startScript); no single quotes inside.
 * Its restart condition is engine/plan/restartPolicy.ts's `restartsAfterExit`, written in sh.
 */
const SUPERVISOR = [
  'echo $$ > "$1/$2.pid"',
  'export SHOAL_SUPERVISED=1',
  'n=0',
  ': > "$1/$2.out"',
  'while :; do',
  '  SHOAL_RESTART=$n node "$3" "$4" < "$1/$2.config" >> "$1/$2.out" 2>> "$5/$2.log"; c=$?',
  `  if [ $n -lt ${MAX_RESTARTS} ] && { { [ "$4" = agent ] && [ $c -eq ${REJOIN_EXIT_CODE} ]; } || { [ "$4" = coordinator ] && [ $c -gt ${SIGNALLED_EXIT_ABOVE} ]; }; }; then`,
  `    n=$((n+1)); echo "[$2] exited with code $c; starting it again ($n of ${MAX_RESTARTS})" >> "$5/$2.log"; sleep 1`,
  '  else break; fi',
  'done',
  'echo $c > "$1/$2.exit"',
  'rm -f "$1/$2.config"',
].join('\n');

/** Which host's job folder a script works in, under which remote directory (default ~/.shoal). */
export interface JobPlace {
  host: string;
  remoteDir?: string;
}

const dirs = (jobId: string, place: JobPlace) => jobDirsScript(jobId, place.host, place.remoteDir ?? DEFAULT_REMOTE_DIR);

/**
 * A job started by an older Shoal kept its pid files in jobs/<id>/ itself: status, stop and read still
 * find them there when this host has no folder of its own.
 */
const LEGACY = '[ -d "$J" ] || ! ls "$JOB"/*.pid >/dev/null 2>&1 || J="$JOB"';

export interface StartOptions extends JobPlace {
  /** Absolute or relative to $HOME. */
  bundle: string;
  /** Shoal's variables, as shell words evaluated after `$B` (the bundle's path) is set. */
  env?: Record<string, string>;
  /** The cluster's variables: literal values, exported before Shoal's own. */
  clusterEnv?: Record<string, string>;
}

/** `export NAME='value'` lines for literal values (names were checked by the cluster's schema). */
export function exportLines(env: Record<string, string> = {}): string[] {
  return Object.entries(env).map(([k, v]) => `export ${assertEnvName(k)}=${shQuote(v)}`);
}

function assertEnvName(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`"${name}" is not an environment variable name: use letters, digits and _.`);
  return name;
}

/**
 * Start `node <bundle> <role>` detached (setsid: its own session, so the end of the SSH session or of
 * the studio sends it no SIGHUP), its configuration written to a mode-600 file it reads as stdin; the
 * file is removed when the process ends. Prints `pid N`, and for the coordinator `port N` once it listens.
 * `env` values are shell words evaluated after `$B` (the bundle's path) is set, e.g.
 * `"$(dirname "$B")/mnist"`; `clusterEnv` values are literal.
 */
export function startScript(spec: ProcessSpec, o: StartOptions): string {
  const name = assertPlainName(spec.name, 'Process name');
  // A terminator the JSON cannot contain as a line of its own (the JSON is one line starting with `{`).
  const eof = `SHOAL_CONFIG_${randomBytes(8).toString('hex')}`;
  const exports = [...exportLines(o.clusterEnv), ...Object.entries(o.env ?? {}).map(([k, v]) => `export ${assertEnvName(k)}=${v}`), ...exportLines(spec.env)];
  const lines = [
    'set -e',
    'umask 077',
    dirs(spec.jobId, o),
    'mkdir -p "$J" "$R"',
    `B=${shQuote(o.bundle)}; case "$B" in /*) ;; *) B="$HOME/$B" ;; esac`,
    `[ -f "$B" ] || { echo "the agent bundle $B is missing on this host; deploy again to upload it" >&2; exit 3; }`,
    'command -v node >/dev/null 2>&1 || { echo "node is not on the PATH of non-interactive sessions on this host (need Node >= 20)" >&2; exit 3; }',
    `rm -f "$J/${name}.pid" "$J/${name}.exit"`,
    `cat > "$J/${name}.config" <<'${eof}'`,
    JSON.stringify(spec.config),
    eof,
    'cd "$R"',
    ...exports,
    'if command -v setsid >/dev/null 2>&1; then DETACH=setsid; else DETACH=nohup; fi',
    // $1 jobs dir, $2 name, $3 bundle, $4 role, $5 run dir. `echo $$` records the session leader, whose
    // process group holds everything the job started on this host (stop kills the group, this loop
    // included). The loop is a supervisor: a coordinator killed by a signal (SIGKILL, the OOM killer)
    // starts again and resumes from its newest checkpoint; an agent that lost its coordinator exits
    // 75 and starts again to rejoin it (engine/plan/restartPolicy.ts). At most 3 restarts each.
    `$DETACH sh -c '${SUPERVISOR}' sh "$J" ${shQuote(name)} "$B" ${shQuote(spec.role)} "$R" < /dev/null > /dev/null 2>&1 &`,
    `i=0; while [ ! -s "$J/${name}.pid" ]; do i=$((i+1)); [ $i -le 400 ] || { echo "the process did not start within 20 s" >&2; exit 4; }; sleep 0.05; done`,
    `echo "pid $(cat "$J/${name}.pid")"`,
  ];
  if (spec.role === 'coordinator') {
    lines.push(
      `i=0; while ! grep -q '"listening"' "$J/${name}.out" 2>/dev/null; do`,
      `  if [ -f "$J/${name}.exit" ]; then echo "the coordinator exited with code $(cat "$J/${name}.exit") before listening; the end of $R/${name}.log:" >&2; tail -n 20 "$R/${name}.log" >&2; exit 5; fi`,
      `  i=$((i+1)); [ $i -le 1200 ] || { echo "the coordinator did not listen within 60 s; see $R/${name}.log" >&2; exit 5; }; sleep 0.05`,
      'done',
      `sed -n 's/.*"listening":\\([0-9][0-9]*\\).*/port \\1/p' "$J/${name}.out" | head -n 1`,
    );
  }
  return lines.join('\n') + '\n';
}

/** `pid N` and `port N` from startScript's output. */
export function parseStartOutput(stdout: string): { pid?: number; port?: number } {
  const pid = /^pid (\d+)$/m.exec(stdout)?.[1];
  const port = /^port (\d+)$/m.exec(stdout)?.[1];
  return { ...(pid ? { pid: Number(pid) } : {}), ...(port ? { port: Number(port) } : {}) };
}

/** One line per process of the job on this host: `proc <name> <pid> alive|dead [exit code]`, and `present`. */
export function statusScript(jobId: string, place: JobPlace): string {
  return [
    dirs(jobId, place),
    LEGACY,
    '[ -d "$J" ] && echo present',
    'for f in "$J"/*.pid; do',
    '  [ -f "$f" ] || continue',
    '  n=$(basename "$f" .pid); p=$(cat "$f")',
    '  if kill -0 "$p" 2>/dev/null; then s=alive; else s=dead; fi',
    '  echo "proc $n $p $s $(cat "$J/$n.exit" 2>/dev/null)"',
    'done',
    '',
  ].join('\n');
}

export function parseStatusOutput(stdout: string): { present: boolean; processes: ProcessState[] } {
  const processes: ProcessState[] = [];
  for (const m of stdout.matchAll(/^proc (\S+) (\d+) (alive|dead) ?(\d*)$/gm)) {
    processes.push({ name: m[1], pid: Number(m[2]), alive: m[3] === 'alive', ...(m[4] ? { exitCode: Number(m[4]) } : {}) });
  }
  return { present: /^present$/m.test(stdout), processes };
}

/**
 * SIGTERM to each process group of the job on this host (the coordinator's first), SIGKILL to what is left after 3 s (a stopped process
 * ignores TERM), then remove this host's temporary folder (configurations with the secret, pid files). The run
 * folder stays: it holds the logs, the event history and the checkpoints. On the head host, a
 * `stopped` status is appended to the event history so that a later attach shows how the job ended.
 */
export function stopScript(jobId: string, place: JobPlace, markStopped: boolean): string {
  // printf's %s takes `date +%s`: the time in ms, as every event carries it.
  const stopped = JSON.stringify({ type: 'status', state: 'stopped', message: 'stopped with shoal stop', time: 0 }).replace('"time":0', '"time":%s000');
  return [
    dirs(jobId, place),
    LEGACY,
    '[ -d "$J" ] || { echo "absent"; exit 0; }',
    'pids=""; for f in "$J"/*.pid; do [ -f "$f" ] && pids="$pids $(cat "$f")"; done',
    'alive() { for p in $pids; do { kill -0 "-$p" || kill -0 "$p"; } 2>/dev/null && return 0; done; return 1; }',
    'was=no; alive && was=yes',
    // The leader's group when it is a session leader (setsid); the leader itself otherwise (nohup).
    // `kill -TERM -PGID`, not `kill -TERM -- -PGID`: dash's kill takes no `--`.
    'term() { kill -TERM "-$1" 2>/dev/null || kill -TERM "$1" 2>/dev/null || true; }',
    // The coordinator goes first (up to 1 s): were the agents first, it would see them die and record
    // the job as failed (a lost stage) before its own signal arrived.
    'if [ -f "$J/coordinator.pid" ]; then c=$(cat "$J/coordinator.pid"); term "$c"; i=0; while { kill -0 "-$c" || kill -0 "$c"; } 2>/dev/null && [ $i -lt 20 ]; do i=$((i+1)); sleep 0.05; done; fi',
    'for p in $pids; do term "$p"; done',
    'i=0; while alive && [ $i -lt 60 ]; do i=$((i+1)); sleep 0.05; done',
    'for p in $pids; do kill -KILL "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null || true; done',
    ...(markStopped ? [`if [ "$was" = yes ] && [ -f "$R/events.jsonl" ]; then printf '${stopped}\\n' "$(date +%s)" >> "$R/events.jsonl"; fi`] : []),
    // Only this host's folder: another host sharing the remote directory may still be running there.
    'rm -rf "$J"; rmdir "$JOB" 2>/dev/null || true',
    'echo "stopped $was"',
    '',
  ].join('\n');
}

/** `cat` one file of the job; exit 44 when it does not exist. */
export function readScript(jobId: string, place: JobPlace, where: 'run' | 'temp', file: string): string {
  assertPlainName(file, 'File name');
  return [dirs(jobId, place), LEGACY, `F="$${where === 'run' ? 'R' : 'J'}/${file}"`, '[ -f "$F" ] || exit 44', 'cat "$F"', ''].join('\n');
}
