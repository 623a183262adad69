// buffer: the whole response body is held until the upstream response ended, then sent at once (what a
// buffering proxy does to a stream: no token arrives before the last).
import type { HopFaultModule } from './fault.js';

export function bufferFault(): HopFaultModule {
  return {
    kind: 'buffer',
    body: (conn, nth, _streaming, tools) => {
      const held: Buffer[] = [];
      return {
        data: (chunk) => {
          held.push(chunk);
        },
        end: (pass) => {
          tools.fire('buffer', conn, nth, `held ${held.reduce((n, c) => n + c.length, 0)} bytes until the upstream response ended`);
          pass(Buffer.concat(held));
          return true;
        },
      };
    },
  };
}
