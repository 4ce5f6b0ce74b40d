/**
 * The master's membership: workers register (saying how many tasks they may hold at
 * once, `slots`, default 1), send heartbeats, and go offline when silent for
 * {@link MISSED_HEARTBEATS} heartbeat intervals (every task they held re-queued
 * without counting the attempt). What the master and a worker believe the worker
 * holds is reconciled on every register and heartbeat: a task the worker should not
 * hold is dropped there, a task it does not hold is re-queued here. After a restart, a task
 * still RUNNING waits 3 heartbeat intervals for its worker to re-register.
 *
 * @module
 */
import { JobError } from "../client/errors.ts";
import type {
  HeartbeatRequest,
  HeartbeatResponse,
  RegisterRequest,
  RegisterResponse,
  RunningTask,
  WorkerRecord,
} from "../client/types.ts";
import { workerUrl } from "./transport.ts";
import { iso, type MasterState, WorkerState } from "./_state.ts";

/**
 * The tasks a register or heartbeat says the worker holds: `tasks` (a worker with
 * several slots), else `running` (one task, or none).
 */
function heldTasks(req: { running?: RunningTask | null; tasks?: RunningTask[] }): RunningTask[] {
  if (req.tasks) return req.tasks;
  return req.running ? [req.running] : [];
}

/** Heartbeat intervals of silence after which a worker is offline. */
export const MISSED_HEARTBEATS = 3;

/** Who is in the cluster, and whether they are still there. */
export class Membership {
  #s: MasterState;

  /** @param state The master's shared state. */
  constructor(state: MasterState) {
    this.#s = state;
  }

  /**
   * Registers (or re-registers) a worker.
   *
   * @param req Id, URL, and the task it still runs.
   * @param remoteHost The caller's address, used when the URL's host is unspecified (`0.0.0.0`).
   * @returns Heartbeat interval, the URL used, and tasks to drop.
   */
  register(req: RegisterRequest, remoteHost?: string): RegisterResponse {
    const now = this.#s.now();
    const url = workerUrl(req.url, remoteHost);
    const old = this.#s.workers.get(req.worker_id);
    const worker = old ?? new WorkerState(req.worker_id, url, now, this.#s);
    worker.url = url;
    worker.last_heartbeat = now;
    worker.slots = req.slots ?? 1;
    if (!old) this.#s.workers.set(req.worker_id, worker);
    const held = heldTasks(req);
    // Tasks the master believes this worker runs, but it does not: re-queue them.
    const claimed = new Set(held.map((r) => r.task_id));
    for (const t of [...this.#s.running]) {
      if (t.worker_id === worker.worker_id && !claimed.has(t.task_id)) {
        worker.release(t.task_id);
        this.#s.requeue(t, `worker ${worker.worker_id} re-registered without it`);
      }
    }
    const drop = this.#reconcile(worker, held, true);
    this.#s.log.info(old ? "worker re-registered" : "worker registered", {
      worker_id: worker.worker_id,
      url,
      slots: worker.slots,
      status: worker.status,
    });
    this.#s.hooks.schedule();
    return { worker_id: worker.worker_id, heartbeat_s: this.#s.heartbeatMs / 1000, url, drop };
  }

  /**
   * Records a heartbeat.
   *
   * @param workerId The worker.
   * @param req The tasks it holds, if any.
   * @returns Tasks to drop.
   * @throws {JobError} WORKER_NOT_FOUND when the worker never registered (it should register).
   */
  heartbeat(workerId: string, req: HeartbeatRequest = {}): HeartbeatResponse {
    const worker = this.#s.workers.get(workerId);
    if (!worker) {
      throw new JobError(
        "WORKER_NOT_FOUND",
        `No worker '${workerId}': register with POST /workers/register`,
      );
    }
    worker.last_heartbeat = this.#s.now();
    const drop = this.#reconcile(worker, heldTasks(req), false);
    this.#s.hooks.schedule();
    return { ok: true, drop };
  }

  /**
   * Aligns what the master and a worker believe the worker holds; returns the tasks
   * it must drop. A task it holds under the current lease stays (and is adopted, after
   * a restart); one it should not hold (cancelled, re-queued elsewhere, already done)
   * is dropped there; one the master gave it but it does not hold is re-queued, unless
   * it was given moments ago (the hand-out may still be on its way).
   */
  #reconcile(worker: WorkerState, held: RunningTask[], registering: boolean): string[] {
    const drop: string[] = [];
    if (worker.offline) {
      this.#s.log.info("worker back online", { worker_id: worker.worker_id });
      worker.offline = false;
    }
    worker.sure();
    const kept = new Set<string>();
    for (const running of held) {
      const t = this.#s.taskById.get(running.task_id);
      if (
        t && t.status === "RUNNING" && t.lease === running.lease &&
        t.worker_id === worker.worker_id
      ) {
        if (!worker.holds(t.task_id)) worker.hold(t.task_id, this.#s.large(t));
        kept.add(t.task_id);
        continue;
      }
      // It drops it at once, so its state here stands.
      drop.push(running.task_id);
      worker.release(running.task_id);
    }
    const now = this.#s.now();
    for (const id of [...worker.tasks]) {
      if (kept.has(id)) continue;
      const t = this.#s.taskById.get(id);
      const mine = t !== undefined && t.status === "RUNNING" && t.worker_id === worker.worker_id;
      // Not yet started on the worker (the assignment is in flight): give it time.
      const young = t?.started_at != null && now - t.started_at < 2 * this.#s.heartbeatMs;
      if (mine && young && !registering) continue;
      worker.release(id);
      if (mine) this.#s.requeue(t, `worker ${worker.worker_id} does not run it`);
    }
    return drop;
  }

  /** Marks silent workers offline and re-queues their tasks (the caller's clock tick). */
  sweep(): void {
    const now = this.#s.now();
    const silence = MISSED_HEARTBEATS * this.#s.heartbeatMs;
    for (const w of this.#s.workers.values()) {
      if (w.offline || now - w.last_heartbeat <= silence) continue;
      this.#s.log.warn("worker offline", {
        worker_id: w.worker_id,
        silent_s: (now - w.last_heartbeat) / 1000,
      });
      this.#s.workerOffline(w, "went offline");
    }
    if (now - this.#s.startedAt <= silence) return;
    for (const t of [...this.#s.running]) {
      // Running when the master restarted; its worker never came back.
      if (t.worker_id === null || !this.#s.workers.has(t.worker_id)) {
        this.#s.requeue(t, `worker ${t.worker_id} did not re-register`);
      }
    }
  }

  /** Every worker, in registration order. */
  list(): WorkerRecord[] {
    const now = this.#s.now();
    return [...this.#s.workers.values()].map((w) => ({
      worker_id: w.worker_id,
      url: w.url,
      status: w.status,
      jobs_done: w.jobs.size,
      tasks_done: w.tasks_done,
      tasks_failed: w.tasks_failed,
      last_heartbeat: iso(w.last_heartbeat)!,
      heartbeat_age_s: Math.max(0, (now - w.last_heartbeat) / 1000),
      task_id: w.task_id,
      registered_at: iso(w.registered_at)!,
    }));
  }

  /** Workers not offline, idle, and offline. */
  counts(): { workers: number; idle_workers: number; offline_workers: number } {
    const workers = [...this.#s.workers.values()];
    return {
      workers: workers.filter((w) => w.status !== "offline").length,
      idle_workers: workers.filter((w) => w.status === "idle").length,
      offline_workers: workers.filter((w) => w.status === "offline").length,
    };
  }
}
