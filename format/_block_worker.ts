/**
 * The body of one block-pool Worker: receives `BlockJob`s, answers encoded
 * blocks (or a serialized error). Runs `INLINE_ENCODER` off the main thread.
 *
 * @module
 */
import { type BlockJob, INLINE_ENCODER } from "./chunk.ts";
import type { PoolReply } from "./pool.ts";

interface Scope {
  onmessage: ((event: MessageEvent<{ id: number; job: BlockJob }>) => void) | null;
  postMessage(message: PoolReply, transfer?: Transferable[]): void;
}
const scope = self as unknown as Scope;

scope.onmessage = async (event) => {
  const { id, job } = event.data;
  try {
    const { block, warnings, stats } = await INLINE_ENCODER.encode(job);
    scope.postMessage({ id, ok: true, block, warnings, stats }, [
      block.bytes.buffer as ArrayBuffer,
    ]);
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
