/**
 * The CLI at its edges, as a user runs it (`deno run <permissions> main.ts ...` in a
 * subprocess): CR-only line ends, output to stdout and to a FIFO, limits on
 * `--threads` and `--where`, the encryption warning and `--require-encryption`, and
 * what a killed freeze leaves behind.
 */
import assert from "node:assert/strict";
import { until } from "../../internal/_test_utils.ts";

const TMP = ".tmp/e2e_cli_edges";
await Deno.remove(TMP, { recursive: true }).catch(() => {});
await Deno.mkdir(TMP, { recursive: true });

const PERMISSIONS = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-ffi",
  "--allow-run=zpaq",
];

function command(args: string[], env: Record<string, string> = {}): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-q", ...PERMISSIONS, "main.ts", ...args],
    env,
    stdout: "piped",
    stderr: "piped",
  });
}

async function cli(
  ...args: string[]
): Promise<{ code: number; stdout: Uint8Array; text: string; stderr: string }> {
  const out = await command(args).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: out.stdout,
    text: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

const CSV = 'id,name,score\n1,ann,1.5\n2,bob,\n3,"c, d",-2.5\n';

async function archive(name: string): Promise<string> {
  await Deno.writeTextFile(`${TMP}/${name}.csv`, CSV);
  const path = `${TMP}/${name}.pf`;
  const r = await cli("freeze", `${TMP}/${name}.csv`, path, "--threads", "1");
  assert.equal(r.code, 0, r.stderr);
  return path;
}

Deno.test("CLI freeze reads a CR-only CSV as its rows", async () => {
  await Deno.writeTextFile(`${TMP}/cr.csv`, CSV.replaceAll("\n", "\r"));
  const r = await cli("freeze", `${TMP}/cr.csv`, `${TMP}/cr.pf`, "--threads", "1");
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /froze 3 rows/);
  const back = await cli("thaw", `${TMP}/cr.pf`, "-");
  assert.equal(back.code, 0, back.stderr);
  assert.equal(back.text, CSV);
});

Deno.test("CLI thaw writes '-' to its stdout in every format", async (t) => {
  const path = await archive("stdout");
  await t.step("csv by default", async () => {
    const r = await cli("thaw", path, "-");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.text, CSV);
    assert.match(r.stderr, /thawed 3 rows to stdout/);
  });
  for (const format of ["jsonl", "arrow", "parquet", "xlsx"]) {
    await t.step(format, async () => {
      const r = await cli("thaw", path, "-", "--format", format);
      assert.equal(r.code, 0, r.stderr);
      const ext = format === "arrow" ? "arrows" : format;
      const copy = `${TMP}/copy.${ext}`;
      await Deno.writeFile(copy, r.stdout);
      if (format === "xlsx") {
        assert.deepEqual([...r.stdout.subarray(0, 2)], [0x50, 0x4b], "a zip file");
        return;
      }
      const again = await cli("freeze", copy, `${TMP}/again-${format}.pf`, "--threads", "1");
      assert.equal(again.code, 0, again.stderr);
      const csv = await cli("thaw", `${TMP}/again-${format}.pf`, "-");
      assert.equal(csv.text, CSV);
    });
  }
});

Deno.test("CLI thaw writes into a FIFO in place", async () => {
  const path = await archive("fifo");
  const fifo = `${TMP}/out.pipe`;
  await Deno.remove(fifo).catch(() => {});
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.ok(made.success, "mkfifo");
  const cat = new Deno.Command("cat", { args: [fifo], stdout: "piped" }).spawn();
  const read = new Response(cat.stdout).text();
  try {
    const r = await cli("thaw", path, fifo, "--format", "csv");
    assert.equal(r.code, 0, r.stderr);
    assert.ok((await Deno.lstat(fifo)).isFifo, "still a FIFO");
    assert.equal(await read, CSV);
  } finally {
    try {
      cat.kill();
    } catch {
      // Already exited.
    }
    await cat.status;
    await read.catch(() => {});
  }
});

Deno.test("CLI thaw refuses a --where nested 3,000 deep in one line, exit 2", async () => {
  const path = await archive("where");
  const deep = "(".repeat(3000) + "id = 1" + ")".repeat(3000);
  const r = await cli("thaw", path, `${TMP}/where_out.csv`, "--where", deep);
  assert.equal(r.code, 2, r.stderr);
  const first = r.stderr.split("\n")[0]!;
  assert.match(
    first,
    /^error: Cannot use --where ".*": it nests .* more than 100 deep.* at character 101 \[BAD_OPTION\]/,
  );
  assert.doesNotMatch(r.stderr, /RangeError|^ {4}at /m);
});

