/** `ChunkStaging`: appends chunks per job and generation, reads them back, deletes them. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "./_test_utils.ts";
import { ChunkStaging, type StagedAt } from "./staging.ts";

Deno.test("ChunkStaging appends a job's chunks to one file per generation and reads them back", async () => {
  const dir = await tempDir("staging-");
  const staging = new ChunkStaging(dir, { fsync: true });
  try {
    const at = (bytes: Uint8Array, generation = 1): StagedAt => {
      const { path, offset } = staging.append("job", generation, bytes);
      return { staged_path: path, staged_offset: offset, staged_bytes: bytes.length };
    };
    const a = at(Uint8Array.of(1, 2, 3));
    const b = at(Uint8Array.of(4, 5));
    assert.equal(a.staged_path, join(dir, "staging", "job", "g1.chunks"));
    assert.deepEqual([a.staged_offset, b.staged_offset], [0, 3]);
    staging.close("job");
    const c = at(Uint8Array.of(6)); // reopened: appends after what is there
    assert.equal(c.staged_offset, 5);
    const d = at(Uint8Array.of(7, 8), 2);
    assert.equal(d.staged_path, join(dir, "staging", "job", "g2.chunks"));
    const reader = staging.reader();
    try {
      assert.deepEqual([...(await reader.read(b))!], [4, 5]);
      assert.deepEqual([...(await reader.read(c))!], [6]);
      assert.deepEqual([...(await reader.read(d))!], [7, 8]);
      // Past the end of the file, or never staged: null, never other bytes.
      assert.equal(await reader.read({ ...c, staged_bytes: 2 }), null);
      assert.equal(
        await reader.read({ staged_path: null, staged_offset: null, staged_bytes: null }),
        null,
      );
    } finally {
      reader.close();
    }
    staging.removeGeneration("job", 1);
    assert.equal(await Deno.stat(a.staged_path!).catch(() => null), null);
    assert.ok(await Deno.stat(d.staged_path!));
    await staging.remove("job");
    assert.equal(await Deno.stat(join(dir, "staging", "job")).catch(() => null), null);
  } finally {
    staging.closeAll();
    await Deno.remove(dir, { recursive: true });
  }
});
