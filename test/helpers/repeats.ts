// How many times a real-parts scenario runs: once in `npm test` (one real run per behaviour keeps the suite
// within its time), and as many as ROUNDLOAD_TEST_REPEATS says in `npm run test:repeat` (3: the 3-of-3 proof
// that a verdict is not luck; docs/development.md keeps what it gave).
export const REPEATS = Math.max(1, Number.parseInt(process.env.ROUNDLOAD_TEST_REPEATS ?? '1', 10) || 1);

/** `3 of 3` in a test's name, or `once`. */
export const TIMES = REPEATS === 1 ? 'once' : `${REPEATS} of ${REPEATS}`;
