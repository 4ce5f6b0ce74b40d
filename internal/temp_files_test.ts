/**
 * Tests of `temp_files.ts`: which leftovers the next write removes, and which it
 * never touches.
 *
 * @module
 */
import assert from "node:assert/strict";
import { basename, dirname, join } from "node:path";
import {
  commitTemp,
  createTempBeside,
  removeStaleTemps,
  renameTarget,
  splitPath,
  STALE_TEMP_AGE_MS,
} from "./temp_files.ts";

async function tempDir(): Promise<string> {
  const root = new URL("../.tmp/", import.meta.url).pathname;
  await Deno.mkdir(root, { recursive: true });
  return await Deno.makeTempDir({ dir: root, prefix: "temp-files-" });
}

async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

/** Creates `path` with a modification time `ageMs` in the past. */
async function leftover(path: string, ageMs = 2 * STALE_TEMP_AGE_MS): Promise<void> {
  await Deno.writeTextFile(path, "half");
  const then = new Date(Date.now() - ageMs);
  await Deno.utime(path, then, then);
}

Deno.test("createTempBeside() removes old unlocked temp files of the same destination", async () => {
  const dir = await tempDir();
  try {
    await leftover(join(dir, ".a.pf.pf.tmp-1x2y"));
    await leftover(join(dir, ".out.parquet.pf.tmp-k9"));
    await leftover(join(dir, ".out.parquet.pf.tmp-k9.duckdb"));
    await Deno.mkdir(join(dir, ".out.parquet.pf.tmp-k9.duckdb.tmp"));
    await leftover(join(dir, ".out.parquet.pf.tmp-k9.duckdb.tmp/spill"));
    const temp = await createTempBeside(join(dir, "a.pf"));
    temp.file.close();
    assert.match(temp.path, /\/\.a\.pf\.pf\.tmp-[0-9a-z]+$/);
    const parquet = await createTempBeside(join(dir, "out.parquet"));
    parquet.file.close();
    const left = await names(dir);
    assert.deepEqual(left.filter((n) => n.includes("tmp-1x2y")), []);
    assert.deepEqual(left.filter((n) => n.includes("tmp-k9")), []);
    assert.equal(left.length, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("removeStaleTemps() keeps young, locked and foreign files", async () => {
  const dir = await tempDir();
  try {
    await leftover(join(dir, ".a.pf.pf.tmp-young"), 1000);
    const held = join(dir, ".a.pf.pf.tmp-held");
    await leftover(held);
    const holder = await Deno.open(held, { read: true });
    await holder.lock(true);
    const foreign = [
      ".b.pf.pf.tmp-abc", // another destination
      ".a.pf.pf.tmp-ABC", // not our suffix
      ".a.pf.pf.tmp-abc.bak", // not our side file
      ".a.pf.tmp-abc", // not our mark
      "a.pf.pf.tmp-abc", // not hidden: an older version's, or a user's
      "a.pf",
    ];
    for (const n of foreign) await leftover(join(dir, n));
    await Deno.mkdir(join(dir, ".a.pf.pf.tmp-dir"));
    const then = new Date(Date.now() - 2 * STALE_TEMP_AGE_MS);
    await Deno.utime(join(dir, ".a.pf.pf.tmp-dir"), then, then);
    try {
      assert.deepEqual(await removeStaleTemps(join(dir, "a.pf")), []);
    } finally {
      holder.close();
    }
    assert.deepEqual(await removeStaleTemps(join(dir, "a.pf")), [held]);
    assert.deepEqual(
      await names(dir),
      [...foreign, ".a.pf.pf.tmp-dir", ".a.pf.pf.tmp-young"].sort(),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("renameTarget() gives a file or a new path, follows a link to a file, and refuses the rest", async () => {
  const dir = await tempDir();
  try {
    await Deno.writeTextFile(join(dir, "file"), "x");
    await Deno.mkdir(join(dir, "dir"));
    await Deno.symlink(join(dir, "file"), join(dir, "to-file"));
    await Deno.symlink(join(dir, "dir"), join(dir, "to-dir"));
    await Deno.symlink(join(dir, "missing"), join(dir, "to-nothing"));
    assert.equal(await renameTarget(join(dir, "file")), join(dir, "file"));
    assert.equal(await renameTarget(join(dir, "new")), join(dir, "new"));
    assert.equal(await renameTarget(join(dir, "to-file")), await Deno.realPath(join(dir, "file")));
    for (const n of ["dir", "to-dir", "to-nothing"]) {
      assert.equal(await renameTarget(join(dir, n)), null, n);
    }
    assert.equal(await renameTarget("/dev/null"), null, "a device");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("commitTemp() without replace never replaces a file that appeared meanwhile", async () => {
  const dir = await tempDir();
  const target = join(dir, "out.pf");
  const first = await createTempBeside(target);
  await first.file.write(new TextEncoder().encode("mine"));
  first.file.close();
  await commitTemp(first.path, target, false);
  assert.equal(await Deno.readTextFile(target), "mine");
  assert.deepEqual(await names(dir), ["out.pf"], "the temp name is gone");

  const second = await createTempBeside(target);
  await second.file.write(new TextEncoder().encode("late"));
  second.file.close();
  await assert.rejects(commitTemp(second.path, target, false), Deno.errors.AlreadyExists);
  assert.equal(await Deno.readTextFile(target), "mine", "the existing file is untouched");
  await commitTemp(second.path, target, true);
  assert.equal(await Deno.readTextFile(target), "late");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("splitPath() gives node:path's directory, name and sibling path for every short path", () => {
  const paths = [""];
  for (let length = 1; length <= 5; length++) {
    for (const p of paths.filter((q) => q.length === length - 1)) {
      for (const c of ["a", ".", "/"]) paths.push(p + c);
    }
  }
  paths.push("/tmp/out.csv", "out.csv", "./a/b.csv", "a/../b.csv", "/x//y.arrow", "dir/sub/");
  for (const path of paths) {
    if (path === "") continue;
    const split = splitPath(path);
    assert.equal(split.dir, dirname(path), path);
    assert.equal(split.name, basename(path), path);
    assert.equal(split.join(split.dir, ".x"), join(dirname(path), ".x"), path);
  }
});
