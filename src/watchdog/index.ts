// Per-request deadlines and the clock they run on.
export { RequestWatch, type Deadlines } from './watch.js';
export { realClock, FakeClock, type Clock } from './clock.js';
