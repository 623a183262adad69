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

/** A results folder cannot be read back (missing, or not a roundload run). Exit 2. */
export class ResultsError extends RoundloadError {
  constructor(message: string, options: { context?: ErrorContext; cause?: unknown } = {}) {
    super('ERR_RESULTS', message, { exitCode: 2, ...options });
  }
}

/** A server we started (engine, hop) could not start. Exit 1. */
export class ServerStartError extends RoundloadError {
  constructor(what: string, options: { cause?: unknown; context?: ErrorContext } = {}) {
    super('ERR_SERVER_START', `could not start ${what}`, { exitCode: 1, ...options });
  }
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
