#!/usr/bin/env node
// The command line: commander wiring only. Commands live in commands/; this file alone maps errors to
// exit codes (0 ok, 1 hangs/thresholds/no ok request, 2 usage, workload or a folder that is not a run, 3 target
// unreachable or preflight failed, 4 the results folder cannot be written or read: read-only, permission, full
// disk; 130 interrupted).
import { Command, CommanderError } from 'commander';
import { RoundloadError } from './errors.js';
import { VERSION } from './version.js';
import { guardTerminal, oneLine } from './util/index.js';
import * as flag from './commands/flags.js';
import type { RecordCommandOptions, RunCommandOptions, HistoryLsOptions, TrendCommandOptions, ProbePathCommandOptions, ShrinkCommandOptions, ReproCommandOptions } from './commands/index.js';

// Each command's module is imported when its command runs, not before: `roundload run` never loads what
// compare, history or the hop need (start-up time is part of every run; bench/README.md, "startup").
const commands = {
  run: () => import('./commands/run.js'),
  engine: () => import('./commands/engine.js'),
  validate: () => import('./commands/validate.js'),
  compare: () => import('./commands/compare.js'),
  ab: () => import('./commands/ab.js'),
  merge: () => import('./commands/merge.js'),
  report: () => import('./commands/report.js'),
  hop: () => import('./commands/hop.js'),
  record: () => import('./commands/record.js'),
  trace: () => import('./commands/trace.js'),
  history: () => import('./commands/history.js'),
  trend: () => import('./commands/trend.js'),
  probePath: () => import('./commands/probe-path.js'),
  shrink: () => import('./commands/shrink.js'),
  repro: () => import('./commands/repro.js'),
};

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** commander's `error: unknown option '--agnets'\n(Did you mean --agents?)` as one line: `roundload: unknown option '--agnets' (did you mean --agents?)`. */
export function usageErrorLine(message: string): string {
  const flat = message
    .replace(/\s*\n\s*/g, ' ')
    .trim()
    .replace(/^error: /, '')
    .replace(/\(Did you mean/, '(did you mean');
  return `roundload: ${flat}\n`;
}

/** The command line's whole surface: the program's own options, then one definer per command, each a commander
 * table read top to bottom whose action is one line into its command's module. */
function program(): Command {
  const cli = new Command('roundload')
    .description('Reproduce the load of multi-round, tool-calling AI agents against an LLM deployment, and catch what goes wrong.')
    .version(VERSION)
    .option('--debug', 'print stack traces on errors')
    // A usage error is one line and where to read more, not the whole help page scrolling it away
    // (subcommands inherit this output setting; their own hints are set by ownHelpHints at the end).
    .configureOutput({ outputError: (message, write) => write(usageErrorLine(message)) })
    .showHelpAfterError('see roundload --help')
    .exitOverride();

  defineRun(cli);
  defineEngine(cli);
  defineHop(cli);
  defineRecord(cli);
  defineTrace(cli);
  defineValidate(cli);
  defineReport(cli);
  defineMerge(cli);
  defineCompare(cli);
  defineAb(cli);
  defineHistory(cli);
  defineTrend(cli);
  defineProbePath(cli);
  defineRepro(cli);
  defineShrink(cli);
  ownHelpHints(cli, 'roundload');
  return cli;
}

function defineRun(cli: Command): void {
  cli
    .command('run')
    .description('run a workload (no target anywhere: starts the embedded engine on 127.0.0.1)')
    .argument('<workload>', 'workload YAML file')
    .option('--target <url>', 'base URL of the server (overrides target.url)')
    .option('--via <hop|url>', '"hop": through the built-in TLS hop; a URL: through that HTTP CONNECT proxy (overrides target.via)')
    .option('--agents <n>', 'number of agents (overrides agents.count)')
    .option('--rounds <n>', 'rounds per conversation (overrides agents.rounds)')
    .option('--out <dir>', 'results folder (default results/<stamp>-<name>/)')
    .option('--label <k=v>', 'label the run (repeatable)', collect, [])
    .option('--set <path=value>', 'override any workload field, e.g. --set watchdog.stall_ms=5000 (repeatable)', collect, [])
    .option('--json', 'print summary.json to stdout instead of the table')
    .option('--duration <time>', 'run for this long (30m, 8h), agents starting fresh conversations (overrides duration)')
    .option('--shard <i/N>', 'run shard i (0-based) of N: agents i, i+N, … (merge the shards with `roundload merge`)')
    .option('--metrics-port <port>', "serve roundload's own Prometheus metrics on 127.0.0.1:PORT/metrics during the run (overrides client_metrics.port)")
    .option('--metrics-host <host>', 'address the metrics endpoint listens on, e.g. 0.0.0.0 in a pod (default 127.0.0.1; overrides client_metrics.host)')
    .option('--metrics-linger <seconds>', 'keep the metrics endpoint up this long after the run for a last scrape (at most 300; overrides client_metrics.linger_s)')
    .option('--remote-write <url>', "push the run's series to this Prometheus remote-write URL while it goes and at its end (overrides client_metrics.remote_write_url)")
    .option('--trace-url <template>', 'make trace ids links in report.html and the dashboard, e.g. https://tempo.example/trace/{trace_id} (overrides tracing.trace_url)')
    .option('--otlp-endpoint <url>', "export the run's spans to this OTLP/HTTP receiver, /v1/traces appended (overrides tracing.otlp.endpoint and OTEL_EXPORTER_OTLP_ENDPOINT)")
    .option('--otlp-traces-endpoint <url>', 'the full OTLP traces URL, taken as is (overrides tracing.otlp.traces_endpoint and OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)')
    .option('--otlp-protocol <protocol>', 'http/protobuf (default) or http/json (overrides tracing.otlp.protocol and OTEL_EXPORTER_OTLP_PROTOCOL)')
    .option('--progress <time>', 'time between progress lines on stderr (default 10s; 1s on a terminal, where it is one live line)')
    .option('--quiet', 'no progress lines, live line or announcements on stderr (the summary still says everything)')
    .option('--dashboard <[host:]port>', 'serve a live dashboard on 127.0.0.1:PORT during the run (0: any free port); it becomes report.html at the end')
    .option('--dashboard-expose', 'allow --dashboard on a host other than loopback (the page has no authentication)')
    .option('--no-preflight', 'skip the test chat request (and model check) before the agents start')
    .option('--replay <trace>', 'replay a recorded trace (roundload record) instead of generating conversations (sets replay.file)')
    .option('--history <file>', 'append the run to this history database (SQLite; created when missing) once summary.json is written (sets results.history)')
    .action(async (file: string, opts: RunCommandOptions) => {
      process.exitCode = await (await commands.run()).runCommand(file, opts, process.argv.slice(2));
    });
}

function defineEngine(cli: Command): void {
  cli
    .command('engine')
    .description('run the embedded deployment standalone: SGLang PD in miniature (router, prefill, decode) or one server')
    .option('--host <host>', 'address every server listens on', '127.0.0.1')
    .option('--port <port>', 'entry port (the router in pd, the engine in single)', '30000')
    .option('--topology <pd|single>', "pd (router, prefill, decode) or single (one unified server); default: the settings' topology, pd")
    .option('--prefill-port <port>', "pd: the prefill server's port (default: any free one)")
    .option('--decode-port <port>', "pd: the decode server's port (default: any free one)")
    .option('--router-metrics-port <port>', "pd: the router's Prometheus port (default: any free one, printed; a real sgl-router's is 29000)")
    .option('--log-dir <dir>', "folder of the servers' log files (default: a fresh folder under the temp dir, removed on exit)")
    .option('--settings <file>', "YAML file with engine settings (the workload's engine: section)")
    .option('--faults <file>', 'YAML list of engine faults to inject (docs/engine.md, "Faults")')
    .option('--enable-trace', "record each request's router, prefill and decode spans, parented on its traceparent, and export them over OTLP/HTTP (SGLang's --enable-trace)")
    .option(
      '--otlp-traces-endpoint <url>',
      'with --enable-trace: the OTLP/HTTP traces URL, or host:port for http://host:port/v1/traces (default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT)',
    )
    .action(
      async (opts: {
        host: string;
        port: string;
        topology?: string;
        prefillPort?: string;
        decodePort?: string;
        routerMetricsPort?: string;
        logDir?: string;
        settings?: string;
        faults?: string;
        enableTrace?: boolean;
        otlpTracesEndpoint?: string;
      }) => {
        await (
          await commands.engine()
        ).engineCommand({
          host: opts.host,
          port: flag.port('--port', opts.port),
          ...(opts.topology === undefined ? {} : { topology: opts.topology }),
          ...(opts.prefillPort === undefined ? {} : { prefillPort: flag.port('--prefill-port', opts.prefillPort) }),
          ...(opts.decodePort === undefined ? {} : { decodePort: flag.port('--decode-port', opts.decodePort) }),
          ...(opts.routerMetricsPort === undefined ? {} : { routerMetricsPort: flag.port('--router-metrics-port', opts.routerMetricsPort) }),
          ...(opts.logDir === undefined ? {} : { logDir: opts.logDir }),
          ...(opts.settings === undefined ? {} : { settingsFile: opts.settings }),
          ...(opts.faults === undefined ? {} : { faultsFile: opts.faults }),
          ...(opts.enableTrace === true ? { enableTrace: true } : {}),
          ...(opts.otlpTracesEndpoint === undefined ? {} : { otlpTracesEndpoint: opts.otlpTracesEndpoint }),
        });
      },
    );
}

function defineHop(cli: Command): void {
  cli
    .command('hop')
    .description('run the built-in TLS hop (a streaming reverse proxy with faults) in front of an upstream; prints its CA file')
    .requiredOption('--upstream <url>', 'where requests are forwarded (the engine or router), http:// or https://')
    .option('--listen <host:port>', 'address to listen on', '127.0.0.1:8443')
    .option(
      '--fault <spec>',
      'inject a fault, kind:key=value,… e.g. stall:after_requests=3, cut:after_chunks=5, buffer, idle_close:after_s=2,mode=silent, reset:ratio=0.2, latency:ms=200 (repeatable)',
      collect,
      [],
    )
    .option('--listen-expose', 'allow --listen on a host other than loopback (the hop has no authentication)')
    .option('--cert-dir <dir>', 'write the CA and certificate here (a CA already there is reused); default a temporary folder removed on exit')
    .option('--verbose', 'print every fault as it acts')
    .action(async (opts: { upstream: string; listen: string; listenExpose?: boolean; fault: string[]; certDir?: string; verbose?: boolean }) => {
      await (await commands.hop()).hopCommand(opts);
    });
}

function defineRecord(cli: Command): void {
  cli
    .command('record')
    .description('a recording proxy in front of the router: point your harness at it; every chat request is forwarded unchanged and its shape (no text unless --content) appended to a trace')
    .requiredOption('--upstream <url>', 'where requests are forwarded (the router), http:// or https://')
    .requiredOption('--out <trace>', 'the trace file to write (JSONL; must be new)')
    .option('--listen <host:port>', 'address to listen on', '127.0.0.1:8443')
    .option('--listen-expose', 'allow --listen on a host other than loopback (the recorder has no authentication)')
    .option('--tls', 'listen with TLS, with a CA made at start (printed; the harness must trust it)')
    .option('--cert-dir <dir>', 'with TLS: write the CA and certificate here (a CA already there is reused); implies --tls')
    .option('--content', 'also keep message and tool contents, so a replay sends them verbatim (the trace then holds your prompts)')
    .option('--session-header <name>', 'a request header naming the conversation (e.g. X-Session-Id), instead of inferring it from message histories')
    .option('--upstream-ca <file>', 'PEM file of a CA to trust for an https upstream')
    .option('--upstream-insecure', "do not verify an https upstream's certificate")
    .option('--verbose', 'print a line per recorded request')
    .action(async (opts: RecordCommandOptions) => {
      await (await commands.record()).recordCommand(opts);
    });
}

function defineTrace(cli: Command): void {
  const trace = cli.command('trace').description('look at a trace, or make one from another format');
  trace
    .command('show')
    .description('what a trace holds: conversations, rounds, sizes, think-time and idle-gap distributions, connections, errors')
    .argument('<trace>', 'trace file (roundload record or trace import)')
    .option('--json', 'print the figures as JSON')
    .action(async (file: string, opts: { json?: boolean }) => {
      (await commands.trace()).traceShowCommand(file, opts);
    });
  trace
    .command('import')
    .description('convert OpenAI-format request logs (JSONL of {messages: …} or {request, response}) or a Mooncake trace into a roundload trace')
    .argument('<file>', 'the file to convert')
    .requiredOption('--format <openai|mooncake>', 'the input format')
    .requiredOption('--out <trace>', 'the trace file to write (must be new)')
    .option('--content', 'openai: keep message contents (the replay sends them verbatim)')
    .option('--think-ms <ms>', "openai logs without timestamps: think time between a conversation's rounds", '1000')
    .option('--block-tokens <n>', 'mooncake: tokens per hash_ids block', '512')
    .action(async (file: string, opts: { format: string; out: string; content?: boolean; thinkMs?: string; blockTokens?: string }) => {
      (await commands.trace()).traceImportCommand(file, opts);
    });
}

function defineValidate(cli: Command): void {
  cli
    .command('validate')
    .description('check a workload file or an ab file (as `roundload ab` reads it): exit 0, or 2 with every problem located')
    .argument('<file>', 'workload or ab YAML file')
    .option('--set <path=value>', 'apply an override to a workload first (repeatable)', collect, [])
    .option('--json', "print the resolved workload (an ab file: each arm's) as JSON")
    .action(async (file: string, opts: { set: string[]; json?: boolean }) => {
      await (await commands.validate()).validateCommand(file, { set: opts.set, ...(opts.json === undefined ? {} : { json: opts.json }) });
    });
}

function defineReport(cli: Command): void {
  cli
    .command('report')
    .description("rebuild summary.json, report.html and junit.xml from a results folder (also a killed run's)")
    .argument('<run>', 'results folder of a run')
    .option('--json', 'print the rebuilt summary.json to stdout')
    .option('--trace-url <template>', "make trace ids links in report.html, e.g. https://tempo.example/trace/{trace_id} (default: the run's tracing.trace_url)")
    .action(async (dir: string, opts: { json?: boolean; traceUrl?: string }) => {
      process.exitCode = await (await commands.report()).reportCommand(dir, { json: opts.json, traceUrl: opts.traceUrl });
    });
}

function defineMerge(cli: Command): void {
  cli
    .command('merge')
    .description('merge the shards of one run (roundload run --shard i/N on several machines) into one results folder')
    .argument('<runs...>', 'results folders of the shards')
    .requiredOption('--out <dir>', 'the merged results folder (must be new or empty)')
    .option('--json', 'print the merged summary.json to stdout instead of the table')
    .option('--history <file>', 'append the merged run to this history database (docs/history.md)')
    .action(async (dirs: string[], opts: { out: string; json?: boolean; history?: string }) => {
      process.exitCode = await (await commands.merge()).mergeCommand(dirs, opts);
    });
}

function defineCompare(cli: Command): void {
  cli
    .command('compare')
    .description(
      'compare runs with runs as the unit: per phase, each run one value per figure, B vs A across runs (paired when they alternated, Welch otherwise) with 95% intervals and a call (better, worse, equivalent, inconclusive); writes compare.html and compare.json',
    )
    .argument('<runs...>', 'results folders: A first, then each B (join repeats with commas: a,b,c)')
    .option('--force', 'compare even when the runs are of different workloads')
    .option('--out <file>', 'where to write compare.html (compare.json goes beside it)', 'compare.html')
    .option('--min-effect <pct>', 'smallest difference that matters, % of A (default 3)')
    .option('--min-effect-points <pt>', 'smallest difference in a rate (errors+hangs) that matters, in points (default 1)')
    .option('--json', 'print compare.json to stdout instead of the table')
    .action(async (runs: string[], opts: { force?: boolean; out: string; minEffect?: string; minEffectPoints?: string; json?: boolean }) => {
      process.exitCode = await (await commands.compare()).compareCommand(runs, opts);
    });
}

function defineAb(cli: Command): void {
  cli
    .command('ab')
    .description(
      'run the arms of an ab file alternately (A B, B A …), one results folder per run, judging every arm against the first with runs as the unit: pairs until each figure is decided (the stopping rule), or exactly repeats pairs',
    )
    .argument('<ab-file>', 'ab YAML file (base workload, arms, until or repeats)')
    .option('--out <dir>', 'parent folder of the arm runs (default results/<stamp>-ab-<name>/)')
    .option('--force', 'run even when an arm changes the load itself (its set touches more than the server)')
    .option('--fail-on <verdict>', 'exit 1 when a figure of any arm ends worse (only "worse")')
    .option('--plan [ab-dir]', 'do not run the A/B: say how many pairs and how long its stopping rule needs, from an earlier A/B folder or a short pilot run now')
    .option('--pilot-pairs <n>', 'pairs of the --plan pilot (2 to 10, default 2)')
    .action(async (file: string, opts: { out?: string; force?: boolean; failOn?: string; plan?: string | boolean; pilotPairs?: string }) => {
      process.exitCode = await (await commands.ab()).abCommand(file, opts);
    });
}

function defineHistory(cli: Command): void {
  const history = cli.command('history').description('the runs database: list, show, import results folders, export');
  history
    .command('ls')
    .description('list the runs of a history database, oldest first')
    .argument('<file>', 'history database (SQLite)')
    .option('--label <k=v>', 'only runs with this label (repeatable)', collect, [])
    .option('--name <workload>', 'only runs of this workload name')
    .option('--json', 'print the runs as JSON')
    .action(async (file: string, opts: HistoryLsOptions) => {
      process.exitCode = await (await commands.history()).historyLsCommand(file, opts);
    });
  history
    .command('show')
    .description('one run: its fields, figures per phase and round, errors and hangs by class, gauge verdicts, thresholds')
    .argument('<file>', 'history database (SQLite)')
    .argument('<run>', 'run id (or its first characters), the name of its results folder, or a label (commit=d6, or its value alone)')
    .option('--json', 'print the run as JSON')
    .action(async (file: string, run: string, opts: { json?: boolean }) => {
      process.exitCode = await (await commands.history()).historyShowCommand(file, run, opts);
    });
  history
    .command('import')
    .description('add results folders of earlier runs to a history database (created when missing); a run already there is left as it is')
    .argument('<file>', 'history database (SQLite)')
    .argument('<runs...>', 'results folders')
    .action(async (file: string, dirs: string[]) => {
      process.exitCode = await (await commands.history()).historyImportCommand(file, dirs);
    });
  history
    .command('export')
    .description('export the history as CSV: one line per run, phase and round (round 0: the whole phase)')
    .argument('<file>', 'history database (SQLite)')
    .option('--csv', 'CSV (the only format)')
    .option('--out <file>', 'write to this file instead of stdout')
    .action(async (file: string, opts: { csv?: boolean; out?: string }) => {
      process.exitCode = await (await commands.history()).historyExportCommand(file, opts);
    });
}

function defineTrend(cli: Command): void {
  cli
    .command('trend')
    .description('figures of a history run by run: a sparkline and change points per figure (E-divisive means; the newest nights against the level before them); writes trend.html')
    .argument('<file>', 'history database (SQLite), or a CSV of nightly numbers (FILE.csv: workload, run, optional time, a column per figure)')
    .option('--metric <name>', 'a figure to follow, e.g. ttft_p99, itl_p50, output_tok_s (repeatable or comma-separated; default a dozen)', collect, [])
    .option('--phase <name>', 'the phase to follow (default main, else the most common)')
    .option('--label <k=v>', 'only runs with this label (repeatable)', collect, [])
    .option('--name <workload>', "only runs of this workload (default: the newest run's, a CSV's last line's)")
    .option('--all', 'every workload of the file, one table each (one exit code for --fail-on)')
    .option('--fail-on <what>', '"regression": exit 1 when a change point for the worse starts in the newest runs (--recent)')
    .option('--recent <n>', 'how many newest runs --fail-on looks at (default 5)')
    .option('--min-change <share>', 'smallest shift reported, relative to the level before (default 3%)')
    .option('--max-pvalue <p>', 'largest p-value of a change point over the history, E-divisive (default 0.01)')
    .option('--alert-pvalue <p>', 'p-value at which the newest nights are a step: suspected on one night, confirmed on two (default 0.02: false alarms a night and figure)')
    .option('--permutations <n>', 'permutations of the significance test (default 999)')
    .option('--seed <n>', 'seed of the permutations (default 1)')
    .option('--drift <rho>', 'nightly drift to stay quiet under, as an AR(1) lag-1 correlation (default 0.6; 0: nights exchangeable, more power)')
    .option('--name-by <label>', 'the labels that name a run in the output, e.g. commit (repeatable or comma-separated; default all)', collect, [])
    .option('--out <file>', 'where to write trend.html', 'trend.html')
    .option('--json', 'print the change points as JSON instead of the table (the contract in docs/history.md)')
    .action(async (file: string, opts: TrendCommandOptions) => {
      process.exitCode = await (await commands.trend()).trendCommand(file, opts);
    });
}

function defineProbePath(cli: Command): void {
  cli
    .command('probe-path')
    .description('measure a path before a run: idle keep-alive timeout, read timeout of a held response, stream buffering, largest body (each bounded; a table, or --json)')
    .argument('<url>', 'base URL of the server or the proxy in front of it')
    .option('--via <hop|url>', '"hop": through the built-in TLS hop; a URL: through that HTTP CONNECT proxy')
    .option('--ca <file>', 'PEM file of a CA to trust for an https URL (besides the system roots)')
    .option('--insecure', "do not verify the server's certificate")
    .option('--model <name>', 'model to ask for (default: the first /v1/models lists)')
    .option('--max-idle <time>', 'longest idle gap tried (the idle check takes up to twice this)', '75s')
    .option('--max-hold <time>', 'longest a held response is waited for', '60s')
    .option('--skip <checks>', 'leave out checks: idle, read, stream, body (comma-separated, repeatable)', collect, [])
    .option('--json', 'print the measurements as JSON instead of the table')
    .action(async (url: string, opts: ProbePathCommandOptions) => {
      process.exitCode = await (await commands.probePath()).probePathCommand(url, opts);
    });
}

function defineRepro(cli: Command): void {
  cli
    .command('repro')
    .description("write a standalone reproducer of a run's first hang (or error): repro.mjs (Node, no packages), repro.sh (curl), README.txt")
    .argument('<run>', 'results folder of a run with a hang or an error')
    .option('--out <dir>', 'where to write the reproducer (default <run>/repro)')
    .option('--connection <id>', 'replay this recorded connection (connection.id, e.g. c7) instead of the first failing one')
    .action(async (dir: string, opts: ReproCommandOptions) => {
      process.exitCode = await (await commands.repro()).reproCommand(dir, opts);
    });
}

function defineShrink(cli: Command): void {
  cli
    .command('shrink')
    .description('delta-debug a failed run: rerun smaller variants of its workload against the same target and write the smallest that still fails k of k (shrunk.yaml)')
    .argument('<run>', 'results folder of the failed run (its run.json and summary.json)')
    .option('--target <url>', "base URL of the server (default: the run's target.url)")
    .option('--k <n>', 'tries each variant must fail, all of them (a variant stops at its first pass)', '3')
    .option('--max-time <time>', 'time for the whole shrink (10m, 1h); when it runs out, the smallest failing variant so far', '10m')
    .option('--out <dir>', 'folder for shrunk.yaml, shrink.json and variants/ (missing or empty; default <run>/shrink/)')
    .option('--no-keep', "delete each try's results folder once it is judged")
    .option('--set <path=value>', "override a field of the run's workload in every variant (repeatable)", collect, [])
    .action(async (run: string, opts: ShrinkCommandOptions) => {
      process.exitCode = await (await commands.shrink()).shrinkCommand(run, opts);
    });
}

/** Each command's usage error points at its own help (`see roundload history ls --help`), at every depth. */
function ownHelpHints(parent: Command, path: string): void {
  for (const command of parent.commands) {
    const name = `${path} ${command.name()}`;
    command.showHelpAfterError(`see ${name} --help`);
    ownHelpHints(command, name);
  }
}

async function main(): Promise<void> {
  // URL credentials never reach the terminal; a command adds its run's secret values once it knows them.
  guardTerminal();
  const cli = program();
  try {
    await cli.parseAsync(process.argv);
  } catch (error) {
    const debug = cli.opts<{ debug?: boolean }>().debug === true || process.argv.includes('--debug');
    if (error instanceof CommanderError) {
      // commander already printed its message; help and version are not errors.
      process.exitCode = error.exitCode === 0 ? 0 : 2;
      return;
    }
    if (error instanceof RoundloadError) {
      // A message has lines of its own making; what it quotes of a server or a folder was put on one line where it
      // was quoted, and no other break (a carriage return that overwrites the line, NEL, U+2028) or control stays.
      process.stderr.write(`roundload: ${error.message.split('\n').map(oneLine).join('\n')}\n`);
      if (debug && error.stack !== undefined) process.stderr.write(`${error.stack}\n`);
      process.exitCode = error.exitCode;
      return;
    }
    process.stderr.write(`roundload: unexpected error: ${oneLine(error instanceof Error ? error.message : String(error))}\n`);
    if (error instanceof Error && error.stack !== undefined) process.stderr.write(`${error.stack}\n`);
    process.exitCode = 1;
  }
}

void main(); // main() catches and reports every error itself
