// The live dashboard of a run (`roundload run --dashboard [host:]port`): a page on loopback fed by
// server-sent events from the run's event stream, which becomes the run's report.html when it ends.
export { startDashboard, type Dashboard, type DashboardOptions } from './server.js';
export { parseDashboardAddress, type DashboardAddress } from './address.js';
export { DashboardState, MAX_LIVE_POINTS, MAX_LIVE_HANGS, type DashboardPlan } from './state.js';
