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

const ajv = new Ajv({ allErrors: true, strict: false });
const crds = {
  "nfd.k8s-sigs.io/v1alpha1/NodeFeature": ajv.compile(nodeFeatureSchema),
  "topology.node.k8s.io/v1alpha2/NodeResourceTopology": ajv.compile(nrtSchema),
};

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
