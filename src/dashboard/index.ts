// The live dashboard of a run (`roundload run --dashboard [host:]port`): a page on loopback fed by
// server-sent events from the run's event stream, which becomes the run's report.html when it ends.
export { startDashboard, type Dashboard, type DashboardOptions } from './server.js';
export { parseDashboardAddress, isLoopback, type DashboardAddress } from './address.js';
export { DashboardState, MAX_LIVE_POINTS, MAX_LIVE_HANGS, type DashboardPlan, type DashboardSnapshot, type LiveHang, type LiveTarget } from './state.js';
