/**
 * The CLI with `s3://` URIs, as a user runs it (`main.ts` in its own process, with
 * the permissions of `deno task cli`), against a real S3 server (`s3rver`): freeze to
 * S3 with a storage class, audit and verify there, a slice to stdout, refusal to
 * replace without `--force`, and a bad scheme — one line, exit 1.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startS3rver } from "../_s3rver.ts";

const server = await startS3rver("bkt");
const dir = await Deno.makeTempDir({ prefix: "permafrost-s3-cli-" });

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--allow-read",
      "--allow-write",
      "--allow-env=PERMAFROST_*,INIT_CWD,AWS_*,AZURE_*,GOOGLE_APPLICATION_CREDENTIALS,STORAGE_EMULATOR_HOST,GCE_METADATA_HOST",
      "--allow-ffi",
      "--allow-net",
      "main.ts",
      ...args,
    ],
    env: server.env,
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

Deno.test({
  name: "storage CLI tests clean up",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  },
});
