/**
 * A real S3 server for a test file: `s3rver` (npm) started as a process on a free
 * port with the buckets asked for, and the `AWS_*` variables that point the `s3://`
 * store at it. {@link S3Server.kill} stops it with SIGKILL (a fault test's crash) and
 * {@link S3Server.stop} ends it and removes its data.
 *
 * @module
 */
/** A running s3rver. */
export interface S3Server {
  /** Its endpoint, `http://127.0.0.1:PORT`. */
  endpoint: string;
  /** Its data directory. */
  dir: string;
  /** Variables pointing the S3 store at it. */
  env: Record<string, string>;
  /** Kills it at once. */
  kill(): void;
  /** Stops it and removes its data. */
  stop(): Promise<void>;
}

/**
 * Starts s3rver with the given buckets and sets the `AWS_*` variables of this process
 * to reach it.
 *
 * @param buckets Buckets to create.
 * @returns The server.
 */
export async function startS3rver(...buckets: string[]): Promise<S3Server> {
  return await startS3rverIn(await Deno.makeTempDir({ prefix: "permafrost-s3rver-" }), buckets);
}

/**
 * Starts s3rver on an existing data directory (a restart after a kill sees what the
 * killed one stored).
 *
 * @param dir The data directory.
 * @param buckets Buckets to create (kept when they exist).
 * @returns The server.
 */
export async function startS3rverIn(dir: string, buckets: string[]): Promise<S3Server> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--allow-read",
      "--allow-write",
      "--allow-net=127.0.0.1",
      "--allow-env",
      "--allow-sys",
      new URL("./_s3rver_main.ts", import.meta.url).pathname,
      dir,
      ...buckets,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  clearTimeout(timer);
  reader.cancel().catch(() => {});
  if (!text.includes("\n")) throw new Error("s3rver exited (or took 30 s) before listening");
  const first = { value: text.slice(0, text.indexOf("\n")) };
  const { port } = JSON.parse(first.value) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  const env = {
    AWS_ACCESS_KEY_ID: "S3RVER",
    AWS_SECRET_ACCESS_KEY: "S3RVER",
    AWS_REGION: "us-east-1",
    AWS_ENDPOINT_URL_S3: endpoint,
  };
  for (const [k, v] of Object.entries(env)) Deno.env.set(k, v);
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
  };
  return {
    endpoint,
    dir,
    env,
    kill: end,
    async stop() {
      end();
      await child.status;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
