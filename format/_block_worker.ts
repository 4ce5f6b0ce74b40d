/**
 * The body of one block-pool Worker: receives `ChunkJob`s, answers encoded
 * chunks (or a serialized error). Runs `INLINE_ENCODER` off the main thread
 * ({@link servePoolWorker} in `pool.ts` holds the loop, shared with other scripts).
 *
 * @module
 */
import { servePoolWorker } from "./pool.ts";

servePoolWorker();