Deno.test("CLI freeze and append refuse --threads (or PERMAFROST_THREADS) past 4 per core, exit 2", async () => {
  await Deno.writeTextFile(`${TMP}/threads.csv`, CSV);
  const args = ["freeze", `${TMP}/threads.csv`, `${TMP}/threads.pf`];
  for (
    const [extra, env] of [[["--threads", "1000"], {}], [[], {
      PERMAFROST_THREADS: "1000",
    }]] as const
  ) {
    const out = await command([...args, ...extra], env).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 2, stderr);
    assert.match(
      stderr,
      /--threads \/ PERMAFROST_THREADS: expected a thread count .*at most 4 per core.*0\.\.\d+ on this machine/,
    );
  }
  await assert.rejects(Deno.stat(`${TMP}/threads.pf`), Deno.errors.NotFound);
  const path = await archive("threads-append");
  const appended = await cli("append", `${TMP}/threads.csv`, path, "--threads", "1000");
  assert.equal(appended.code, 2, appended.stderr);
  assert.match(appended.stderr, /--threads \/ PERMAFROST_THREADS: expected a thread count/);
});

async function temps(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) if (e.name.includes(".pf.tmp-")) out.push(e.name);
  return out;
}

Deno.test("CLI freeze removes the temp file a SIGKILLed freeze left beside the same archive", async () => {
  const dir = `${TMP}/killed`;
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  const rows = Array.from({ length: 400_000 }, (_, i) => `${i},s${i % 5},${i}.5`);
  await Deno.writeTextFile(`${dir}/big.csv`, `id,s,x\n${rows.join("\n")}\n`);
  const archive = `${dir}/out.pf`;
  const child = command(["freeze", `${dir}/big.csv`, archive, "--chunk-rows", "500"]).spawn();
  try {
    await until("the freeze to write its temp file", async () => {
      for (const name of await temps(dir)) {
        if ((await Deno.stat(`${dir}/${name}`)).size > 0) return name;
      }
      return undefined;
    }, { timeoutMs: 30_000, intervalMs: 25 });
  } finally {
    child.kill("SIGKILL");
    await child.output();
  }
  const left = await temps(dir);
  assert.equal(left.length, 1, "the kill left the temp file");
  assert.match(left[0]!, /^\.out\.pf\.pf\.tmp-[0-9a-z]+$/);
  await assert.rejects(Deno.stat(archive), Deno.errors.NotFound);
  // Untouched for longer than the stale age: what a leftover of a minute ago looks like.
  const then = new Date(Date.now() - 5 * 60_000);
  await Deno.utime(`${dir}/${left[0]}`, then, then);

  await Deno.writeTextFile(`${dir}/small.csv`, CSV);
  const again = await cli("freeze", `${dir}/small.csv`, archive, "--threads", "1");
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(await temps(dir), []);
});

Deno.test("CLI thaw warns when a key is given for a plain archive, and --require-encryption refuses it", async () => {
  const path = await archive("plain");
  const keyFile = `${TMP}/k.bin`;
  await Deno.writeFile(keyFile, crypto.getRandomValues(new Uint8Array(32)));
  const warned = await cli("thaw", path, `${TMP}/plain_out.csv`, "--key-file", keyFile);
  assert.equal(warned.code, 0, warned.stderr);
  const warnings = warned.stderr.split("\n").filter((l) => l.startsWith("warning:"));
  assert.equal(warnings.length, 1, warned.stderr);
  assert.match(warnings[0]!, /is not encrypted, so the key given .* was not used/);
  assert.equal(await Deno.readTextFile(`${TMP}/plain_out.csv`), CSV);

  const quiet = await cli("thaw", path, `${TMP}/plain2.csv`);
  assert.doesNotMatch(quiet.stderr, /warning/);

  const out = `${TMP}/refused.csv`;
  const refused = await cli("thaw", path, out, "--key-file", keyFile, "--require-encryption");
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(
    refused.stderr,
    /^error: Cannot thaw '.*plain\.pf': it is not encrypted.*\[NOT_ENCRYPTED\]/,
  );
  await assert.rejects(Deno.stat(out), Deno.errors.NotFound);

  await Deno.writeTextFile(`${TMP}/sealed.csv`, CSV);
  const sealed = await cli(
    "freeze",
    `${TMP}/sealed.csv`,
    `${TMP}/sealed.pf`,
    "--key-file",
    keyFile,
  );
  assert.equal(sealed.code, 0, sealed.stderr);
  const ok = await cli(
    "thaw",
    `${TMP}/sealed.pf`,
    "-",
    "--key-file",
    keyFile,
    "--require-encryption",
  );
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.text, CSV);
  assert.doesNotMatch(ok.stderr, /warning/);
});

Deno.test("CLI thaw to stdout stops quietly with exit 0 when the reader closes the pipe (| head)", async () => {
  const lines = ["n"];
  for (let i = 0; i < 200_000; i++) lines.push(String(i));
  await Deno.writeTextFile(`${TMP}/many.csv`, lines.join("\n") + "\n");
  const path = `${TMP}/many.pf`;
  assert.equal((await cli("freeze", `${TMP}/many.csv`, path)).code, 0);
  const child = command(["thaw", path, "-"]).spawn();
  const reader = child.stdout.getReader();
  const first = await reader.read();
  assert.ok(first.value && first.value.length > 0);
  await reader.cancel(); // like `head` exiting after its lines
  const [status, stderr] = await Promise.all([child.status, new Response(child.stderr).text()]);
  assert.equal(status.code, 0, stderr);
  assert.equal(stderr, "");
});
