// Loaded with `node --import` in front of a command the start-up bench times: at exit, the process's CPU time
// (every thread, user + system) and its wall time since Node started, as one JSON line on stderr.
import { performance } from 'node:perf_hooks';
import process from 'node:process';

process.on('exit', () => {
  const cpu = process.cpuUsage();
  process.stderr.write(`\nCPU-AT-EXIT ${JSON.stringify({ cpu_ms: (cpu.user + cpu.system) / 1000, wall_ms: performance.now() })}\n`);
});
