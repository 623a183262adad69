// Every error roundload raises: one base class, one subclass per failure family, each with a stable `code`.
// Only cli.ts maps these to exit codes; docs/errors.md lists every code.

/** Fields every roundload error may carry to explain itself. */
export interface ErrorContext {
  [key: string]: unknown;
}

export class RoundloadError extends Error {
  /** Stable machine-readable code, e.g. `ERR_WORKLOAD`. */
  readonly code: string;
  /** Exit code the CLI uses when this error ends a command. */
  readonly exitCode: number;
  readonly context: ErrorContext;

  constructor(code: string, message: string, options: { exitCode?: number; context?: ErrorContext; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.exitCode = options.exitCode ?? 1;
    this.context = options.context ?? {};
  }
}

/** One located problem in a workload file or an override. */
export interface WorkloadIssue {
  /** Where: `file:line:col`, or `--set key` for an override. */
  where: string;
  /** Dotted key path, e.g. `agents.count`. */
  field: string;
  message: string;
}

/** The workload file (or an override of it) is wrong. Exit 2.
 * The message is the whole report the CLI prints: `invalid workload <file>:` then one line per issue,
 * `  <where>  <field>  <message>` (the field is left out when an issue has none, e.g. a YAML syntax error). */
export class WorkloadError extends RoundloadError {
  readonly issues: readonly WorkloadIssue[];
  /** The workload file, when the problems are in (or on top of) one. */
  readonly file: string | undefined;
  /** @param options.what the kind of file, for the head line. @default "workload" (an ab file says `ab file`) */
  constructor(issues: readonly WorkloadIssue[], options: { file?: string; cause?: unknown; what?: string } = {}) {
    const lines = issues.map((i) => `  ${i.where}  ${i.field ? `${i.field}  ` : ''}${i.message}`);
    const what = options.what ?? 'workload';
    const head = options.file === undefined ? `invalid ${what}:` : `invalid ${what} ${options.file}:`;
    super('ERR_WORKLOAD', [head, ...lines].join('\n'), {
      exitCode: 2,
      context: { issues, ...(options.file === undefined ? {} : { file: options.file }) },
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    });
    this.issues = issues;
    this.file = options.file;
  }
}

/** The command line is wrong (bad flag value, missing file). Exit 2. */
export class UsageError extends RoundloadError {
  constructor(message: string, options: { context?: ErrorContext; cause?: unknown } = {}) {
    super('ERR_USAGE', message, { exitCode: 2, ...options });
  }
}

/** The target did not answer the start-up check. Exit 3. */
export class TargetUnreachableError extends RoundloadError {
  constructor(url: string, options: { cause?: unknown; detail?: string } = {}) {
    super('ERR_TARGET_UNREACHABLE', `target ${url} is unreachable${options.detail ? `: ${options.detail}` : ''}; check --target, the network path and that the server is up`, {
      exitCode: 3,
      context: { url },
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    });
  }
}

/** The preflight chat request failed (a wrong path, key or model, an HTTP error, a proxy that is down or
 * refuses, no answer within the watchdog's deadlines). Exit 3. The message holds the URL, the HTTP status,
 * the server's own message and what to change. */
export class PreflightError extends RoundloadError {
  constructor(message: string, options: { cause?: unknown; context?: ErrorContext } = {}) {
    super('ERR_PREFLIGHT', message, { exitCode: 3, ...options });
  }
}

/** A folder given to `report`, `compare` or `merge` is not a run it can use: missing, not a roundload results
 * folder, a run.json that is not a manifest, shards of different runs. Exit 2 (fix the arguments). */
export class NotARunError extends RoundloadError {
  constructor(message: string, options: { context?: ErrorContext; cause?: unknown } = {}) {
    super('ERR_NOT_A_RUN', message, { exitCode: 2, ...options });
  }
}

/** The file system refused a results file or folder: read-only, permission denied, a file where a folder
 * should be, no space left. Carries the path and the OS reason. Exit 4 (fix the volume, or pick another --out). */
export class ResultsError extends RoundloadError {
  /** The file or folder that could not be read or written. */
  readonly path: string;
  /** What was attempted, e.g. `write`. */
  readonly doing: string;
  /** The OS reason in words. */
  readonly reason: string;
  readonly hint: string | null;
  /** The OS error code (`ENOSPC`, `EACCES`, `EROFS`, `ENOTDIR`…), or null when there is none. */
  readonly osCode: string | null;
  /**
   * @param doing what was attempted, as a verb phrase: `create the results folder`, `write`, `read`.
   * @param reason the OS reason in words, e.g. `no space left on device (ENOSPC)`.
   * @param hint what to do about it.
   */
  constructor(path: string, doing: string, reason: string, options: { osCode?: string | null; hint?: string; cause?: unknown } = {}) {
    super('ERR_RESULTS', `cannot ${doing} ${path}: ${reason}${options.hint === undefined ? '' : `; ${options.hint}`}`, {
      exitCode: 4,
      context: { path, os_code: options.osCode ?? null },
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    });
    this.path = path;
    this.doing = doing;
    this.reason = reason;
    this.hint = options.hint ?? null;
    this.osCode = options.osCode ?? null;
  }
}

/** A server we started (engine, hop, the client metrics endpoint) could not listen: the message names the
 * address and the OS reason. Exit 2: the address asked for cannot be used, pick another. */
export class ServerStartError extends RoundloadError {
  /** `host:port` as asked for. */
  readonly address: string;
  /** @param what the server, e.g. `the engine`. */
  constructor(what: string, address: string, options: { cause?: unknown; context?: ErrorContext } = {}) {
    super('ERR_SERVER_START', `could not start ${what} on ${address}: ${listenReason(options.cause)}`, { exitCode: 2, ...options, context: { address, ...options.context } });
    this.address = address;
  }
}

/** `listen` failures in words, with what to do. */
function listenReason(cause: unknown): string {
  const code = (cause as { code?: unknown } | null)?.code;
  if (code === 'EADDRINUSE') return 'the address is already in use (EADDRINUSE); pick another port, or stop what listens there';
  if (code === 'EACCES') return 'permission denied (EACCES); ports below 1024 need privileges, pick a port ≥ 1024';
  if (code === 'EADDRNOTAVAIL') return 'no such address on this machine (EADDRNOTAVAIL); listen on 127.0.0.1 or an address of this host';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `the host name does not resolve (${String(code)})`;
  if (cause instanceof Error) return typeof code === 'string' ? `${cause.message} (${code})` : cause.message;
  return String(cause);
}

/** `compare`/`ab` refused to compare runs of different workloads (without --force). Exit 2. */
export class DifferentWorkloadsError extends RoundloadError {
  /** Where the workloads differ, e.g. `agents.count: 4 vs 8`. */
  readonly differences: readonly string[];
  constructor(message: string, differences: readonly string[]) {
    super('ERR_DIFFERENT_WORKLOADS', message, { exitCode: 2, context: { differences } });
    this.differences = differences;
  }
}

/** An A/B run could not go on: an arm's setup or teardown command failed, or its health check timed out. Exit 1. */
export class ArmError extends RoundloadError {
  constructor(message: string, options: { context?: ErrorContext; cause?: unknown } = {}) {
    super('ERR_ARM', message, { exitCode: 1, ...options });
  }
}

/** A trace file (`roundload record`, `trace import`, `run --replay`) cannot be read or converted. Exit 2. */
export class TraceError extends RoundloadError {
  constructor(message: string, options: { context?: ErrorContext; cause?: unknown } = {}) {
    super('ERR_TRACE', message, { exitCode: 2, ...options });
  }
}

/** A history database (`--history`, `roundload history`, `roundload trend`) cannot be used: missing, not a
 * roundload history file, made by a newer roundload, or a run id it does not hold. Exit 2 (fix the argument). */
export class HistoryError extends RoundloadError {
  constructor(message: string, options: { context?: ErrorContext; cause?: unknown } = {}) {
    super('ERR_HISTORY', message, { exitCode: 2, ...options });
  }
}

/** `roundload repro` was given a run with nothing to reproduce: no hang or error in it, or a `--connection` that
 * carried none (or that the run never used). Exit 2 (pick another run or connection). */
export class NoFailureError extends RoundloadError {
  constructor(message: string, options: { context?: ErrorContext } = {}) {
    super('ERR_NO_FAILURE', message, { exitCode: 2, ...options });
  }
}

/** A record of a results folder that `repro`, `report`, `rebuild` or `merge` read breaks its rules: an id, a
 * time or a class that is not what roundload writes (a hand-edited or hostile file). Located: the file, the
 * 1-based line (0 for a JSON file such as run.json) and the field. Never pasted anywhere. Exit 2. */
export class RecordError extends RoundloadError {
  constructor(file: string, line: number, field: string, problem: string) {
    super('ERR_RECORD', `${file}${line > 0 ? `:${line}` : ''}: ${field} ${problem}; roundload wrote no such record (was the file edited?)`, { exitCode: 2, context: { file, line, field } });
  }
}

/** A remote-write push failed: unreachable, no answer in time, or a status other than 2xx (`status`). Never a
 * run's failure: the export counts it, warns, and retries it when `retryable` (network, timeout, 5xx, 429). */
export class RemoteWriteError extends RoundloadError {
  /** The receiver's HTTP status; undefined when there was no answer. */
  readonly status: number | undefined;
  /** Worth sending again later; a 4xx other than 429 (`400 out of order`, `401`) is not. */
  readonly retryable: boolean;
  constructor(message: string, options: { status?: number; retryable: boolean; cause?: unknown }) {
    super('ERR_REMOTE_WRITE', message, {
      exitCode: 1,
      context: { status: options.status, retryable: options.retryable },
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    });
    this.status = options.status;
    this.retryable = options.retryable;
  }
}
