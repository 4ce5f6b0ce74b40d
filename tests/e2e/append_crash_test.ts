/**
 * Crash safety of `append`, with real processes: a child appends to an archive
 * and is killed with SIGKILL in the middle of writing; the archive must still
 * verify, unchanged, every time. Then an append that is left to finish must
 * verify with every row.
 */
import assert from "node:assert/strict";
import { freeze } from "../../ops/freeze.ts";
import { audit, verify } from "../../ops/inspect.ts";
import { thawTable } from "../../ops/thaw.ts";

const TMP = ".tmp/e2e_append_crash";
await Deno.remove(TMP, { recursive: true }).catch(() => {});
await Deno.mkdir(TMP, { recursive: true });

function csv(from: number, to: number): string {
  const lines = ["id,ts,reading,note"];
  for (let i = from; i < to; i++) {
    lines.push(
      `${i},2024-01-01 ${String(Math.floor(i / 3600) % 24).padStart(2, "0")}:${
        String(Math.floor(i / 60) % 60).padStart(2, "0")
      }:${String(i % 60).padStart(2, "0")},${(i * 7919) % 1000 / 10},note ${i % 97}`,
    );
  }
  return lines.join("\n") + "\n";
}

/** Starts the child, waits for `line` on its stdout, then SIGKILLs it. */
async function killAt(archive: string, source: string, line: string): Promise<Deno.CommandStatus> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-ffi",
      "tests/e2e/_append_child.ts",
      source,
      archive,
    ],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  try {
    while (!seen.split("\n").includes(line)) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += value;
    }
    child.kill("SIGKILL");
  } finally {
    await reader.cancel().catch(() => {});
  }
  const status = await child.status;
  assert.ok(!seen.includes("done"), `the child finished before it was killed:\n${seen}`);
  return status;
}

async function strayTemps(): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(TMP)) if (e.name.includes(".pf.tmp-")) out.push(e.name);
  return out;
}

Deno.test("append() killed with SIGKILL mid-write leaves an archive that verifies, unchanged", async () => {
  await Deno.writeTextFile(`${TMP}/base.csv`, csv(0, 20_000));
  await Deno.writeTextFile(`${TMP}/more.csv`, csv(20_000, 120_000));
  const archive = `${TMP}/trips.pf`;
  const frozen = await freeze(`${TMP}/base.csv`, archive, { chunkRows: 2000, threads: 0 });
  for (const line of ["start", "chunk 1", "chunk 10", "chunk 30"]) {
    const status = await killAt(archive, `${TMP}/more.csv`, line);
    assert.equal(status.signal, "SIGKILL");
    const report = await verify(archive);
    assert.equal(report.ok, true, `after a kill at "${line}": ${JSON.stringify(report.errors)}`);
    const a = await audit(archive);
    assert.equal(a.rows, 20_000);
    assert.equal(a.payload_sha256, frozen.payload_sha256);
    if (line !== "start") {
      assert.equal((await strayTemps()).length, 1, "the kill hit the temp file mid-write");
    }
    for (const t of await strayTemps()) await Deno.remove(`${TMP}/${t}`);
  }
  const child = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-ffi",
      "tests/e2e/_append_child.ts",
      `${TMP}/more.csv`,
      archive,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(child.code, 0, new TextDecoder().decode(child.stderr));
  assert.equal((await verify(archive)).ok, true);
  const t = await thawTable(archive, { columns: ["id"], rows: { start: 119_998, end: 120_000 } });
  assert.deepEqual([...t.getChild("id")!.toArray()], [119_998n, 119_999n]);
  assert.deepEqual(await strayTemps(), []);
});
