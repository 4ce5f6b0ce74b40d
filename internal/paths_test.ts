import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import { confinePath, PathError, type PathErrorCode, resolveDataRoots } from "./paths.ts";

const TMP = resolve(".tmp/internal_paths");

const isCode = (code: PathErrorCode) => (e: unknown) => e instanceof PathError && e.code === code;

async function layout(): Promise<{ root: string; other: string; roots: string[] }> {
  await Deno.remove(TMP, { recursive: true }).catch(() => {});
  const root = join(TMP, "data");
  const other = join(TMP, "outside");
  await Deno.mkdir(join(root, "team-a", "sub"), { recursive: true });
  await Deno.mkdir(join(root, "team-b"), { recursive: true });
  await Deno.mkdir(other, { recursive: true });
  await Deno.writeTextFile(join(root, "team-a", "x.pf"), "x");
  await Deno.writeTextFile(join(root, "top.pf"), "x");
  await Deno.writeTextFile(join(other, "secret.pf"), "x");
  await Deno.symlink(join(other, "secret.pf"), join(root, "team-a", "escape.pf"));
  await Deno.symlink(other, join(root, "team-a", "escape-dir"));
  await Deno.symlink(join(root, "team-b"), join(root, "team-a", "to-b"));
  await Deno.symlink(join(root, "team-a", "x.pf"), join(root, "team-a", "inside.pf"));
  await Deno.symlink(join(other, "nothing-here"), join(root, "team-a", "dangling"));
  return { root, other, roots: await resolveDataRoots([root]) };
}

Deno.test("confinePath() refuses every way out of the data roots", async (t) => {
  const { root, other, roots } = await layout();
  const outside: [string, string][] = [
    ["../ climbing out", "../outside/secret.pf"],
    ["deep ../ climbing out", "team-a/sub/../../../outside/secret.pf"],
    ["an absolute path elsewhere", join(other, "secret.pf")],
    ["/etc/passwd", "/etc/passwd"],
    ["the root's parent", ".."],
    ["a symlinked file pointing out", "team-a/escape.pf"],
    ["a symlinked directory pointing out", "team-a/escape-dir/secret.pf"],
    ["a new file under a symlinked directory pointing out", "team-a/escape-dir/new.pf"],
    ["a dangling symlink", "team-a/dangling"],
    ["a file under a dangling symlink", "team-a/dangling/x.pf"],
  ];
  for (const [name, path] of outside) {
    await t.step(`${name}: PATH_OUTSIDE_ROOT`, async () => {
      await assert.rejects(confinePath(path, roots), isCode("PATH_OUTSIDE_ROOT"));
    });
  }
  for (const path of ["", "   ", "a\0b", "x".repeat(5000)]) {
    await t.step(`${JSON.stringify(path.slice(0, 8))}: PATH_INVALID`, async () => {
      await assert.rejects(confinePath(path, roots), isCode("PATH_INVALID"));
    });
  }
  await t.step("paths inside are resolved and named by namespace", async () => {
    const real = roots[0]!;
    for (
      const [path, expected, namespace] of [
        ["team-a/x.pf", join(real, "team-a", "x.pf"), "team-a"],
        [join(root, "team-a", "x.pf"), join(real, "team-a", "x.pf"), "team-a"],
        ["team-a/sub/../x.pf", join(real, "team-a", "x.pf"), "team-a"],
        ["team-a/inside.pf", join(real, "team-a", "x.pf"), "team-a"],
        ["team-a/to-b", join(real, "team-b"), "team-b"],
        ["team-a/not-yet/out.pf", join(real, "team-a", "not-yet", "out.pf"), "team-a"],
        ["team-a", join(real, "team-a"), "team-a"],
        ["top.pf", join(real, "top.pf"), ""],
        [".", real, ""],
      ] as const
    ) {
      const c = await confinePath(path, roots);
      assert.equal(c.path, expected, path);
      assert.equal(c.namespace, namespace, path);
      assert.equal(c.root, real);
    }
  });
  await t.step("a relative path resolves against the base", async () => {
    const c = await confinePath("x.pf", roots, { base: join(root, "team-a") });
    assert.equal(c.namespace, "team-a");
  });
});

Deno.test("resolveDataRoots() needs existing directories and resolves their symlinks", async () => {
  const { root } = await layout();
  await Deno.symlink(root, join(TMP, "alias"));
  const roots = await resolveDataRoots([join(TMP, "alias"), root]);
  assert.deepEqual(roots, [await Deno.realPath(root)]);
  await assert.rejects(resolveDataRoots([join(TMP, "missing")]), isCode("PATH_INVALID"));
  await assert.rejects(resolveDataRoots([join(root, "top.pf")]), isCode("PATH_INVALID"));
  const c = await confinePath(join(TMP, "alias", "team-a", "x.pf"), roots);
  assert.equal(c.namespace, "team-a");
});

Deno.test("confinePath() confines object URIs to data roots that are object-storage prefixes", async () => {
  const local = await Deno.makeTempDir({ prefix: "permafrost-roots-" });
  try {
    const roots = await resolveDataRoots([local, "s3://bkt/root/", "az://box"]);
    assert.deepEqual(roots.slice(1), ["s3://bkt/root", "az://box"]);
    assert.deepEqual(await confinePath("s3://bkt/root/team-a/x.pf", roots), {
      path: "s3://bkt/root/team-a/x.pf",
      root: "s3://bkt/root",
      relative: "team-a/x.pf",
      namespace: "team-a",
    });
    assert.equal((await confinePath("az://box/inbox.csv", roots)).namespace, "");
    for (const outside of ["s3://bkt/rootless/x.pf", "s3://bkt/other/x.pf", "gs://bkt/root/x.pf"]) {
      await assert.rejects(confinePath(outside, roots), { code: "PATH_OUTSIDE_ROOT" }, outside);
    }
    await assert.rejects(confinePath("s3://bkt/root/a/../../x", roots), { code: "PATH_INVALID" });
    // Relative paths resolve against the first local root.
    assert.equal((await confinePath("team-b/y.pf", roots)).namespace, "team-b");
    await assert.rejects(confinePath("y.pf", ["s3://bkt/root"]), { code: "PATH_INVALID" });
    await assert.rejects(resolveDataRoots(["s3://bkt/a/../b"]), { code: "PATH_INVALID" });
  } finally {
    await Deno.remove(local, { recursive: true });
  }
});
