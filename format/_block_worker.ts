/**
 * The body of one block-pool Worker: receives `ChunkJob`s, answers encoded
 * chunks (or a serialized error). Runs `INLINE_ENCODER` off the main thread.
 *
 * @module
 */
import { type ChunkJob, INLINE_ENCODER } from "./chunk.ts";
import { type PoolReply, type PostedJob, unpackJob } from "./pool.ts";

interface Scope {
  onmessage: ((event: MessageEvent<{ id: number; job: PostedJob }>) => void) | null;
  postMessage(message: PoolReply, transfer?: Transferable[]): void;
}
const scope = self as unknown as Scope;

// The pool may queue a second job while one runs: chain them, so a Worker encodes
// one chunk at a time (an async codec such as zpaq would otherwise interleave).
let tail: Promise<void> = Promise.resolve();
scope.onmessage = (event) => {
  const { id, job } = event.data;
  tail = tail.then(() => run(id, unpackJob(job)));
};

async function run(id: number, job: ChunkJob): Promise<void> {
  try {
    const result = await INLINE_ENCODER.encode(job);
    const buffers = result.chunk.blocks.map((b) => b.bytes.buffer as ArrayBuffer);
    scope.postMessage({ id, ok: true, result }, buffers);
  } catch (err) {
    const e = err as { name?: string; code?: string; message?: string };
    scope.postMessage({
      id,
      ok: false,
      error: {
        name: e?.name ?? "Error",
        code: e?.code ?? null,
        message: e?.message ?? String(err),
      },
    });
  }
}
