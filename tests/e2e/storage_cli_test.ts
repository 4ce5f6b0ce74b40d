/**
 * The CLI with `s3://` URIs, as a user runs it (`main.ts` in its own process, with
 * the permissions of `deno task cli`), against a real S3 server (`s3rver`): freeze to
 * S3 with a storage class, audit and verify there, a slice to stdout, refusal to
 * replace without `--force`, and a bad scheme — one line, exit 1. Against the GCS
 * protocol server (`tests/_gcs_server.ts`): a freeze killed (SIGKILL) mid-upload leaves no
 * object, and `storage gc` finds its upload in the journal and cancels the session.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startS3rver } from "../_s3rver.ts";
import { startGcsServer } from "../_gcs_server.ts";
import { CHUNK_BYTES } from "../../storage/gs.ts";

const server = await startS3rver("bkt");
const dir = await Deno.makeTempDir({ prefix: "permafrost-s3-cli-" });

const PERMISSIONS = [
  "run",
  "-q",
  "--allow-read",
  "--allow-write",
  "--allow-env=PERMAFROST_*,INIT_CWD,AWS_*,AZURE_*,GOOGLE_APPLICATION_CREDENTIALS,STORAGE_EMULATOR_HOST,GCE_METADATA_HOST,XDG_STATE_HOME,HOME",
  "--allow-ffi",
  "--allow-net",
  "main.ts",
];

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return await cliWith({}, ...args);
}

async function cliWith(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [...PERMISSIONS, ...args],
    env: { ...server.env, ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("CLI freezes to, inspects and thaws from s3:// URIs", async () => {
  const csv = join(dir, "a.csv");
  await Deno.writeTextFile(
    csv,
    "id,v\n" + Array.from({ length: 2000 }, (_, i) => `${i},${(i * 37) % 101}`).join("\n") + "\n",
  );
  const frozen = await cli("freeze", csv, "s3://bkt/a.pf", "--storage-class", "STANDARD_IA");
  assert.equal(frozen.code, 0, frozen.stderr);
  assert.match(frozen.stderr, /froze 2,000 rows/);
  const audit = await cli("audit", "s3://bkt/a.pf", "--json");
  assert.equal(audit.code, 0, audit.stderr);
  assert.equal(JSON.parse(audit.stdout).rows, 2000);
  const verify = await cli("verify", "s3://bkt/a.pf");
  assert.equal(verify.code, 0, verify.stderr);
  const slice = await cli("thaw", "s3://bkt/a.pf", "-", "--rows", "10:13");
  assert.equal(slice.code, 0, slice.stderr);
  assert.equal(slice.stdout, "id,v\n10,67\n11,3\n12,40\n");
  const again = await cli("freeze", csv, "s3://bkt/a.pf");
  assert.equal(again.code, 1);
  assert.match(again.stderr, /already exists; pass --force.*\[DESTINATION_EXISTS\]/);
  assert.equal((await cli("freeze", csv, "s3://bkt/a.pf", "--force")).code, 0);
  const bad = await cli("audit", "ftp://bkt/a.pf");
  assert.equal(bad.code, 1);
  assert.equal(bad.stderr.trim().split("\n").length, 1, bad.stderr);
  assert.match(bad.stderr, /Unknown storage scheme 'ftp:\/\/'.*\[BAD_URI\]/);
});

Deno.test("a freeze killed mid-upload leaves no object, and `storage gc` cancels its upload", async () => {
  // The second upload chunk is never answered: the freeze stays mid-upload until killed.
  const gcs = await startGcsServer({ buckets: ["bkt"], emulator: true, stallAfterParts: 1 });
  const state = join(dir, "state");
  const env = { STORAGE_EMULATOR_HOST: gcs.url, PERMAFROST_STATE_DIR: state };
  try {
    // Random text does not compress: the archive is several 8 MiB upload chunks.
    const csv = join(dir, "big.csv");
    const random = new Uint8Array(Math.ceil(1.25 * CHUNK_BYTES));
    for (let at = 0; at < random.length; at += 65536) {
      crypto.getRandomValues(random.subarray(at, at + 65536));
    }
    const hex = Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("");
    const rows = hex.match(/.{1,64}/g)!.map((r, i) => `${i},${r}`);
    await Deno.writeTextFile(csv, "id,blob\n" + rows.join("\n") + "\n");
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        ...PERMISSIONS,
        "freeze",
        csv,
        "gs://bkt/big.pf",
        "--codec",
        "zstd",
        // Level 1: random hex at zstd 19 costs seconds per chunk, and on a loaded
        // machine the first part would not be up before the wait below gives up.
        "--column-codec",
        "blob=zstd:1",
        "--chunk-rows",
        "20000",
      ],
      env: { ...server.env, ...env },
      stdout: "null",
      stderr: "piped",
    }).spawn();
    // Its messages, kept to say why should it end before its upload is written down.
    const stderr = new Response(child.stderr).text();
    let exited: Deno.CommandStatus | null = null;
    child.status.then((s) => exited = s);
    // Killed once its upload session is written down (a chunk is up); a loaded machine
    // may take a while to encode the 8 MiB before it.
    const journal = join(state, "uploads");
    let entries: Deno.DirEntry[] = [];
    for (let i = 0; i < 4800 && entries.length === 0 && exited === null; i++) {
      await new Promise((r) => setTimeout(r, 50));
      entries = await Array.fromAsync(Deno.readDir(journal)).catch(() => []);
    }
    if (entries.length === 0) {
      if (exited === null) child.kill("SIGKILL");
      assert.fail(
        `the upload was never written down: the freeze ${
          exited ? `exited with code ${(exited as Deno.CommandStatus).code}` : "ran for 4 min"
        }; its stderr: ${await stderr}`,
      );
    }
    assert.equal(entries.length, 1, "the upload was written down");
    child.kill("SIGKILL");
    await child.status;
    await stderr;
    assert.equal(gcs.sessions(), 1);
    assert.equal(gcs.objects.has("bkt/big.pf"), false, "nothing visible at the destination");

    const dry = await cliWith(env, "storage", "gc", "--dry-run");
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stderr, /orphaned: gs:\/\/bkt\/big\.pf \(started .* by process \d+\)/);
    assert.match(dry.stderr, /storage gc: 1 to abort, 0 in progress/);
    assert.equal(gcs.sessions(), 1);
    const gc = await cliWith(env, "storage", "gc", "gs://bkt/", "--json");
    assert.equal(gc.code, 0, gc.stderr);
    assert.deepEqual(JSON.parse(gc.stdout).map((u: { state: string }) => u.state), ["aborted"]);
    assert.match(gc.stderr, /storage gc: 1 aborted, 0 failed, 0 in progress/);
    assert.equal(gcs.sessions(), 0, "the session was cancelled");
    assert.deepEqual(await Array.fromAsync(Deno.readDir(journal)), []);
    const again = await cliWith(env, "storage", "gc");
    assert.match(again.stderr, /storage gc: 0 aborted, 0 failed, 0 in progress/);
    const bad = await cliWith(env, "storage", "gc", "--older-than", "soon");
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--older-than 'soon' is not a duration/);
  } finally {
    await gcs.stop();
  }
});

Deno.test({
  name: "storage CLI tests clean up",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  },
});
