/**
 * The containers' health check (`HEALTHCHECK` in the Dockerfile): asks the process on
 * this machine for `GET /health` and exits 0 when it answers 200, 1 otherwise (no
 * answer within 2.5 s included). Run as
 * `deno run --allow-net=127.0.0.1 --allow-env=VAR internal/healthcheck.ts VAR DEFAULT_PORT`,
 * where VAR is the process's port variable (`PERMAFROST_MASTER_PORT`, …).
 *
 * @module
 */
if (import.meta.main) {
  const [portVar, fallback] = Deno.args;
  const port = (portVar && Deno.env.get(portVar)) || fallback;
  try {
    const res = await fetch(`http://127.0.0.1:${port}/health`, {
      signal: AbortSignal.timeout(2500),
    });
    await res.body?.cancel();
    Deno.exit(res.ok ? 0 : 1);
  } catch {
    Deno.exit(1);
  }
}
