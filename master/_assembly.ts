/**
 * The master's assembly: once every task of a job is DONE, its archive is written in
 * chunk order from the staged chunks (`ArchiveWriter`: temp file, fsync, rename) with
 * the header a local freeze writes (`format/new_archive.ts`). A staged chunk that went
 * missing or bad on disk (its SHA-256 no longer matches) is frozen again, not trusted.
 * The destination's directory must still be the one recorded when the job was
 * accepted, before the write and once the archive is in place (`_job_files.ts`); a
 * destination in object storage is written here and uploaded (`_remote_files.ts`).
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { Schema } from "../format/column.ts";
import type { ColumnPlan } from "../format/header.ts";
import { ArchiveWriter } from "../format/writer.ts";
import { newArchiveHeader } from "../format/new_archive.ts";
import { decodeChunkBody } from "../cluster/wire.ts";
import { dirname } from "node:path";
import { storeFor } from "../storage/registry.ts";
import { uploadFile } from "../storage/transfer.ts";
import { checkDestinationInPlace } from "./_job_files.ts";
import { isRemote, localDestination, removeJobCopies } from "./_remote_files.ts";
import type { JobRow, TaskRow } from "./store.ts";
import { errorText, type MasterState, unstage } from "./_state.ts";

/** Writes finished jobs' archives. */
export class Assembly {
  #s: MasterState;

  /** @param state The master's shared state. */
  constructor(state: MasterState) {
    this.#s = state;
  }

  /** Starts writing a job's archive (once; not for a job that has ended). */
  start(job: JobRow): void {
    if (this.#s.assembling.has(job.job_id) || !this.#s.active(job)) return;
    const state = { cancelled: false };
    this.#s.assembling.set(job.job_id, state);
    job.phase = "writing";
    job.updated_at = this.#s.now();
    this.#s.store.putJob(job);
    this.#s.track(
      this.#assemble(job, state).finally(() => this.#s.assembling.delete(job.job_id)),
    );
  }

  async #assemble(job: JobRow, state: { cancelled: boolean }): Promise<void> {
    const tasks = [...this.#s.tasks.get(job.job_id)!].sort((a, b) => a.index - b.index);
    this.#s.staging.close(job.job_id);
    const reader = this.#s.staging.reader();
    try {
      await this.#writeArchive(job, state, tasks, (t) => reader.read(t));
    } finally {
      reader.close();
    }
  }

  async #writeArchive(
    job: JobRow,
    state: { cancelled: boolean },
    tasks: TaskRow[],
    read: (t: TaskRow) => Promise<Uint8Array | null>,
  ): Promise<void> {
    // A staged chunk that went missing or bad on disk is frozen again, not trusted.
    const lost: TaskRow[] = [];
    for (const t of tasks) {
      const bytes = await read(t);
      const ok = bytes !== null &&
        createHash("sha256").update(bytes).digest("hex") === t.staged_sha256;
      if (!ok) lost.push(t);
    }
    if (state.cancelled) return;
    if (lost.length > 0) {
      for (const t of lost) {
        t.status = "QUEUED";
        unstage(t);
        this.#s.queues.get(job.job_id)!.push(t);
        this.#s.log.warn("staged chunk missing or damaged; freezing it again", {
          task_id: t.task_id,
          job_id: job.job_id,
        });
      }
      job.phase = "freezing";
      this.#s.forgetDone(job.job_id);
      this.#s.store.transaction(() => {
        this.#s.store.putJob(job);
        for (const t of lost) this.#s.store.putTask(t);
      });
      this.#s.hooks.schedule();
      return;
    }
    const prepared = job.prepared!;
    const schema = prepared.schema as Schema;
    const h = newArchiveHeader(
      schema,
      prepared.codec,
      prepared.auto_reason,
      prepared.plans as Record<string, ColumnPlan>,
      { chunkRows: job.chunk_rows },
    );
    let writer: ArchiveWriter | undefined;
    // A remote destination is written here first, then uploaded (`_remote_files.ts`).
    const remote = isRemote(job.destination);
    const target = localDestination(this.#s.dataDir, job);
    try {
      if (remote) await Deno.mkdir(dirname(target), { recursive: true });
      else await checkDestinationInPlace(job.destination);
      writer = await ArchiveWriter.create(target, h);
      for (const t of tasks) {
        if (state.cancelled) break;
        const bytes = await read(t);
        if (bytes === null) throw new Error(`staged chunk of task ${t.index} vanished`);
        const { chunk } = decodeChunkBody(bytes);
        await writer.writeChunk(chunk);
      }
      if (state.cancelled) {
        await writer.abort();
        return;
      }
      const written = await writer.finish();
      if (state.cancelled) {
        await Deno.remove(target).catch(() => {});
        return;
      }
      if (remote) {
        try {
          await uploadFile(target, job.destination);
        } finally {
          await Deno.remove(target).catch(() => {});
        }
        if (state.cancelled) {
          await storeFor(job.destination).delete(job.destination).catch(() => {});
          return;
        }
      } else {
        // The directory was checked a moment before the rename; a swap in between
        // fails the job here rather than report an archive that is somewhere else.
        await checkDestinationInPlace(job.destination);
      }
      // The archive is in place: the copies are not needed (gone before anyone hears DONE).
      await removeJobCopies(this.#s.dataDir, job.job_id);
      const now = this.#s.now();
      job.status = "DONE";
      job.phase = "finished";
      job.total_rows = written.rows;
      job.payload_sha256 = written.payload_sha256;
      job.archive_bytes = written.bytes;
      job.finished_at = now;
      job.updated_at = now;
      for (const t of tasks) unstage(t);
      this.#s.store.transaction(() => {
        this.#s.store.putJob(job);
        for (const t of tasks) this.#s.store.putTask(t);
      });
      this.#s.wakeFinishWaiters(job.job_id);
      await this.#s.staging.remove(job.job_id);
      this.#s.log.info("job done", {
        job_id: job.job_id,
        rows: written.rows,
        chunks: written.chunks,
        bytes: written.bytes,
        payload_sha256: written.payload_sha256,
      });
    } catch (err) {
      await writer?.abort();
      if (state.cancelled || !this.#s.active(job)) return;
      this.#s.finishJob(job, "FAILED", `Cannot write archive: ${errorText(err)}`);
    }
  }
}
