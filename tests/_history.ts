/**
 * An older reader from the repository's history, for tests that prove a reader
 * that predates a format change refuses the new files instead of misreading them.
 *
 * @module
 */
import assert from "node:assert/strict";

/**
 * Whether this run may start git and the repository holds `commit` (a shallow
 * clone does not; `test:unit` grants running zpaq only).
 *
 * @param commit A commit id.
 * @returns True when {@link readerAt} can take its reader.
 */
export async function historyHas(commit: string): Promise<boolean> {
  const run = await Deno.permissions.query({ name: "run", command: "git" });
  if (run.state !== "granted") return false;
  try {
    const found = await new Deno.Command("git", {
      args: ["cat-file", "-e", `${commit}^{commit}`],
      stdout: "null",
      stderr: "null",
    }).output();
    return found.success;
  } catch {
    return false;
  }
}

/**
 * The archive reader as it was at `commit`: its `format`, `codecs` and `internal`
 * folders extracted into `dir` (emptied first), then imported.
 *
 * @param commit A commit id ({@link historyHas} says whether it is there).
 * @param dir An absolute directory to extract into.
 * @returns That commit's `format/reader.ts`.
 */
export async function readerAt(
  commit: string,
  dir: string,
): Promise<typeof import("../format/reader.ts")> {
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.mkdir(dir, { recursive: true });
  const tar = await new Deno.Command("sh", {
    args: ["-c", `git archive ${commit} format codecs internal | tar -x -C '${dir}'`],
  }).output();
  assert.ok(tar.success, new TextDecoder().decode(tar.stderr));
  return await import(`${dir}/format/reader.ts`) as typeof import("../format/reader.ts");
}

/**
 * Opens `path` with an older reader (from {@link readerAt}) and asserts that reading
 * its rows fails with `code` (and a message matching `message`), never yields them all.
 *
 * @param old The older `format/reader.ts`.
 * @param path The archive.
 * @param code The expected error code, e.g. `UNKNOWN_PREDICTOR`.
 * @param message A pattern its message must match, when given.
 */
export async function assertReadRefused(
  old: typeof import("../format/reader.ts"),
  path: string,
  code: string,
  message?: RegExp,
): Promise<void> {
  const reader = await old.ArchiveReader.open(path);
  try {
    await assert.rejects(
      (async () => {
        for await (const _ of reader.read()) { /* drain */ }
      })(),
      (err: unknown) => {
        assert.ok(err instanceof Error && "code" in err, String(err));
        assert.equal(err.code, code);
        if (message) assert.match(err.message, message);
        return true;
      },
    );
  } finally {
    reader.close();
  }
}
