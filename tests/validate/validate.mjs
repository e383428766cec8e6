#!/usr/bin/env node
// Independent structural validation of the Kubernetes objects nodetopo renders.
//
//   node validate.mjs [--expect-invalid] [--markdown] FILE|DIR...
//
// Each FILE is JSON or (multi-document) YAML; a `List` is validated item by item; a file named
// *.patch.json is a Node JSON merge patch. With --markdown, the ```yaml blocks of each FILE are
// the documents. Built-in kinds (resource.k8s.io/v1, v1 Node) are validated by the npm package
// kubernetes-models (schemas generated from the Kubernetes OpenAPI spec); the CRDs nodetopo writes
// (NFD NodeFeature, NodeResourceTopology v1alpha2) by JSON schemas transcribed below from their
// upstream CRDs, with their metadata checked by kubernetes-models' ObjectMeta. Label keys and
// values are checked against the Kubernetes label rules wherever labels appear.
//
// Exit status 0 when every object is valid (with --expect-invalid: when every file holds at least
// one invalid object), 1 otherwise; each failure names the file and the object.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

// The npm packages come from `npm ci` here (scripts/install-deps.sh runs it): say so when missing.
let modules;
try {
  modules = await Promise.all([
    import("ajv"),
    import("yaml"),
    import("@kubernetes-models/apimachinery/apis/meta/v1/ObjectMeta"),
    import("kubernetes-models/resource.k8s.io/v1/ResourceSlice"),
    import("kubernetes-models/resource.k8s.io/v1/ResourceClaim"),
    import("kubernetes-models/resource.k8s.io/v1/ResourceClaimTemplate"),
    import("kubernetes-models/resource.k8s.io/v1/DeviceClass"),
    import("kubernetes-models/v1/Node"),
  ]);
} catch (e) {
  console.error(`validate.mjs: ${e.message}\nvalidate.mjs: run scripts/install-deps.sh (npm ci in tests/validate)`);
  process.exit(1);
}
const [{ default: Ajv }, { default: YAML }, { ObjectMeta }, { ResourceSlice }, { ResourceClaim },
  { ResourceClaimTemplate }, { DeviceClass }, { Node }] = modules;

const builtin = {
  "resource.k8s.io/v1/ResourceSlice": ResourceSlice,
  "resource.k8s.io/v1/ResourceClaim": ResourceClaim,
  "resource.k8s.io/v1/ResourceClaimTemplate": ResourceClaimTemplate,
  "resource.k8s.io/v1/DeviceClass": DeviceClass,
  "v1/Node": Node,
};

// The kinds of the deployment manifests (packaging/kubernetes), loaded the same way.
const deploymentKinds = {
  "v1/Namespace": "kubernetes-models/v1/Namespace",
  "v1/ServiceAccount": "kubernetes-models/v1/ServiceAccount",
  "v1/ConfigMap": "kubernetes-models/v1/ConfigMap",
  "v1/Secret": "kubernetes-models/v1/Secret",
  "apps/v1/DaemonSet": "kubernetes-models/apps/v1/DaemonSet",
  "rbac.authorization.k8s.io/v1/ClusterRole": "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole",
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding",
  "rbac.authorization.k8s.io/v1/Role": "kubernetes-models/rbac.authorization.k8s.io/v1/Role",
  "rbac.authorization.k8s.io/v1/RoleBinding": "kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding",
  "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy": "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy",
  "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding": "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding",
};
for (const [id, module] of Object.entries(deploymentKinds)) {
  const kind = id.slice(id.lastIndexOf("/") + 1);
  builtin[id] = (await import(module))[kind];
}

const stringMap = { type: "object", additionalProperties: { type: "string" } };
const intOrString = { anyOf: [{ type: "integer" }, { type: "string", pattern: "^[0-9]+(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$" }] };

