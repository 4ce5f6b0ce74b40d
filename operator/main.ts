/**
 * The operator's process (the Dockerfile's `operator` target): reads its settings,
 * the pod's service account (token, CA, namespace) and runs {@link Operator} until
 * SIGTERM. Run as
 * `deno run --allow-read=/var/run/secrets/kubernetes.io --allow-net
 * --allow-env=PERMAFROST_*,KUBERNETES_SERVICE_HOST,KUBERNETES_SERVICE_PORT operator/main.ts`.
 *
 * @module
 */
import { join } from "node:path";
import { ClusterClient } from "../client/cluster_client.ts";
import { loadConfig, processEnv } from "../internal/config.ts";
import { createLogger, resolveLogFormat } from "../internal/log.ts";
import { stopSignal } from "../internal/stop_signal.ts";
import { OPERATOR_CONFIG } from "./config.ts";
import { KubeClient } from "./kube.ts";
import { Operator } from "./operator.ts";

async function readIfThere(path: string): Promise<string | null> {
  try {
    return (await Deno.readTextFile(path)).trim();
  } catch {
    return null;
  }
}

function inClusterApi(): string {
  const get = (name: string) =>
    Deno.permissions.querySync({ name: "env", variable: name }).state === "granted"
      ? Deno.env.get(name)
      : undefined;
  const host = get("KUBERNETES_SERVICE_HOST");
  const port = get("KUBERNETES_SERVICE_PORT") ?? "443";
  if (!host) {
    throw new Error(
      "No Kubernetes API: set --api-url / PERMAFROST_OPERATOR_API_URL, or run in a pod",
    );
  }
  return `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

if (import.meta.main) {
  const config = loadConfig(OPERATOR_CONFIG, { args: Deno.args, env: processEnv(OPERATOR_CONFIG) });
  const logger = createLogger({
    component: "operator",
    level: config.logLevel,
    format: resolveLogFormat(config.logFormat),
  });
  const sa = config.serviceAccountDir;
  const namespace = config.namespace || (await readIfThere(join(sa, "namespace"))) || "default";
  const kube = new KubeClient({
    apiUrl: config.apiUrl || inClusterApi(),
    token: () => readIfThere(join(sa, "token")),
    caCert: (await readIfThere(join(sa, "ca.crt"))) ?? undefined,
  });
  const master = new ClusterClient(config.masterUrl, {
    ...(config.masterToken ? { token: config.masterToken } : {}),
  });
  const operator = new Operator({
    kube,
    master,
    namespace,
    workers: config.workers,
    minWorkers: config.minWorkers,
    maxWorkers: config.maxWorkers,
    tasksPerWorker: config.tasksPerWorker,
    logger,
  });
  logger.info("operator running", {
    namespace,
    master: config.masterUrl,
    poll_s: config.pollS,
    workers: config.workers || null,
  });
  const stop = stopSignal();
  await operator.run(config.pollS, stop.signal);
  stop.dispose();
  kube.close();
  logger.info("operator stopped");
}
