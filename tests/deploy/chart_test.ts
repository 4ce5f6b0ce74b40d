/**
 * The Helm chart (`charts/permafrost`) with the real `helm` (`_helm.ts`): `helm lint
 * --strict` is clean for the default values and the variants a user picks, and every
 * object `helm template --include-crds` renders passes the Kubernetes schema of its
 * kind (the npm `kubernetes-models` validators): the master with its job store volume,
 * the workers with their HorizontalPodAutoscaler (or scaled by the operator instead),
 * the catalog StatefulSet, the Services, the JWT Secret, the operator with its
 * ServiceAccount, Role and RoleBinding, and the PermafrostJob CRD.
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import * as core from "kubernetes-models/v1";
import * as apps from "kubernetes-models/apps/v1";
import * as autoscaling from "kubernetes-models/autoscaling/v2";
import * as rbac from "kubernetes-models/rbac.authorization.k8s.io/v1";
import * as apiext from "kubernetes-models/apiextensions.k8s.io/v1";
import { helmBinary } from "./_helm.ts";
import { sh } from "./_docker.ts";

const HELM = await helmBinary("tests/deploy/chart_test.ts");
const CHART = "charts/permafrost";

/** The models by apiVersion, then kind. */
const MODELS: Record<string, Record<string, unknown>> = {
  "v1": core,
  "apps/v1": apps,
  "autoscaling/v2": autoscaling,
  "rbac.authorization.k8s.io/v1": rbac,
  "apiextensions.k8s.io/v1": apiext,
};

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  // deno-lint-ignore no-explicit-any -- rendered YAML, checked by the models
  spec?: any;
}

async function render(...set: string[]): Promise<Manifest[]> {
  const r = await sh([
    HELM!,
    "template",
    "rel",
    CHART,
    "--include-crds",
    ...set.flatMap((s) => ["--set", s]),
  ]);
  assert.equal(r.code, 0, r.stderr);
  return parseAllDocuments(r.stdout).map((d) => d.toJS()).filter((d) => d !== null);
}

/** Validates one object against its kind's schema (throws naming what is wrong). */
function validate(m: Manifest): void {
  const Model = MODELS[m.apiVersion]?.[m.kind] as
    | (new (data: unknown) => { validate(): void })
    | undefined;
  assert.ok(Model, `no schema for ${m.apiVersion} ${m.kind}`);
  new Model(m).validate();
}

const VARIANTS: string[][] = [
  [],
  ["worker.autoscaler=operator"],
  ["data.existingClaim=shared-data", "catalog.enabled=false"],
  ["operator.enabled=false", "auth.existingSecret=my-secret", "image.tag=1.3.1"],
];

Deno.test({
  name: "helm lint --strict is clean for the default values and each variant",
  ignore: HELM === null,
  async fn() {
    for (const set of VARIANTS) {
      const r = await sh([HELM!, "lint", "--strict", CHART, ...set.flatMap((s) => ["--set", s])]);
      assert.equal(r.code, 0, `${set.join(" ")}: ${r.stdout}${r.stderr}`);
      assert.match(r.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    }
  },
});

Deno.test({
  name: "every object helm template renders passes its Kubernetes schema",
  ignore: HELM === null,
  async fn() {
    for (const set of VARIANTS) {
      const objects = await render(...set);
      for (const m of objects) validate(m);
      const kinds = objects.map((m) => `${m.kind}/${m.metadata.name}`);
      assert.ok(kinds.includes("Deployment/rel-permafrost-master"), kinds.join(" "));
      assert.ok(kinds.includes("Deployment/rel-permafrost-worker"));
      assert.ok(kinds.includes("Service/rel-permafrost-master"));
      assert.ok(kinds.includes("CustomResourceDefinition/permafrostjobs.permafrost.dev"));
      assert.equal(
        kinds.includes("HorizontalPodAutoscaler/rel-permafrost-worker"),
        !set.includes("worker.autoscaler=operator"),
        "the HPA or the operator scales the workers, never both",
      );
      assert.equal(
        kinds.includes("StatefulSet/rel-permafrost-catalog"),
        !set.includes("catalog.enabled=false"),
      );
      assert.equal(
        kinds.includes("Deployment/rel-permafrost-operator"),
        !set.includes("operator.enabled=false"),
      );
      assert.equal(
        kinds.includes("Secret/rel-permafrost-auth"),
        !set.includes("auth.existingSecret=my-secret"),
      );
    }
  },
});

Deno.test({
  name:
    "the chart's objects: a job store volume, pods as the images' user, the operator's rights, the CRD's schema",
  ignore: HELM === null,
  async fn() {
    const objects = await render("worker.autoscaler=operator");
    const byName = (kind: string, name: string) =>
      objects.find((m) => m.kind === kind && m.metadata.name === name)!;
    const master = byName("Deployment", "rel-permafrost-master");
    // The validators do refuse what Kubernetes would refuse.
    assert.throws(() => validate({ ...master, spec: { ...master.spec, replicas: "two" } }));
    assert.throws(() => validate({ ...master, spec: { ...master.spec, selector: undefined } }));
    assert.equal(master.spec.strategy.type, "Recreate", "one master owns the job store");
    assert.equal(
      master.spec.template.spec.volumes[0].persistentVolumeClaim.claimName,
      "rel-permafrost-master",
    );
    assert.equal(master.spec.template.spec.securityContext.runAsUser, 10001);
    const worker = byName("Deployment", "rel-permafrost-worker").spec.template.spec.containers[0];
    assert.deepEqual(worker.args.slice(0, 2), ["--master", "http://rel-permafrost-master:8700"]);
    const role = byName("Role", "rel-permafrost-operator") as unknown as {
      rules: { resources: string[]; verbs: string[] }[];
    };
    const rights = role.rules.flatMap((r) =>
      r.resources.map((res) => `${res}:${r.verbs.join(",")}`)
    );
    assert.ok(rights.some((r) => r.startsWith("permafrostjobs/status:") && r.includes("patch")));
    assert.ok(rights.some((r) => r.startsWith("deployments/scale:") && r.includes("patch")));
    const operatorEnv =
      byName("Deployment", "rel-permafrost-operator").spec.template.spec.containers[0].env;
    const workersVar = operatorEnv.find((e: { name: string }) =>
      e.name === "PERMAFROST_OPERATOR_WORKERS"
    );
    assert.equal(workersVar.value, "rel-permafrost-worker");
    const crd = byName("CustomResourceDefinition", "permafrostjobs.permafrost.dev");
    const version = crd.spec.versions[0];
    assert.equal(`${crd.spec.group}/${version.name}`, "permafrost.dev/v1alpha1");
    assert.deepEqual(version.subresources, { status: {} });
    const schema = version.schema.openAPIV3Schema.properties;
    assert.deepEqual(schema.spec.required, ["source", "destination"]);
    assert.deepEqual(Object.keys(schema.spec.properties), [
      "source",
      "destination",
      "codec",
      "chunk_rows",
    ]);
    assert.deepEqual(
      Object.keys(schema.status.properties).slice(0, 4),
      ["phase", "job_id", "progress", "message"],
    );
    // A value the chart does not know is refused by name.
    const bad = await sh([HELM!, "template", "rel", CHART, "--set", "worker.autoscaler=keda"]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /worker\.autoscaler must be hpa or operator/);
  },
});