// nfd.k8s-sigs.io/v1alpha1 NodeFeature (node-feature-discovery deployment/base/nfd-crds).
const nodeFeatureSchema = {
  type: "object",
  required: ["apiVersion", "kind", "metadata", "spec"],
  additionalProperties: false,
  properties: {
    apiVersion: { const: "nfd.k8s-sigs.io/v1alpha1" },
    kind: { const: "NodeFeature" },
    metadata: { type: "object" },
    spec: {
      type: "object",
      additionalProperties: false,
      properties: {
        labels: stringMap,
        features: {
          type: "object",
          additionalProperties: false,
          properties: {
            flags: { type: "object", additionalProperties: { type: "object", required: ["elements"], properties: { elements: { type: "object", additionalProperties: { type: "object" } } } } },
            attributes: { type: "object", additionalProperties: { type: "object", required: ["elements"], properties: { elements: stringMap } } },
            instances: { type: "object", additionalProperties: { type: "object", required: ["elements"], properties: { elements: { type: "array", items: { type: "object", required: ["attributes"], properties: { attributes: stringMap } } } } } },
          },
        },
      },
    },
    status: { type: "object" },
  },
};

// topology.node.k8s.io/v1alpha2 NodeResourceTopology (noderesourcetopology-api v1alpha2 types).
const nrtSchema = {
  type: "object",
  required: ["apiVersion", "kind", "metadata", "topologyPolicies", "zones"],
  additionalProperties: false,
  properties: {
    apiVersion: { const: "topology.node.k8s.io/v1alpha2" },
    kind: { const: "NodeResourceTopology" },
    metadata: { type: "object", required: ["name"] },
    topologyPolicies: { type: "array", items: { type: "string" } },
    attributes: { type: "array", items: { type: "object", required: ["name", "value"], additionalProperties: false, properties: { name: { type: "string" }, value: { type: "string" } } } },
    zones: {
      type: "array",
      items: {
        type: "object",
        required: ["name", "type"],
        additionalProperties: false,
        properties: {
          name: { type: "string", minLength: 1 },
          type: { type: "string", minLength: 1 },
          parent: { type: "string" },
          costs: { type: "array", items: { type: "object", required: ["name", "value"], additionalProperties: false, properties: { name: { type: "string" }, value: { type: "integer" } } } },
          attributes: { type: "array", items: { type: "object", required: ["name", "value"], additionalProperties: false, properties: { name: { type: "string" }, value: { type: "string" } } } },
          resources: { type: "array", items: { type: "object", required: ["name", "capacity", "allocatable", "available"], additionalProperties: false, properties: { name: { type: "string", minLength: 1 }, capacity: intOrString, allocatable: intOrString, available: intOrString } } },
        },
      },
    },
  },
};

// Cluster API MachineDeployment / MachineSet (cluster.x-k8s.io, the parts `topo export
// autoscaler-template --format capi` writes: metadata only; spec as the CRD leaves it open here).
const capiSchema = (kind) => ({
  type: "object",
  required: ["apiVersion", "kind", "metadata"],
  properties: {
    apiVersion: { enum: ["cluster.x-k8s.io/v1beta1", "cluster.x-k8s.io/v1beta2"] },
    kind: { const: kind },
    metadata: { type: "object", required: ["name"], properties: { annotations: stringMap, labels: stringMap } },
    spec: { type: "object" },
  },
});

// nodetopo.dev/v1alpha1 NodeShapeTemplate (`--format karpenter`, docs/autoscaler.md). Its
// resourceSlices are validated as ResourceSlices below.
const nodeShapeTemplateSchema = {
  type: "object",
  required: ["apiVersion", "kind", "metadata", "spec"],
  additionalProperties: false,
  properties: {
    apiVersion: { const: "nodetopo.dev/v1alpha1" },
    kind: { const: "NodeShapeTemplate" },
    metadata: { type: "object", required: ["name"] },
    spec: {
      type: "object",
      required: ["fingerprint", "placeholders", "nodeLabels", "capacity", "bindings", "resourceSlices"],
      additionalProperties: false,
      properties: {
        fingerprint: { type: "string", pattern: "^[0-9a-f]{12}$" },
        placeholders: { type: "object", required: ["nodeName", "poolName"], additionalProperties: false, properties: { nodeName: { type: "string" }, poolName: { type: "string" } } },
        nodeLabels: stringMap,
        capacity: { type: "object", required: ["cpu", "memory", "pods"], additionalProperties: false, properties: { cpu: intOrString, memory: intOrString, pods: intOrString } },
        architecture: { type: "string" },
        taints: { type: "array", items: { type: "object", required: ["key", "effect"], additionalProperties: false, properties: { key: { type: "string" }, value: { type: "string" }, effect: { enum: ["NoSchedule", "PreferNoSchedule", "NoExecute"] } } } },
        bindings: { type: "array", items: { type: "object", required: ["relation", "attribute", "groups"], additionalProperties: false, properties: { relation: { type: "string" }, attribute: { type: "string" }, groups: { type: "array", items: { type: "object", required: ["value", "devices"], additionalProperties: false, properties: { value: { type: "string" }, devices: { type: "array", minItems: 1, items: { type: "string" } } } } } } } },
        omittedAttributes: { type: "array", items: { type: "object", required: ["attribute", "reason", "devices"], additionalProperties: false, properties: { attribute: { type: "string" }, reason: { type: "string" }, devices: { type: "integer", minimum: 1 } } } },
        resourceSlices: { type: "array", items: { type: "object" } },
      },
    },
  },
};

