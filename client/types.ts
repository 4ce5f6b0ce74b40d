/**
 * The cluster's wire JSON, declared once: what the master's REST API answers and
 * accepts (`DESIGN.md`, "Master REST"), and what the master and its workers send
 * each other. Keys are snake_case, as on the wire. Types only.
 *
 * @module
 */
/** Status of a job. */
export type JobStatus = "QUEUED" | "RUNNING" | "DONE" | "FAILED" | "CANCELLED";

/** Longest `wait_s` of `GET /jobs/{id}` (seconds): below common proxy idle timeouts. */
export const MAX_JOB_WAIT_S = 55;

/** Status of a task. */
export type TaskStatus = "QUEUED" | "RUNNING" | "DONE" | "FAILED" | "CANCELLED";

/** Status of a worker, as the master sees it. */
export type WorkerStatus = "idle" | "busy" | "offline";

/** What a running job is doing: reading its source's layout, freezing chunks, or writing the archive. */
export type JobPhase = "preparing" | "freezing" | "writing" | "finished";

/**
 * A codec a job names: a registered codec's id (`zstd`, `lzma2`, `zpaq`) or `auto`.
 * A string here because the client does not load the codecs; the master checks it
 * against the registry's `CODEC_CHOICES` and answers 400 naming them.
 */
export type JobCodec = string;

/** Source formats (by extension when not given). */
export type JobSourceFormat = "csv" | "jsonl" | "parquet" | "arrow";

/** `POST /jobs` body. */
export interface SubmitRequest {
  /** Source file, as the master's filesystem names it. */
  source: string;
  /** Archive to write, on the master's filesystem. */
  destination: string;
  /** Codec (default `zstd`). */
  codec?: JobCodec;
  /** Rows per chunk and per task (default: the master's `--default-chunk`). */
  chunk_rows?: number;
  /** Source format, instead of guessing from the extension. */
  format?: JobSourceFormat;
  /**
   * Absolute directory relative `source`/`destination` resolve against when the
   * master has no data roots (the CLI sends its working directory). With data roots
   * relative paths resolve against the first root and this is ignored. Default: the
   * master's working directory.
   */
  cwd?: string;
}

/** `POST /jobs` answer (201), and `POST /jobs/{id}/cancel`'s. */
export interface SubmitResponse {
  /** The new job's id. */
  job_id: string;
  /** Its status. */
  status: JobStatus;
}

/** One task of a job, as `GET /jobs/{id}` lists it. */
export interface TaskRecord {
  /** Stable id (`<job_id>-t<index>`). */
  task_id: string;
  /** Position of the task's chunk in the archive (0-based). */
  index: number;
  /** Status. */
  status: TaskStatus;
  /** Attempts that counted (a worker going offline does not count). */
  attempts: number;
  /** Worker running it, or that ran it last; null before the first assignment. */
  worker_id: string | null;
  /** Rows of its chunk. */
  rows: number;
  /** Last error, when an attempt failed. */
  error: string | null;
  /** When its current or last attempt was handed out (ISO 8601); null while queued. */
  started_at?: string | null;
  /** When it ended (DONE, FAILED, CANCELLED; ISO 8601), else null. */
  finished_at?: string | null;
}

/** A job's figures so far (`GET /jobs`, the status page). */
export interface JobMetrics {
  /** Size of the source file in bytes, once prepared. */
  source_bytes: number | null;
  /** Rows of the tasks DONE. */
  rows_done: number;
  /** Seconds since the job started running (until it finished); null before it ran. */
  elapsed_s: number | null;
  /** Rows per second so far (`rows_done / elapsed_s`). */
  rows_per_s: number | null;
  /** Source megabytes (10^6 bytes) per second so far. */
  mb_per_s: number | null;
  /** Seconds left at the rate so far, while RUNNING. */
  eta_s: number | null;
  /** Source bytes per archive byte: exact when DONE, estimated from the chunks staged while RUNNING. */
  ratio: number | null;
}

