/**
 * The `deno serve` entry of the master. Host and port come from `deno serve`
 * (`--host`, `--port`); everything else from `PERMAFROST_*` variables
 * (`config.ts`):
 *
 * ```sh
 * PERMAFROST_MASTER_DATA_DIR=/var/lib/permafrost deno serve --port 8700 --allow-net \
 *   --allow-read --allow-write --allow-ffi '--allow-env=PERMAFROST_*' master/serve.ts
 * ```
 *
 * @module
 */
import { loadConfig, processEnv } from "../internal/config.ts";
import { MASTER_CONFIG } from "./config.ts";
import { startMaster } from "./server.ts";

const { host: _host, port: _port, ...SERVE_CONFIG } = MASTER_CONFIG;
const config = loadConfig(SERVE_CONFIG, { env: processEnv(SERVE_CONFIG) });
const services = await startMaster(config);

export default {
  fetch: services.app.fetch,
  onListen(addr) {
    services.logger.info("master listening", { addr });
  },
} satisfies Deno.ServeDefaultExport;
