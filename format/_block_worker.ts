/**
 * The body of one block-pool Worker: receives `ChunkJob`s, answers encoded
 * chunks (or a serialized error). Runs `INLINE_ENCODER` off the main thread.
 *
 * @module
 */
import { type ChunkJob, INLINE_ENCODER } from "./chunk.ts";
import type { PoolReply } from "./pool.ts";

interface Scope {
  onmessage: ((event: MessageEvent<{ id: number; job: ChunkJob }>) => void) | null;
  postMessage(message: PoolReply, transfer?: Transferable[]): void;
}
const scope = self as unknown as Scope;

scope.onmessage = async (event) => {
  const { id, job } = event.data;
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
};
