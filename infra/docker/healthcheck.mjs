// Container health probe for Docker HEALTHCHECK and docker-compose.yml (Kubernetes probes call
// the same endpoints over HTTP). Exits 0 when GET http://127.0.0.1:<port><path> answers 2xx within
// 4 s, 1 otherwise. The port comes from the environment variable the process itself reads, so a
// changed PORT or METRICS_PORT needs no change here.
//
//   node infra/docker/healthcheck.mjs <PORT_VARIABLE> <default port> <path>
//   node infra/docker/healthcheck.mjs PORT 3000 /ready
//   node infra/docker/healthcheck.mjs METRICS_PORT 9100 /ready
const [variable = 'PORT', fallback = '3000', path = '/health'] = process.argv.slice(2);
const port = process.env[variable] || fallback;
try {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(4_000) });
  process.exit(res.ok ? 0 : 1);
} catch {
  process.exit(1);
}
