/**
 * The master's staged chunks: the frozen chunks workers send, appended to one file
 * per job and generation under `<data dir>/staging/<job id>/g<generation>.chunks`
 * until the archive is written, and read back when it is. Where each chunk landed
 * (path, offset, bytes, hash) is recorded in the job store by the master, so a
 * restarted master finds them again.
 *
 * @module
 */
import { dirname, join } from "node:path";

/** Staging files up to this size are read whole when the archive is written. */
const WHOLE_READ_BYTES = 256 * 1024 * 1024;

/** Where a chunk was staged, as a task row records it. */
export interface StagedAt {
  /** Its staging file, or null when it has none. */
  staged_path: string | null;
  /** Its first byte there. */
  staged_offset: number | null;
  /** Its length. */
  staged_bytes: number | null;
}

/** Reads staged chunks back, keeping files open until `close`. */
export interface StagedReader {
  /** The chunk's bytes, or null when they are missing or cut short. */
  read(at: StagedAt): Promise<Uint8Array | null>;
  /** Closes the files it opened. */
  close(): void;
}

/** The staging files of every job of one master. */
export class ChunkStaging {
  #dir: string;
  #fsync: boolean;
  /** The open file of each job being staged. */
  #open = new Map<string, { path: string; file: Deno.FsFile; size: number }>();

  /**
   * @param dataDir The master's data directory (staging lives under `staging/`).
   * @param options `fsync` each chunk before it is recorded.
   */
  constructor(dataDir: string, options: { fsync: boolean }) {
    this.#dir = join(dataDir, "staging");
    this.#fsync = options.fsync;
  }

  /**
   * Appends a chunk's body to the job's staging file of this generation and returns
   * where it landed. Synchronous on purpose: one write to the page cache costs far
   * less than a file per chunk or the thread hand-offs of async calls, which dominate
   * with small tasks; and nothing else can run between the master's lease check and
   * its record.
   *
   * @param jobId The job.
   * @param generation The job's generation (a re-laid-out job stages anew).
   * @param bytes The chunk's body.
   * @returns Its file and offset.
   */
  append(jobId: string, generation: number, bytes: Uint8Array): { path: string; offset: number } {
    const path = join(this.#dir, jobId, `g${generation}.chunks`);
    let s = this.#open.get(jobId);
    if (s && s.path !== path) {
      this.close(jobId);
      s = undefined;
    }
    if (!s) {
      Deno.mkdirSync(dirname(path), { recursive: true });
      const file = Deno.openSync(path, { read: true, write: true, create: true });
      s = { path, file, size: file.statSync().size };
      this.#open.set(jobId, s);
    }
    const offset = s.size;
    try {
      s.file.seekSync(offset, Deno.SeekMode.Start);
      let at = 0;
      while (at < bytes.length) at += s.file.writeSync(bytes.subarray(at));
      if (this.#fsync) s.file.syncDataSync();
    } catch (err) {
      // Unknown how much landed: reopen next time and append after it (unreferenced bytes).
      this.close(jobId);
      throw err;
    }
    s.size = offset + bytes.length;
    return { path, offset };
  }

  /** Closes the job's staging file (appending later reopens it). */
  close(jobId: string): void {
    const s = this.#open.get(jobId);
    if (!s) return;
    this.#open.delete(jobId);
    try {
      s.file.close();
    } catch { /* already closed */ }
  }

  /** Closes every open staging file. */
  closeAll(): void {
    for (const jobId of [...this.#open.keys()]) this.close(jobId);
  }

  /** Deletes everything the job staged. */
  remove(jobId: string): Promise<void> {
    this.close(jobId);
    return Deno.remove(join(this.#dir, jobId), { recursive: true }).catch(() => {});
  }

  /** Deletes one generation's file of a job (the job was laid out again). */
  removeGeneration(jobId: string, generation: number): void {
    this.close(jobId);
    try {
      Deno.removeSync(join(this.#dir, jobId, `g${generation}.chunks`));
    } catch { /* never staged anything */ }
  }

  /**
   * A reader of staged chunks: small staging files (most jobs) are read whole, once;
   * big ones chunk by chunk.
   */
  reader(): StagedReader {
    const files = new Map<string, Deno.FsFile>();
    const whole = new Map<string, Uint8Array | null>();
    return {
      async read(t) {
        if (t.staged_path === null || t.staged_offset === null || t.staged_bytes === null) {
          return null;
        }
        const end = t.staged_offset + t.staged_bytes;
        try {
          if (!whole.has(t.staged_path)) {
            const size = (await Deno.stat(t.staged_path)).size;
            whole.set(
              t.staged_path,
              size <= WHOLE_READ_BYTES ? await Deno.readFile(t.staged_path) : null,
            );
          }
          const all = whole.get(t.staged_path);
          if (all) return end <= all.length ? all.subarray(t.staged_offset, end) : null;
          let file = files.get(t.staged_path);
          if (!file) {
            file = await Deno.open(t.staged_path, { read: true });
            files.set(t.staged_path, file);
          }
          await file.seek(t.staged_offset, Deno.SeekMode.Start);
          const out = new Uint8Array(t.staged_bytes);
          let at = 0;
          while (at < out.length) {
            const n = await file.read(out.subarray(at));
            if (n === null) return null;
            at += n;
          }
          return out;
        } catch {
          return null;
        }
      },
      close() {
        for (const f of files.values()) f.close();
        files.clear();
      },
    };
  }
}
