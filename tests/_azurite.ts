/**
 * A real Azure Blob server for a test file: Azurite (`azurite-blob` from the npm
 * package `azurite`), started as a process on a free port with the well-known
 * development account, and the `AZURE_STORAGE_CONNECTION_STRING` that points the
 * `az://` store at it. Containers are created here with one signed request each.
 *
 * @module
 */

import { azureSignedRequest } from "../storage/az.ts";

/** Azurite's well-known development account and key (public, documented). */
const ACCOUNT = "devstoreaccount1";
const KEY =
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/** A running Azurite. */
export interface AzuriteServer {
  /** Its Blob endpoint, `http://127.0.0.1:PORT/devstoreaccount1`. */
  endpoint: string;
  /** Variables pointing the Azure store at it. */
  env: Record<string, string>;
  /** Stops it and removes its data. */
  stop(): Promise<void>;
}

/**
 * Starts Azurite with the given containers and sets this process's
 * `AZURE_STORAGE_CONNECTION_STRING` to reach it.
 *
 * @param containers Containers to create.
 * @returns The server.
 */
export async function startAzurite(...containers: string[]): Promise<AzuriteServer> {
  const dir = await Deno.makeTempDir({ prefix: "permafrost-azurite-" });
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--allow-read",
      "--allow-write",
      "--allow-net",
      "--allow-env",
      "--allow-sys",
      "npm:azurite@3.37.0/azurite-blob",
      "--blobHost",
      "127.0.0.1",
      "--blobPort",
      "0",
      "--location",
      dir,
      "--silent",
      "--skipApiVersionCheck",
      "--disableTelemetry",
    ],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  let port: string | undefined;
  while (port === undefined) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
    port = /listens on http:\/\/127\.0\.0\.1:(\d+)/.exec(text)?.[1];
  }
  clearTimeout(timer);
  // Keep draining its output so it never blocks on a full pipe.
  (async () => {
    try {
      while (!(await reader.read()).done) { /* drain */ }
    } catch { /* ended */ }
  })();
  if (port === undefined) throw new Error(`Azurite did not start: ${text.slice(0, 500)}`);
  const endpoint = `http://127.0.0.1:${port}/${ACCOUNT}`;
  const env = {
    AZURE_STORAGE_CONNECTION_STRING:
      `DefaultEndpointsProtocol=http;AccountName=${ACCOUNT};AccountKey=${KEY};BlobEndpoint=${endpoint};`,
  };
  for (const [k, v] of Object.entries(env)) Deno.env.set(k, v);
  for (const name of containers) {
    const url = new URL(`${endpoint}/${name}?restype=container`);
    const res = await fetch(
      await azureSignedRequest(url, { method: "PUT" }, (n) => env[n as keyof typeof env]),
    );
    await res.body?.cancel();
    if (res.status !== 201 && res.status !== 409) {
      throw new Error(`Azurite refused to create container ${name}: HTTP ${res.status}`);
    }
  }
  return {
    endpoint,
    env,
    async stop() {
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
      await child.status;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
