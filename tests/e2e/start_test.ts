/**
 * `main.ts start` as a user runs it: the servers come up as real processes, the
 * sample archive is registered, and SIGTERM stops everything.
 */
import assert from "node:assert/strict";

Deno.test("main.ts start serves a catalog holding the sample archive, and stops on SIGTERM", async () => {
  const dataDir = await Deno.makeTempDir({ dir: ".tmp", prefix: "start-" }).catch(async () => {
    await Deno.mkdir(".tmp", { recursive: true });
    return await Deno.makeTempDir({ dir: ".tmp", prefix: "start-" });
  });
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-env=PERMAFROST_*",
      "--allow-ffi",
      "--allow-net",
      "--allow-run",
      "main.ts",
      "start",
      "--data-dir",
      dataDir,
      "--catalog-port",
      "0",
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  const output = (async () => {
    let buffered = "";
    for await (const text of child.stderr.pipeThrough(new TextDecoderStream())) {
      buffered += text;
      const parts = buffered.split("\n");
      buffered = parts.pop()!;
      lines.push(...parts);
    }
  })();
  const stdout = child.stdout.cancel();
  try {
    let catalog: string | undefined;
    for (let i = 0; i < 600 && !catalog; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const at = lines.findIndex((l) => l.startsWith("Permafrost is running"));
      if (at >= 0) {
        catalog = lines.slice(at).map((l) => /catalog\s+(http:\/\/\S+)/.exec(l)?.[1]).find(Boolean);
      }
    }
    assert.ok(catalog, `start never said it was running:\n${lines.join("\n")}`);
    const res = await fetch(`${catalog}/datasets/sensors`);
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.rows, 50_000);
  } finally {
    child.kill("SIGTERM");
    const status = await child.status;
    await output;
    await stdout;
    assert.equal(status.code, 0, lines.join("\n"));
    await Deno.remove(dataDir, { recursive: true });
  }
});
