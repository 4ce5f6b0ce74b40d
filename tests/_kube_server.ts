/**
 * A small Kubernetes API server for the operator's tests, written here because no
 * Kubernetes API server can be installed on our machines. It is not a mock of our code:
 * it speaks the documented API subset the operator uses, as the real server answers it —
 * list a namespace's custom resources (`GET /apis/{group}/{version}/namespaces/{ns}/
 * {plural}` → a `…List` with `items`), JSON merge patches (`PATCH`, content type
 * `application/merge-patch+json`, else 415) of an object (metadata only: a
 * `resourceVersion` in the patch that is not the object's current one is a 409
 * Conflict) and of its `status` subresource (status only; `spec` untouched), deletion
 * with finalizers (an object with finalizers gets a `deletionTimestamp` and goes away
 * when the last finalizer is removed), and a Deployment's `scale` subresource (`GET`,
 * merge `PATCH` of `spec.replicas`). Every request must carry the bearer token it was
 * started with (401 otherwise); errors are `Status` objects. `crdInstalled: false`
 * answers 404 for the custom resource paths, as a cluster without the CRD does;
 * `forbid` answers 403 to the verbs named (`list`, `patch`, `scale`), as RBAC does.
 * Given a certificate and key it serves HTTPS, as a real API server does (the operator
 * must then trust the cluster CA it is given).
 *
 * @module
 */

/** A stored object. */
// deno-lint-ignore no-explicit-any -- objects are JSON the test and the operator write
type Obj = Record<string, any>;

/** A running server. */
export interface KubeServer {
  /** Its base URL. */
  url: string;
  /** The token requests must carry. */
  token: string;
  /** Whether the CRD is installed (404 for its paths when false). */
  crdInstalled: boolean;
  /** Verbs answered 403 (`list`, `patch`, `scale`). */
  forbid: Set<string>;
  /** Creates an object, as `kubectl apply` does (generation 1, a resourceVersion). */
  create(obj: Obj): Obj;
  /** The object, or undefined. */
  get(name: string): Obj | undefined;
  /** Deletes an object as the API does (finalizers hold it with a deletionTimestamp). */
  delete(name: string): void;
  /** A Deployment's replicas. */
  replicas(name: string): number | undefined;
  /** Creates a Deployment with replicas. */
  deployment(name: string, replicas: number): void;
  /** Requests served. */
  requests: number;
  /** Stops it. */
  stop(): Promise<void>;
}

const GROUP = "permafrost.dev";
const VERSION = "v1alpha1";
const PLURAL = "permafrostjobs";

/**
 * Starts the server on a free port for one namespace.
 *
 * @param namespace The namespace it holds.
 * @param tls A certificate (for `localhost`) and its key: serve HTTPS.
 * @returns The server.
 */