// AWS `create-or-update-tags --cli-input-json` input (`--format aws-asg-tags`).
const awsTagsSchema = {
  type: "object",
  required: ["Tags"],
  additionalProperties: false,
  properties: {
    Tags: { type: "array", minItems: 1, items: { type: "object", required: ["ResourceId", "ResourceType", "Key", "Value", "PropagateAtLaunch"], additionalProperties: false, properties: { ResourceId: { type: "string", minLength: 1 }, ResourceType: { const: "auto-scaling-group" }, Key: { type: "string", minLength: 1, maxLength: 128 }, Value: { type: "string", maxLength: 256 }, PropagateAtLaunch: { type: "boolean" } } } },
  },
};

const ajv = new Ajv({ allErrors: true, strict: false });
const crds = {
  "nfd.k8s-sigs.io/v1alpha1/NodeFeature": ajv.compile(nodeFeatureSchema),
  "topology.node.k8s.io/v1alpha2/NodeResourceTopology": ajv.compile(nrtSchema),
  "cluster.x-k8s.io/v1beta1/MachineDeployment": ajv.compile(capiSchema("MachineDeployment")),
  "cluster.x-k8s.io/v1beta1/MachineSet": ajv.compile(capiSchema("MachineSet")),
  "cluster.x-k8s.io/v1beta2/MachineDeployment": ajv.compile(capiSchema("MachineDeployment")),
  "cluster.x-k8s.io/v1beta2/MachineSet": ajv.compile(capiSchema("MachineSet")),
  "nodetopo.dev/v1alpha1/NodeShapeTemplate": ajv.compile(nodeShapeTemplateSchema),
};
const validateAwsTags = ajv.compile(awsTagsSchema);

// Label rules (k8s.io/apimachinery validation.IsQualifiedName / IsValidLabelValue), written here
// independently of nodetopo's C++ implementation.
const nameRe = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
function labelProblems(labels, where, ownLabels) {
  const out = [];
  for (const [key, value] of Object.entries(labels ?? {})) {
    const slash = key.indexOf("/");
    const prefix = slash >= 0 ? key.slice(0, slash) : "";
    const name = slash >= 0 ? key.slice(slash + 1) : key;
    if (slash >= 0 && (prefix.length > 253 || !dns1123Subdomain.test(prefix))) out.push(`${where}: label key ${key}: bad prefix`);
    if (name.length > 63 || !nameRe.test(name)) out.push(`${where}: label key ${key}: bad name`);
    if (typeof value !== "string" || value.length > 63 || (value !== "" && !nameRe.test(value))) out.push(`${where}: label ${key}: bad value ${JSON.stringify(value)}`);
    if (ownLabels && /(^|\.)(kubernetes\.io|k8s\.io)$/.test(prefix)) out.push(`${where}: label key ${key} is under a prefix reserved for Kubernetes`);
  }
  return out;
}

