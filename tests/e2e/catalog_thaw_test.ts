/**
 * `permafrost catalog thaw` as a user runs it: a real `catalog serve` process and the
 * CLI in its own process, with no access needed to the archive's directory. A dataset
 * comes back as a local thaw gives it (to a file and to stdout, with `--where`,
 * `--columns` and `--version`); an existing file is refused without `--force`; an
 * unknown dataset, a catalog that is not there and a bad flag each exit with one line.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { makeArchive } from "../../catalog/_test_utils.ts";
import { thaw } from "../../ops/thaw.ts";
import { E2E_CATALOG_TMP, startCatalogServer, stopCatalogServer } from "./_catalog_server.ts";

async function cli(cwd: string, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--allow-read",
      "--allow-write",
      "--allow-env=PERMAFROST_*",
      "--allow-net=127.0.0.1",
      join(Deno.cwd(), "main.ts"),
      ...args,
    ],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("catalog thaw: a dataset through the catalog, as a local thaw gives it", async () => {
  await Deno.mkdir(E2E_CATALOG_TMP, { recursive: true });
  const dir = await Deno.makeTempDir({ dir: E2E_CATALOG_TMP, prefix: "thaw-" });
  const work = join(dir, "work");
  await Deno.mkdir(work);
  await Deno.mkdir(join(dir, "v1"));
  const old = await makeArchive(join(dir, "v1"), "sensors", 200, 50);
  const archive = await makeArchive(dir, "sensors", 900, 100);
  const server = await startCatalogServer(join(dir, "catalog.db"));
  try {
    for (const [path, version] of [[old, "v1"], [archive, "v2"]]) {
      const res = await fetch(`${server.url}/datasets/register`, {
        method: "POST",
        body: JSON.stringify({ path, name: "sensors", version }),
      });
      assert.equal(res.status, 201, await res.text());
    }
    const at = ["--catalog", server.url];
    const whole = await cli(work, "catalog", "thaw", "sensors", "out.csv", ...at);
    assert.equal(whole.code, 0, whole.stderr);
    assert.match(whole.stderr, /thawed sensors from http:\/\/127\.0\.0\.1:\d+ to out\.csv \(csv, /);
    await thaw(archive, join(dir, "local.csv"));
    assert.equal(
      await Deno.readTextFile(join(work, "out.csv")),
      await Deno.readTextFile(join(dir, "local.csv")),
    );
    assert.deepEqual(
      (await Array.fromAsync(Deno.readDir(work))).map((e) => e.name),
      ["out.csv"],
      "no temp file left",
    );

    const where = "sensor = 's1' and reading > 600";
    const some = await cli(
      work,
      "catalog",
      "thaw",
      "sensors",
      "-",
      "--where",
      where,
      "--columns",
      "reading,sensor",
      ...at,
    );
    assert.equal(some.code, 0, some.stderr);
    await thaw(archive, join(dir, "some.csv"), { where, columns: ["reading", "sensor"] });
    assert.equal(some.stdout, await Deno.readTextFile(join(dir, "some.csv")));

    const v1 = await cli(work, "catalog", "thaw", "sensors", "v1.jsonl", "--version", "v1", ...at);
    assert.equal(v1.code, 0, v1.stderr);
    assert.equal((await Deno.readTextFile(join(work, "v1.jsonl"))).trim().split("\n").length, 200);

    const again = await cli(work, "catalog", "thaw", "sensors", "out.csv", ...at);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exists; pass --force.*\[DESTINATION_EXISTS\]/);
    assert.equal(
      (await cli(work, "catalog", "thaw", "sensors", "out.csv", "--force", ...at)).code,
      0,
    );

    const unknown = await cli(work, "catalog", "thaw", "nope", "x.csv", ...at);
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stderr.trim().split("\n").length, 1, unknown.stderr);
    assert.match(unknown.stderr, /\[NOT_FOUND\]/);
    const badColumn = await cli(
      work,
      "catalog",
      "thaw",
      "sensors",
      "y.csv",
      "--columns",
      "zz",
      ...at,
    );
    assert.equal(badColumn.code, 1);
    assert.match(badColumn.stderr, /Cannot thaw column "zz".*\[INVALID_ARGUMENT\]/);
    const parquet = await cli(work, "catalog", "thaw", "sensors", "out.parquet", ...at);
    assert.equal(parquet.code, 2);
    assert.match(parquet.stderr, /name it \.csv, \.jsonl or \.arrow/);
    const gone = await cli(
      work,
      "catalog",
      "thaw",
      "sensors",
      "z.csv",
      "--catalog",
      "http://127.0.0.1:9",
    );
    assert.equal(gone.code, 1);
    assert.match(
      gone.stderr,
      /Cannot reach the catalog at http:\/\/127\.0\.0\.1:9.*\[UNREACHABLE\]/,
    );
  } finally {
    await stopCatalogServer(server, "SIGTERM");
    await Deno.remove(dir, { recursive: true });
  }
});