export function startKubeServer(
  namespace = "default",
  tls?: { cert: string; key: string },
): KubeServer {
  const token = crypto.randomUUID();
  const objects = new Map<string, Obj>();
  const deployments = new Map<string, number>();
  let version = 1;
  const status = (code: number, reason: string, message: string) =>
    Response.json(
      { kind: "Status", apiVersion: "v1", status: "Failure", message, reason, code },
      { status: code },
    );
  const merge = (target: Obj, patch: Obj): Obj => {
    const out: Obj = { ...target };
    for (const [k, v] of Object.entries(patch)) {
      if (v === null) delete out[k];
      else if (typeof v === "object" && !Array.isArray(v) && typeof out[k] === "object") {
        out[k] = merge(out[k] ?? {}, v);
      } else out[k] = v;
    }
    return out;
  };
  const settle = (name: string) => {
    const o = objects.get(name);
    if (o?.metadata.deletionTimestamp && (o.metadata.finalizers ?? []).length === 0) {
      objects.delete(name);
    }
  };

  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {}, ...tls },
    async (req) => {
      state.requests++;
      if (req.headers.get("authorization") !== `Bearer ${token}`) {
        return status(401, "Unauthorized", "Unauthorized");
      }
      const path = new URL(req.url).pathname;
      const body = req.method === "PATCH" ? await req.text() : "";
      if (
        req.method === "PATCH" && req.headers.get("content-type") !== "application/merge-patch+json"
      ) {
        return status(
          415,
          "UnsupportedMediaType",
          "the body of the request was in an unknown format",
        );
      }
      const scale = new RegExp(`^/apis/apps/v1/namespaces/${namespace}/deployments/([^/]+)/scale$`)
        .exec(path);
      if (scale) {
        const name = decodeURIComponent(scale[1]!);
        if (state.forbid.has("scale")) {
          return status(
            403,
            "Forbidden",
            `deployments.apps "${name}" is forbidden: cannot patch scale`,
          );
        }
        if (!deployments.has(name)) {
          return status(404, "NotFound", `deployments.apps "${name}" not found`);
        }
        if (req.method === "PATCH") {
          const replicas = JSON.parse(body)?.spec?.replicas;
          if (!Number.isInteger(replicas) || replicas < 0) {
            return status(422, "Invalid", "spec.replicas: Invalid value");
          }
          deployments.set(name, replicas);
        } else if (req.method !== "GET") {
          return status(405, "MethodNotAllowed", "method not allowed");
        }
        const n = deployments.get(name)!;
        return Response.json({
          kind: "Scale",
          apiVersion: "autoscaling/v1",
          metadata: { name, namespace },
          spec: { replicas: n },
          status: { replicas: n },
        });
      }
      const m = new RegExp(
        `^/apis/${GROUP}/${VERSION}/namespaces/([^/]+)/${PLURAL}(?:/([^/]+))?(/status)?$`,
      ).exec(path);
      if (!m || !state.crdInstalled) {
        return status(404, "NotFound", "the server could not find the requested resource");
      }
      if (m[1] !== namespace) return Response.json({ kind: "PermafrostJobList", items: [] });
      const name = m[2] === undefined ? undefined : decodeURIComponent(m[2]);
      if (name === undefined) {
        if (req.method !== "GET") return status(405, "MethodNotAllowed", "method not allowed");
        if (state.forbid.has("list")) {
          return status(403, "Forbidden", `${PLURAL}.${GROUP} is forbidden: cannot list`);
        }
        return Response.json({
          apiVersion: `${GROUP}/${VERSION}`,
          kind: "PermafrostJobList",
          metadata: { resourceVersion: String(version) },
          items: [...objects.values()].map((o) => structuredClone(o)),
        });
      }
      const obj = objects.get(name);
      if (!obj) return status(404, "NotFound", `${PLURAL}.${GROUP} "${name}" not found`);
      if (req.method === "GET") return Response.json(obj);
      if (req.method !== "PATCH") return status(405, "MethodNotAllowed", "method not allowed");
      if (state.forbid.has("patch")) {
        return status(403, "Forbidden", `${PLURAL}.${GROUP} "${name}" is forbidden: cannot patch`);
      }
      let patch: Obj;
      try {
        patch = JSON.parse(body);
      } catch {
        return status(400, "BadRequest", "invalid JSON");
      }
      if (m[3]) {
        obj.status = merge(obj.status ?? {}, patch.status ?? {});
      } else {
        const rv = patch.metadata?.resourceVersion;
        if (rv !== undefined && rv !== obj.metadata.resourceVersion) {
          return status(
            409,
            "Conflict",
            `Operation cannot be fulfilled on ${PLURAL}.${GROUP} "${name}": the object has been modified`,
          );
        }
        const { resourceVersion: _rv, ...meta } = patch.metadata ?? {};
        obj.metadata = merge(obj.metadata, meta);
        if (patch.spec) {
          obj.spec = merge(obj.spec, patch.spec);
          obj.metadata.generation++;
        }
      }
      obj.metadata.resourceVersion = String(++version);
      settle(name);
      return Response.json(objects.get(name) ?? obj);
    },
  );

  const state: KubeServer = {
    url: `${tls ? "https://localhost" : "http://127.0.0.1"}:${server.addr.port}`,
    token,
    crdInstalled: true,
    forbid: new Set(),
    requests: 0,
    create(obj) {
      const name = obj.metadata.name;
      const stored = {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: "PermafrostJob",
        ...structuredClone(obj),
        metadata: {
          ...structuredClone(obj.metadata),
          namespace,
          generation: 1,
          resourceVersion: String(++version),
          creationTimestamp: new Date().toISOString(),
        },
      };
      objects.set(name, stored);
      return stored;
    },
    get: (name) => objects.get(name),
    delete(name) {
      const o = objects.get(name);
      if (!o) return;
      o.metadata.deletionTimestamp ??= new Date().toISOString();
      o.metadata.resourceVersion = String(++version);
      settle(name);
    },
    replicas: (name) => deployments.get(name),
    deployment: (name, replicas) => void deployments.set(name, replicas),
    stop: () => server.shutdown(),
  };
  return state;
}