/** A job without its tasks, as `GET /jobs` lists it. */
export interface JobSummary extends JobMetrics {
  /** Id. */
  job_id: string;
  /** Status. */
  status: JobStatus;
  /** What it is doing. */
  phase: JobPhase;
  /** Done fraction 0..1 (done tasks / tasks; 1 when DONE). */
  progress: number;
  /** Rows of the source, once the master has laid it out; null before. */
  total_rows: number | null;
  /** Source file. */
  source: string;
  /** Archive path. */
  destination: string;
  /** Codec asked for (`auto` included). */
  codec: JobCodec;
  /** Codec every block uses, once chosen; null before. */
  codec_used: string | null;
  /** Why `auto` chose it. */
  auto_reason: string | null;
  /** Rows per chunk. */
  chunk_rows: number;
  /** Tasks (chunks) in the job; null before the layout is known. */
  tasks_total: number | null;
  /** Tasks done. */
  tasks_done: number;
  /** Columns read as text because a value beyond the type sample did not fit. */
  widened_columns: string[];
  /** Submission time (ISO 8601). */
  created_at: string;
  /** First assignment time. */
  started_at: string | null;
  /** When it became DONE, FAILED or CANCELLED. */
  finished_at: string | null;
  /** Last change. */
  updated_at: string;
  /** Why it failed. */
  error: string | null;
  /** SHA-256 of the archive payload, when DONE. */
  payload_sha256: string | null;
  /** Archive size in bytes, when DONE. */
  archive_bytes: number | null;
  /** Namespace of the token that submitted it (null: submitted with auth off). */
  namespace: string | null;
  /** User who submitted it (null: auth off). */
  submitted_by: string | null;
}

/** `GET /jobs/{id}`: a job with its tasks. */
export interface JobRecord extends JobSummary {
  /** Every task, in chunk order. */
  tasks: TaskRecord[];
}

/** One worker, as `GET /workers` lists it. */
export interface WorkerRecord {
  /** Id (configured, or generated at the worker's start). */
  worker_id: string;
  /** Where the master reaches it. */
  url: string;
  /** Status. */
  status: WorkerStatus;
  /** Jobs it finished at least one task for. */
  jobs_done: number;
  /** Tasks it finished. */
  tasks_done: number;
  /** Tasks that failed on it. */
  tasks_failed: number;
  /** Last heartbeat (ISO 8601). */
  last_heartbeat: string;
  /** Seconds since the last heartbeat. */
  heartbeat_age_s: number;
  /** Task it runs, when busy. */
  task_id: string | null;
  /** First registration (ISO 8601). */
  registered_at: string;
}

/** `GET /health`. */
export interface HealthRecord {
  /** Always `ok` when the master answers. */
  status: "ok";
  /** The release version (`deno.json`). */
  version: string;
  /** Workers not offline. */
  workers: number;
  /** Idle workers. */
  idle_workers: number;
  /** Offline workers. */
  offline_workers: number;
  /** Jobs QUEUED or RUNNING. */
  active_jobs: number;
  /** Heartbeat interval the master expects, in seconds. */
  heartbeat_s: number;
}

/** A task a worker reports running (register and heartbeat bodies). */
export interface RunningTask {
  /** The task. */
  task_id: string;
  /** The lease it runs under. */
  lease: string;
}

/** `POST /workers/register` body. */
export interface RegisterRequest {
  /** The worker's id. */
  worker_id: string;
  /** Where the master reaches it; an unspecified host (`0.0.0.0`) is replaced by the caller's address. */
  url: string;
  /** The task it is still running (after a master restart), if any. */
  running?: RunningTask | null;
  /** Every task it holds (a worker with several slots); when given, `running` is ignored. */
  tasks?: RunningTask[];
  /** Tasks it may hold at once (default 1): small tasks queue on it while it reports. */
  slots?: number;
}

/** `POST /workers/register` answer. */
export interface RegisterResponse {
  /** The worker's id. */
  worker_id: string;
  /** Heartbeat interval to keep, in seconds. */
  heartbeat_s: number;
  /** The URL the master will use. */
  url: string;
  /** Tasks the worker must drop (it runs one the master no longer expects from it). */
  drop: string[];
}

/** `POST /workers/{id}/heartbeat` body (optional). */
export interface HeartbeatRequest {
  /** The task it runs, or null when idle. */
  running?: RunningTask | null;
  /** Every task it holds (a worker with several slots); when given, `running` is ignored. */
  tasks?: RunningTask[];
}

/** `POST /workers/{id}/heartbeat` answer. */
export interface HeartbeatResponse {
  /** Always true. */
  ok: true;
  /** Tasks the worker must drop (cancelled, re-queued elsewhere, or unknown). */
  drop: string[];
}

/** An error as a worker reports it. */
export interface TaskErrorReport {
  /** Error code (`PARSE_FAILED`, `SCHEMA_MISMATCH`, `BINARY_MISSING`...), or `ERROR`. */
  code: string;
  /** The message. */
  message: string;
  /** The column it concerns (a SCHEMA_MISMATCH names one). */
  column?: string;
}

/** `POST /tasks/{id}/failed` body. */
export interface FailedRequest {
  /** The lease the attempt ran under. */
  lease: string;
  /** The worker. */
  worker_id: string;
  /** What went wrong (a string is read as `{code: "ERROR", message}`). */
  error: TaskErrorReport | string;
}

