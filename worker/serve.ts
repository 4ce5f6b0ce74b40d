/**
 * The `deno serve` entry of a worker. Host and port come from `deno serve`
 * (`--host`, `--port`); everything else from `PERMAFROST_*` variables
 * (`config.ts`). The worker registers with the master once it is listening:
 *
 * ```sh
 * PERMAFROST_MASTER_URL=http://master:8700 deno serve --port 8801 --allow-net \
 *   --allow-read --allow-write --allow-ffi '--allow-env=PERMAFROST_*' --allow-run=zpaq worker/serve.ts
 * ```
 *
 * @module
 */
import { loadConfig, processEnv } from "../internal/config.ts";
import { WORKER_CONFIG } from "./config.ts";
import { advertisedUrl, createWorker } from "./server.ts";

const { host: _host, port: _port, ...SERVE_CONFIG } = WORKER_CONFIG;
const config = loadConfig(SERVE_CONFIG, { env: processEnv(SERVE_CONFIG) });
const { node, app, logger } = createWorker(config);

export default {
  fetch: app.fetch,
  onListen(addr) {
    const net = addr as Deno.NetAddr;
    const url = advertisedUrl(config.url, net.hostname, net.port);
    logger.info("worker listening", { url });
    node.start(url);
  },
} satisfies Deno.ServeDefaultExport;
