// Politeness toward target hosts (docs/api.md §19): fleet-wide places, start spacing, 429/503 pauses
// and a fair share among users, coordinated through Redis.
export { HostCounts } from './host-counts.ts';
export {
  HostGate,
  HostGateClosedError,
  type HostGateOptions,
  type HostLimits,
  type HostObserver,
  type HostPlace,
} from './host-gate.ts';
