// cut: an SSE response stops being forwarded after `after_chunks` events; the client's socket stays open, so
// only its own watchdog ends the wait. Upstream is still drained, so its connection goes back to the pool.
import type { HopFault } from '../config/index.js';
import type { HopFaultModule } from './fault.js';
import { SseCutter } from './sse-cut.js';

export function cutFault(f: Extract<HopFault, { kind: 'cut' }>): HopFaultModule {
  return {
    kind: 'cut',
    body: (conn, nth, streaming, tools) => {
      if (!streaming) return null;
      const cutter = new SseCutter(f.after_chunks);
      let fired = false;
      const fire = (): void => {
        if (fired) return;
        fired = true;
        tools.fire('cut', conn, nth, `stopped forwarding after ${f.after_chunks} SSE events (socket kept open)`);
      };
      return {
        data: (chunk, pass) => {
          if (cutter.done) return;
          const part = cutter.take(chunk);
          if (part.length > 0) pass(Buffer.from(part.buffer, part.byteOffset, part.length));
          if (cutter.done) fire();
        },
        end: () => {
          if (!cutter.done) return true;
          fire();
          return false;
        },
      };
    },
  };
}
