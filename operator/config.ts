/**
 * The operator's settings (flag > `PERMAFROST_OPERATOR_*` variable > default), as the
 * Helm chart sets them. In a pod the Kubernetes API, its CA and the service account's
 * token and namespace come from where Kubernetes puts them.
 *
 * @module
 */
import {
  type ConfigTable,
  intParser,
  LOG_FORMAT_SETTING,
  LOG_LEVEL_SETTING,
  pathParser,
  type Setting,
  setting,
  stringParser,
  urlParser,
} from "../internal/config.ts";
import type { LogFormatChoice, LogLevel } from "../internal/log.ts";

/** The table of {@link OPERATOR_CONFIG}. */
export interface OperatorSettings extends ConfigTable {
  /** `--master-url` / `PERMAFROST_OPERATOR_MASTER_URL`. */
  readonly masterUrl: Setting<string>;
  /** `--master-token` / `PERMAFROST_OPERATOR_MASTER_TOKEN`. */
  readonly masterToken: Setting<string>;
  /** `--api-url` / `PERMAFROST_OPERATOR_API_URL`. */
  readonly apiUrl: Setting<string>;
  /** `--service-account-dir` / `PERMAFROST_OPERATOR_SERVICE_ACCOUNT_DIR`. */
  readonly serviceAccountDir: Setting<string>;
  /** `--namespace` / `PERMAFROST_OPERATOR_NAMESPACE`. */
  readonly namespace: Setting<string>;
  /** `--poll-s` / `PERMAFROST_OPERATOR_POLL_S`. */
  readonly pollS: Setting<number>;
  /** `--workers` / `PERMAFROST_OPERATOR_WORKERS`. */
  readonly workers: Setting<string>;
  /** `--min-workers` / `PERMAFROST_OPERATOR_MIN_WORKERS`. */
  readonly minWorkers: Setting<number>;
  /** `--max-workers` / `PERMAFROST_OPERATOR_MAX_WORKERS`. */
  readonly maxWorkers: Setting<number>;
  /** `--tasks-per-worker` / `PERMAFROST_OPERATOR_TASKS_PER_WORKER`. */
  readonly tasksPerWorker: Setting<number>;
  /** `--log-level`. */
  readonly logLevel: Setting<LogLevel>;
  /** `--log-format`. */
  readonly logFormat: Setting<LogFormatChoice>;
}

/** The operator's settings. */
export const OPERATOR_CONFIG: OperatorSettings = Object.freeze({
  masterUrl: setting({
    flag: "--master-url",
    env: "PERMAFROST_OPERATOR_MASTER_URL",
    default: "http://master:8700",
    parse: urlParser(),
    description: "The master the operator submits PermafrostJobs to",
  }),
  masterToken: setting({
    flag: "--master-token",
    env: "PERMAFROST_OPERATOR_MASTER_TOKEN",
    default: "",
    parse: stringParser({ nonEmpty: false }),
    description:
      "A user token with can_freeze for the master (cluster add-user prints one); empty when auth is off",
  }),
  apiUrl: setting({
    flag: "--api-url",
    env: "PERMAFROST_OPERATOR_API_URL",
    default: "",
    parse: stringParser({ nonEmpty: false }),
    description:
      "The Kubernetes API (default: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, as in a pod)",
  }),
  serviceAccountDir: setting({
    flag: "--service-account-dir",
    env: "PERMAFROST_OPERATOR_SERVICE_ACCOUNT_DIR",
    default: "/var/run/secrets/kubernetes.io/serviceaccount",
    parse: pathParser(),
    description: "Where the pod's service-account token, CA and namespace are mounted",
  }),
  namespace: setting({
    flag: "--namespace",
    env: "PERMAFROST_OPERATOR_NAMESPACE",
    default: "",
    parse: stringParser({ nonEmpty: false }),
    description: "The namespace whose PermafrostJobs to run (default: the service account's)",
  }),
  pollS: setting({
    flag: "--poll-s",
    env: "PERMAFROST_OPERATOR_POLL_S",
    default: 15,
    parse: intParser({ min: 1, max: 3600 }),
    description: "Seconds between two looks at the PermafrostJob objects",
  }),
  workers: setting({
    flag: "--workers",
    env: "PERMAFROST_OPERATOR_WORKERS",
    default: "",
    parse: stringParser({ nonEmpty: false }),
    description: "The worker Deployment to scale by queued tasks (empty: leave it alone)",
  }),
  minWorkers: setting({
    flag: "--min-workers",
    env: "PERMAFROST_OPERATOR_MIN_WORKERS",
    default: 1,
    parse: intParser({ min: 0, max: 10_000 }),
    description: "Fewest workers when scaling",
  }),
  maxWorkers: setting({
    flag: "--max-workers",
    env: "PERMAFROST_OPERATOR_MAX_WORKERS",
    default: 8,
    parse: intParser({ min: 1, max: 10_000 }),
    description: "Most workers when scaling",
  }),
  tasksPerWorker: setting({
    flag: "--tasks-per-worker",
    env: "PERMAFROST_OPERATOR_TASKS_PER_WORKER",
    default: 4,
    parse: intParser({ min: 1, max: 1_000_000 }),
    description: "Queued tasks per worker the scaling aims at",
  }),
  logLevel: LOG_LEVEL_SETTING,
  logFormat: LOG_FORMAT_SETTING,
});
