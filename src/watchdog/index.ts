// Per-request deadlines and the clock they run on.
export { RequestWatch, type Deadlines, type HangVerdict } from './watch.js';
export { realClock, FakeClock, type Clock } from './clock.js';
export { backstopTimeouts, BACKSTOP_SLACK_MS } from './backstop.js';