// Kubernetes quantities (k8s.io/apimachinery resource.ParseQuantity, the forms used here).
const quantityRe = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;
const taintRe = /^([^=:,]+)(=([^:,]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/;

// The capacity annotations as Cluster Autoscaler's Cluster API provider parses them
// (cloudprovider/clusterapi/clusterapi_utils.go): quantities, "k=v,..." labels, "k=v:Effect,..."
// taints.
function capiAnnotationProblems(annotations) {
  const out = [];
  const p = "capacity.cluster-autoscaler.kubernetes.io/";
  for (const [key, value] of Object.entries(annotations ?? {})) {
    if (!key.startsWith(p)) continue;
    const name = key.slice(p.length);
    if (["cpu", "memory", "ephemeral-disk", "maxPods", "gpu-count"].includes(name)) {
      if (!quantityRe.test(value)) out.push(`annotation ${key}: ${JSON.stringify(value)} is not a quantity`);
      if ((name === "maxPods" || name === "gpu-count") && !/^[0-9]+$/.test(value)) out.push(`annotation ${key}: must be a whole number`);
    } else if (name === "labels") {
      const labels = {};
      for (const item of value.split(",")) {
        const eq = item.indexOf("=");
        if (eq < 0) out.push(`annotation ${key}: ${JSON.stringify(item)} is not key=value`);
        else labels[item.slice(0, eq)] = item.slice(eq + 1);
      }
      out.push(...labelProblems(labels, `annotation ${key}`, false));
    } else if (name === "taints") {
      for (const item of value.split(",")) if (!taintRe.test(item)) out.push(`annotation ${key}: bad taint ${JSON.stringify(item)}`);
    } else if (name === "dra-driver") {
      if (value.length > 63 || !dns1123Subdomain.test(value)) out.push(`annotation ${key}: ${JSON.stringify(value)} is not a driver name (DNS subdomain <= 63)`);
    } else if (!["gpu-type", "csi-driver"].includes(name)) {
      out.push(`annotation ${key}: not an annotation Cluster Autoscaler reads`);
    }
  }
  if ((annotations ?? {})[p + "dra-driver"] !== undefined && (annotations ?? {})[p + "gpu-count"] === undefined) out.push("dra-driver without gpu-count: Cluster Autoscaler builds no slice");
  return out;
}

// AWS node-template tags as Cluster Autoscaler's AWS provider reads them (cloudprovider/aws).
function awsTagProblems(doc) {
  if (!validateAwsTags(doc)) return [ajv.errorsText(validateAwsTags.errors, { dataVar: "tags" })];
  const out = [];
  const p = "k8s.io/cluster-autoscaler/node-template/";
  for (const t of doc.Tags) {
    if (!t.Key.startsWith(p)) { out.push(`tag ${t.Key}: not a node-template tag`); continue; }
    const rest = t.Key.slice(p.length);
    if (rest.startsWith("label/")) out.push(...labelProblems({ [rest.slice(6)]: t.Value }, `tag ${t.Key}`, false));
    else if (rest.startsWith("taint/")) { if (!taintRe.test(`${rest.slice(6)}=${t.Value}`)) out.push(`tag ${t.Key}: bad taint value ${JSON.stringify(t.Value)}`); }
    else if (rest.startsWith("resources/")) { if (!quantityRe.test(t.Value)) out.push(`tag ${t.Key}: ${JSON.stringify(t.Value)} is not a quantity`); }
    else out.push(`tag ${t.Key}: unknown node-template tag`);
  }
  return out;
}

function describe(obj) {
  const m = obj?.metadata ?? {};
  return `${obj?.kind ?? "?"} ${m.name ?? m.generateName ?? "(unnamed)"}`;
}

// Exported for the fake API server (tests/fakes/kube-apiserver), which validates every object
// the agent writes before storing it.
export function validateObject(obj, file, isPatch) {
  if (isPatch) {
    const problems = labelProblems(obj?.metadata?.labels, "metadata.labels", true);
    if (Object.keys(obj ?? {}).some((k) => k !== "metadata")) problems.push("a label patch may only hold metadata");
    try {
      new Node({ metadata: {}, ...obj }).validate();
    } catch (e) {
      problems.push(e.message);
    }
    return problems.map((p) => `Node patch: ${p}`);
  }
  if (obj !== null && typeof obj === "object" && !obj.apiVersion && Array.isArray(obj.Tags)) return awsTagProblems(obj).map((p) => `AWS ASG tags: ${p}`);
  if (obj === null || typeof obj !== "object" || !obj.apiVersion || !obj.kind) return [`${file}: not a Kubernetes object (apiVersion and kind required)`];
  const id = `${obj.apiVersion}/${obj.kind}`;
  const problems = [];
  if (builtin[id]) {
    try {
      new builtin[id](obj).validate();
    } catch (e) {
      problems.push(e.message);
    }
  } else if (crds[id]) {
    if (!crds[id](obj)) problems.push(ajv.errorsText(crds[id].errors, { dataVar: "object" }));
    try {
      new ObjectMeta(obj.metadata).validate();
    } catch (e) {
      problems.push(`metadata: ${e.message}`);
    }
  } else {
    problems.push(`unknown kind ${id}`);
  }
  problems.push(...labelProblems(obj.metadata?.labels, "metadata.labels", false));
  if (id === "nfd.k8s-sigs.io/v1alpha1/NodeFeature") problems.push(...labelProblems(obj.spec?.labels, "spec.labels", true));
  if (obj.apiVersion?.startsWith("cluster.x-k8s.io/")) problems.push(...capiAnnotationProblems(obj.metadata?.annotations));
  if (id === "nodetopo.dev/v1alpha1/NodeShapeTemplate") {
    problems.push(...labelProblems(obj.spec?.nodeLabels, "spec.nodeLabels", false));
    (obj.spec?.resourceSlices ?? []).forEach((s, i) => {
      if (`${s?.apiVersion}/${s?.kind}` !== "resource.k8s.io/v1/ResourceSlice") problems.push(`spec.resourceSlices[${i}]: not a resource.k8s.io/v1 ResourceSlice`);
      else problems.push(...validateObject(s, file, false).map((p) => `spec.resourceSlices[${i}]: ${p}`));
    });
  }
  return problems.map((p) => `${describe(obj)}: ${p}`);
}

function documentsOf(file, markdown) {
  const text = fs.readFileSync(file, "utf8");
  if (markdown) {
    const blocks = [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]);
    return blocks.flatMap((b) => YAML.parseAllDocuments(b).map((d) => d.toJS()));
  }
  if (file.endsWith(".json")) return [JSON.parse(text)];
  const docs = YAML.parseAllDocuments(text);
  for (const d of docs) if (d.errors.length) throw new Error(d.errors[0].message);
  return docs.map((d) => d.toJS()).filter((d) => d !== null);
}

// The command line runs only when this file is the program, not when it is imported.
if (process.argv[1] && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href) {
const args = process.argv.slice(2);
const expectInvalid = args.includes("--expect-invalid");
const markdown = args.includes("--markdown");
// A directory stands for its .yaml/.yml/.json/.md files, in name order.
const files = args
  .filter((a) => !a.startsWith("--"))
  .flatMap((a) =>
    fs.statSync(a, { throwIfNoEntry: false })?.isDirectory()
      ? fs.readdirSync(a).filter((f) => /\.(ya?ml|json|md)$/.test(f)).sort().map((f) => path.join(a, f))
      : [a],
  );
if (files.length === 0) {
  console.error("usage: validate.mjs [--expect-invalid] [--markdown] FILE...");
  process.exit(2);
}
let failed = false;
let objects = 0;
for (const file of files) {
  let docs;
  try {
    docs = documentsOf(file, markdown).flatMap((d) => (d?.kind === "List" ? d.items ?? [] : [d]));
  } catch (e) {
    console.error(`${file}: cannot parse: ${e.message}`);
    failed = true;
    continue;
  }
  if (docs.length === 0) {
    console.error(`${file}: no objects`);
    failed = true;
    continue;
  }
  const isPatch = path.basename(file).endsWith(".patch.json");
  let fileProblems = [];
  for (const obj of docs) {
    objects++;
    fileProblems = fileProblems.concat(validateObject(obj, file, isPatch));
  }
  if (expectInvalid) {
    if (fileProblems.length === 0) {
      console.error(`${file}: expected to be rejected, but every object is valid`);
      failed = true;
    } else {
      console.log(`rejected as expected: ${file}: ${fileProblems[0]}`);
    }
  } else if (fileProblems.length > 0) {
    for (const p of fileProblems) console.error(`${file}: ${p}`);
    failed = true;
  } else {
    console.log(`valid: ${file} (${docs.length} object${docs.length === 1 ? "" : "s"})`);
  }
}
console.log(`${objects} objects in ${files.length} files: ${failed ? "FAILED" : "ok"}`);
process.exit(failed ? 1 : 0);
}