/** What the task reads: a window of rows (or of bytes, for CSV and JSON lines). */
export interface TaskWindow {
  /** `bytes` for CSV and JSON lines, `rows` for Parquet and Arrow IPC. */
  unit: "bytes" | "rows";
  /** Start of the window (inclusive). */
  start: number;
  /** End of the window (exclusive). */
  end: number;
  /** Rows the whole window holds (a check that the source did not change). */
  span_rows: number;
  /** Rows of the window to skip before the chunk starts. */
  skip: number;
  /** Rows of the chunk. */
  rows: number;
  /** Batch size the window is read in (the local freeze's batch size, so validity bitmaps agree). */
  batch_rows: number;
}

/** One column of the job's schema (`format/column.ts` `Field`). */
export interface FieldJson {
  /** Column name. */
  name: string;
  /** Logical type: a `ColumnType` of `format/column.ts` (`int64`, `decimal`, `json`, …). */
  type: string;
  /** Whether nulls may occur. */
  nullable: boolean;
  /** Timestamp, time or duration unit. */
  unit?: "s" | "ms" | "us" | "ns";
  /** Timestamp zone. */
  timezone?: string;
  /** Decimal digits. */
  precision?: number;
  /** Decimal fraction digits. */
  scale?: number;
}

/**
 * What a column is read as after a value did not fit its inferred type: `json` for
 * JSON lines (each value keeps its JSON text, so a number stays a number), `string`
 * for the other formats (`io/source.ts` `fallbackType`).
 */
export type TextFallback = "string" | "json";

/** A column's prediction plan (`format/header.ts` `ColumnPlan`). */
export interface ColumnPlanJson {
  /** Columns it is conditioned on. */
  deps: string[];
  /** Float quantization. */
  quantization: "QUANT_NONE" | "QUANT_HIGH" | "QUANT_MEDIUM" | "QUANT_LOW";
}

/** `POST /tasks` on a worker: one chunk to freeze. */
export interface TaskSpec {
  /** The task. */
  task_id: string;
  /** Its job. */
  job_id: string;
  /** Chunk index. */
  index: number;
  /** Lease: the id of this attempt; results carry it back. */
  lease: string;
  /** The worker it was given to. */
  worker_id: string;
  /** The source, as the master saw it. */
  source: {
    /** Path on the master's filesystem (a worker reads it directly when it sees the same file). */
    path: string;
    /** Format. */
    format: JobSourceFormat;
    /** Size in bytes when the job was laid out. */
    bytes: number;
    /** Device of the file the job was accepted for (a worker reads only that file). */
    dev: number;
    /** Its inode. */
    ino: number;
    /** Its modification time, epoch milliseconds (null where unknown). */
    mtime_ms: number | null;
    /**
     * The object the job reads, when its source is in object storage (`path` is then the
     * master's copy): a worker that does not see that copy reads its byte range from here.
     */
    uri?: string;
    /** The object's ETag when the master copied it (a different one is SOURCE_CHANGED). */
    etag?: string;
    /**
     * A CSV source's delimiter, told once by the master from the file's start: every
     * window is read with it, without reading the file's start again (absent: the
     * reader tells it from the file's start itself).
     */
    delimiter?: string;
  };
  /** What to read. */
  window: TaskWindow;
  /** The job's schema (every chunk is read with it). */
  schema: FieldJson[];
  /** Columns read as text from now on, after a value that did not fit (every reader is opened with these). */
  types: Record<string, TextFallback>;
  /** The job's plan, by column. */
  plans: Record<string, ColumnPlanJson>;
  /** Codec id of every block. */
  codec: string;
}

/** The JSON part of a frozen chunk sent to `POST /tasks/{id}/done` (see `cluster/wire.ts`). */
export interface ChunkMeta {
  /** The task. */
  task_id: string;
  /** The lease it ran under. */
  lease: string;
  /** The worker. */
  worker_id: string;
  /** Rows of the chunk. */
  rows: number;
  /** One entry per block, in schema order; the block bytes follow the JSON in this order. */
  blocks: {
    /** Stored length. */
    length: number;
    /** Length before the codec. */
    raw_length: number;
    /** Predictor id. */
    predictor: string;
    /** SHA-256 (hex) of the stored bytes. */
    sha256: string;
  }[];
  /** Per-column statistics, in schema order. */
  stats: {
    /** Smallest value. */
    min: string | number | boolean | null;
    /** Largest value. */
    max: string | number | boolean | null;
    /** Nulls. */
    null_count: number;
  }[];
}
