/**
 * Every archive operation with `s3://` URIs where it takes paths, against a real S3
 * server (`s3rver`, started here): freeze to and from object storage (the payload
 * equals a local freeze's), thaw whole and as a slice (three requests: head, tail, one
 * chunk), audit, verify, peek, diff, append, SQL, refusal to replace, bad URIs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startS3rver } from "../tests/_s3rver.ts";
import { ArchiveReader } from "../format/reader.ts";
import { HEAD_BYTES, openRangeReader, TAIL_BYTES } from "../storage/range_reader.ts";
import { StorageError } from "../storage/errors.ts";
import { append } from "./append.ts";
import { diff } from "./diff.ts";
import { freeze } from "./freeze.ts";
import { audit, peek, verify } from "./inspect.ts";
import { SqlSession } from "./sql.ts";
import { thaw, thawTable } from "./thaw.ts";
import { freezePartitioned } from "./partition.ts";
import { s3Store } from "../storage/s3.ts";
import { readIndexAt, uploadFile } from "./_remote.ts";
import { auditRemote, freezeTo, thawFrom } from "../mod.ts";
import { OpsError } from "./errors.ts";

const server = await startS3rver("bkt");
const dir = await Deno.makeTempDir({ prefix: "permafrost-remote-" });
const csv = join(dir, "trips.csv");
const ROWS = 60_000;
{
  const lines = ["id,city,fare,day"];
  for (let i = 0; i < ROWS; i++) {
    // Not too regular, so the archive is big enough to need ranged reads.
    const fare = ((i * 7919) % 10007) / 100;
    lines.push(`${i},c${(i * 31) % 97},${fare},2024-0${1 + (i % 9)}-1${i % 10}`);
  }
  await Deno.writeTextFile(csv, lines.join("\n") + "\n");
}
const local = await freeze(csv, join(dir, "local.pf"), { chunkRows: 5000, threads: 0 });

Deno.test("freeze to s3:// uploads the same archive a local freeze writes; thaw reads it back", async () => {
  const s = await freeze(csv, "s3://bkt/trips.pf", { chunkRows: 5000, threads: 0 });
  assert.equal(s.path, "s3://bkt/trips.pf");
  assert.equal(s.payload_sha256, local.payload_sha256);
  await thaw("s3://bkt/trips.pf", join(dir, "back.csv"));
  await thaw(join(dir, "local.pf"), join(dir, "back-local.csv"));
  assert.equal(
    await Deno.readTextFile(join(dir, "back.csv")),
    await Deno.readTextFile(join(dir, "back-local.csv")),
  );
  assert.equal((await verify("s3://bkt/trips.pf")).ok, true);
  const report = await audit("s3://bkt/trips.pf");
  assert.equal(report.rows, ROWS);
  const rows = await peek("s3://bkt/trips.pf", { rows: 3 });
  assert.equal(rows.rows.length, 3);
  assert.equal((await diff(join(dir, "local.pf"), "s3://bkt/trips.pf")).identical, true);
});

Deno.test("a 10-row slice of an archive in S3 takes three requests: head, tail, one chunk", async () => {
  // Random tokens do not compress: an archive of a few MB.
  const noisy = join(dir, "noisy.csv");
  const lines = ["id,token"];
  const bytes = new Uint8Array(12);
  for (let i = 0; i < 200_000; i++) {
    crypto.getRandomValues(bytes);
    lines.push(`${i},${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`);
  }
  await Deno.writeTextFile(noisy, lines.join("\n") + "\n");
  await freeze(noisy, "s3://bkt/slice.pf", { chunkRows: 5000, threads: 0 });
  const source = await openRangeReader("s3://bkt/slice.pf");
  assert.ok(
    source.size > HEAD_BYTES + TAIL_BYTES + 1_000_000,
    `archive of ${source.size} bytes spans more than head and tail`,
  );
  const reader = await ArchiveReader.openSource(source);
  let rows = 0;
  for await (const b of reader.read({ rows: { start: 131_000, end: 131_010 } })) rows += b.length;
  reader.close();
  assert.equal(rows, 10);
  assert.ok(source.requests <= 3, `${source.requests} requests`);
  const chunkBytes = reader.index.footer.chunks[26]!.length;
  assert.ok(
    source.bytesFetched <= HEAD_BYTES + TAIL_BYTES + chunkBytes,
    `${source.bytesFetched} bytes`,
  );
});

Deno.test("freeze from an s3:// source, thaw to an s3:// output, and refuse to replace without overwrite", async () => {
  await uploadFile(csv, "s3://bkt/in/trips.csv");
  const s = await freeze("s3://bkt/in/trips.csv", join(dir, "from-s3.pf"), {
    chunkRows: 5000,
    threads: 0,
  });
  assert.equal(s.payload_sha256, local.payload_sha256);
  const t = await thaw(join(dir, "local.pf"), "s3://bkt/out/trips.jsonl", {
    rows: { start: 0, end: 5 },
  });
  assert.equal(t.rows, 5);
  assert.equal(t.path, "s3://bkt/out/trips.jsonl");
  await assert.rejects(
    thaw(join(dir, "local.pf"), "s3://bkt/out/trips.jsonl", { overwrite: false }),
    (e: unknown) => e instanceof OpsError && e.code === "DESTINATION_EXISTS",
  );
  await assert.rejects(
    freeze(csv, "s3://bkt/trips.pf", { overwrite: false }),
    (e: unknown) => e instanceof OpsError && e.code === "DESTINATION_EXISTS",
  );
});

Deno.test("append to an archive in S3 and query it with SQL", async () => {
  await freeze(csv, "s3://bkt/grow.pf", { chunkRows: 5000, threads: 0 });
  const more = join(dir, "more.csv");
  await Deno.writeTextFile(
    more,
    "id,city,fare,day\n60000,c1,1.5,2024-01-10\n60001,c2,2.5,2024-01-11\n",
  );
  const a = await append(more, "s3://bkt/grow.pf", { threads: 0 });
  assert.equal(a.path, "s3://bkt/grow.pf");
  const session = new SqlSession();
  await session.register("g", "s3://bkt/grow.pf");
  const t = await session.query("SELECT count(*) AS n, max(id) AS top FROM g");
  assert.equal(Number(t.getChild("n")!.get(0)), ROWS + 2);
  assert.equal(Number(t.getChild("top")!.get(0)), 60001);
});

Deno.test("freezeTo, thawFrom and auditRemote are the spec's names for the same operations", async () => {
  const s = await freezeTo(csv, "s3://bkt/named.pf", { chunkRows: 5000, threads: 0 });
  assert.equal(s.payload_sha256, local.payload_sha256);
  assert.equal((await auditRemote("s3://bkt/named.pf")).rows, ROWS);
  const t = await thawFrom("s3://bkt/named.pf", join(dir, "named.jsonl"), {
    rows: { start: 0, end: 2 },
  });
  assert.equal(t.rows, 2);
});

Deno.test("a freeze to s3:// that starts over (a late value widens a column) uploads only the archive it keeps", async () => {
  const lines = ["id,v"];
  for (let i = 0; i < 12_000; i++) lines.push(`${i},${i === 11_500 ? "late text" : i * 3}`);
  const late = join(dir, "late.csv");
  await Deno.writeTextFile(late, lines.join("\n") + "\n");
  const here = await freeze(late, join(dir, "late.pf"), { chunkRows: 3000, threads: 0 });
  const there = await freeze(late, "s3://bkt/late.pf", { chunkRows: 3000, threads: 0 });
  assert.deepEqual(there.widened_columns, ["v"]);
  assert.equal(there.payload_sha256, here.payload_sha256);
  assert.equal((await readIndexAt("s3://bkt/late.pf")).footer.payload_sha256, here.payload_sha256);
});

Deno.test("a partitioned freeze goes to an s3:// prefix, manifest last, and thaws back from there", async () => {
  const options = { partitionBy: ["day"], chunkRows: 4000, threads: 0 };
  const here = await freezePartitioned(csv, join(dir, "parts"), options);
  const there = await freezePartitioned(csv, "s3://bkt/parts/", options);
  assert.equal(there.path, "s3://bkt/parts/");
  assert.deepEqual(there.partitions, here.partitions);
  const objects = await s3Store().list("s3://bkt/parts/", { recursive: true });
  assert.equal(objects.length, here.partitions.length + 1);
  assert.ok(objects.includes("s3://bkt/parts/_manifest.json"));
  // Thawed from the prefix, whole and pruned by a where: what the directory gives.
  for (const opts of [{}, { where: "day = '2024-03-13'" }]) {
    const a = join(dir, "parts-local.csv");
    const b = join(dir, "parts-s3.csv");
    const fromDir = await thaw(join(dir, "parts"), a, { ...opts, overwrite: true });
    const fromS3 = await thaw("s3://bkt/parts", b, { ...opts, overwrite: true });
    assert.equal(fromS3.rows, fromDir.rows);
    assert.equal(await Deno.readTextFile(b), await Deno.readTextFile(a));
    if ("where" in opts) assert.equal(fromS3.partitions_read, 1);
  }
  assert.equal((await thawTable("s3://bkt/parts/", { columns: ["id"] })).numRows, ROWS);
  // Never into a prefix that holds objects.
  await assert.rejects(
    freezePartitioned(csv, "s3://bkt/parts", options),
    (e: unknown) => e instanceof OpsError && /already holds/.test(e.message),
  );
});

Deno.test("bad URIs and missing objects are typed errors that say what to fix", async () => {
  const failsWith = (p: Promise<unknown>, code: string, message: RegExp) =>
    assert.rejects(p, (e: unknown) => {
      assert.ok(e instanceof StorageError, String(e));
      assert.equal(e.code, code);
      assert.match(e.message, message);
      return true;
    });
  await failsWith(audit("s3://bkt/none.pf"), "NOT_FOUND", /s3:\/\/bkt\/none\.pf.*no such object/);
  await failsWith(audit("ftp://host/x.pf"), "BAD_URI", /Unknown storage scheme 'ftp:\/\/'/);
  Deno.env.set("GCE_METADATA_HOST", "127.0.0.1:9"); // no metadata server here
  await failsWith(audit("gs://bkt/x.pf"), "MISSING_CREDENTIALS", /GOOGLE_APPLICATION_CREDENTIALS/);
  await failsWith(freeze(csv, "s3://bkt/a/../b.pf"), "BAD_URI", /'\.\.'/);
  await failsWith(freeze(csv, "s3://bkt/folder/"), "BAD_URI", /"directory"/);
});

Deno.test({
  name: "remote tests clean up",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  },
});
