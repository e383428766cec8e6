#!/usr/bin/env node
// manifests_check.mjs DIR: what the rendered overlays (DIR/<overlay>.yaml, from
// kustomize_render.sh) grant and enforce, beyond the structural validation of validate.mjs.
//
// 1. CEL: every expression of the ValidatingAdmissionPolicies (match conditions, variables,
//    validations, message expressions) and of the DeviceClass selectors parses.
// 2. The admission policies, evaluated on sample requests the way the API server does (match
//    rules, match conditions, variables in order, every validation true): the agent of node n1 may
//    write its own node's objects and nothing of node n2, nothing without a node-name claim, and
//    (hami-lab) only its own Node's nodetopo.dev/ labels.
// 3. Least privilege: the RBAC granted to the agent's ServiceAccount is exactly the overlay's
//    table below, no wildcard, no verb or resource more.
// 4. The DaemonSet: read-only root file system, no capability, no privilege escalation, host
//    paths read-only (kubelet directories only in dra), probes, requests and limits, the rolling
//    update, tolerations, HOST_ROOT and NODE_NAME.
// Exit status 0 when everything holds, 1 otherwise (each failure names the overlay and object).
import fs from "node:fs";
import path from "node:path";

let YAML, parse, evaluate;
try {
  ({ default: YAML } = await import("yaml"));
  ({ parse, evaluate } = await import("@marcbachmann/cel-js"));
} catch (e) {
  console.error(`manifests_check.mjs: ${e.message}\nmanifests_check.mjs: run scripts/install-deps.sh (npm ci in packaging/tests/node)`);
  process.exit(1);
}

const dir = process.argv[2];
if (!dir) {
  console.error("usage: manifests_check.mjs DIR");
  process.exit(2);
}

// What each overlay's agent may do: "group/resource[@namespace]" -> verbs.
const expectedRbac = {
  "labels-only": {
    "/nodes": ["get"],
    "nfd.k8s-sigs.io/nodefeatures@nodetopo-system": ["create", "delete", "get", "update"],
    "topology.node.k8s.io/noderesourcetopologies": ["create", "delete", "get", "update"],
  },
  dra: {
    "/nodes": ["get"],
    "nfd.k8s-sigs.io/nodefeatures@nodetopo-system": ["create", "delete", "get", "update"],
    "topology.node.k8s.io/noderesourcetopologies": ["create", "delete", "get", "update"],
    "resource.k8s.io/resourceslices": ["create", "delete", "get", "list", "update", "watch"],
    "resource.k8s.io/resourceclaims": ["get", "list", "watch"],
  },
  "hami-lab": {
    "/nodes": ["get", "patch"],
  },
};

const failures = [];
const fail = (overlay, what) => failures.push(`${overlay}: ${what}`);
const clusterScoped = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding", "DeviceClass",
  "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]);

// ---- 1. CEL syntax ------------------------------------------------------------------------------
function celExpressions(obj) {
  const out = [];
  if (obj.kind === "ValidatingAdmissionPolicy") {
    for (const c of obj.spec.matchConditions ?? []) out.push([`matchConditions[${c.name}]`, c.expression]);
    for (const v of obj.spec.variables ?? []) out.push([`variables[${v.name}]`, v.expression]);
    (obj.spec.validations ?? []).forEach((v, i) => {
      out.push([`validations[${i}].expression`, v.expression]);
      if (v.messageExpression) out.push([`validations[${i}].messageExpression`, v.messageExpression]);
    });
  } else if (obj.kind === "DeviceClass") {
    (obj.spec.selectors ?? []).forEach((s, i) => s.cel && out.push([`selectors[${i}].cel`, s.cel.expression]));
  }
  return out;
}

// ---- 2. admission policies on sample requests --------------------------------------------------
const agentUser = (sa, node) => ({
  username: `system:serviceaccount:${sa.metadata.namespace}:${sa.metadata.name}`,
  groups: ["system:serviceaccounts", `system:serviceaccounts:${sa.metadata.namespace}`],
  extra: node ? { "authentication.kubernetes.io/node-name": [node] } : {},
});

function ruleMatches(rule, req) {
  const any = (list, v) => list.includes("*") || list.includes(v);
  return any(rule.apiGroups, req.resource.group) && any(rule.operations, req.operation) &&
    any(rule.resources, req.resource.resource);
}

// The policies' verdict on one request: "allowed", "not matched" or "denied: <message>".
function admit(policies, req, object, oldObject) {
  let verdict = "not matched";
  for (const policy of policies) {
    if (!policy.spec.matchConstraints.resourceRules.some((r) => ruleMatches(r, req))) continue;
    const ctx = { request: req, object, oldObject, variables: {} };
    if (!(policy.spec.matchConditions ?? []).every((c) => evaluate(c.expression, ctx) === true)) continue;
    for (const v of policy.spec.variables ?? []) ctx.variables[v.name] = evaluate(v.expression, ctx);
    for (const v of policy.spec.validations) {
      let ok;
      try {
        ok = evaluate(v.expression, ctx) === true;
      } catch (e) {
        ok = false; // an evaluation error under failurePolicy Fail denies
      }
      if (!ok) return `denied: ${v.messageExpression ? evaluate(v.messageExpression, ctx) : v.message}`;
    }
    verdict = "allowed";
  }
  return verdict;
}

const slice = (node, driver = "nodetopo.dev") => ({
  apiVersion: "resource.k8s.io/v1", kind: "ResourceSlice",
  metadata: { name: `${node}-nodetopo.dev-abcde` },
  spec: { driver, nodeName: node, pool: { name: node, generation: 1, resourceSliceCount: 1 }, devices: [] },
});
const nodeFeature = (name, label) => ({
  apiVersion: "nfd.k8s-sigs.io/v1alpha1", kind: "NodeFeature",
  metadata: { name, namespace: "nodetopo-system", labels: { "nfd.node.kubernetes.io/node-name": label } },
  spec: { labels: {} },
});
const nrt = (name) => ({ apiVersion: "topology.node.k8s.io/v1alpha2", kind: "NodeResourceTopology", metadata: { name } });
const node = (name, labels, annotations = {}, spec = { podCIDR: "10.0.0.0/24" }) => ({
  apiVersion: "v1", kind: "Node", metadata: { name, labels, annotations }, spec,
});
const request = (user, op, group, resource) => ({ userInfo: user, operation: op, resource: { group, version: "v1", resource } });

function policyCases(sa, overlay) {
  const n1 = agentUser(sa, "n1");
  const anon = agentUser(sa, null);
  const other = { username: "system:serviceaccount:kube-system:other", groups: [], extra: { "authentication.kubernetes.io/node-name": ["n2"] } };
  const rs = (u, op) => request(u, op, "resource.k8s.io", "resourceslices");
  const nf = (u, op) => request(u, op, "nfd.k8s-sigs.io", "nodefeatures");
  const nt = (u, op) => request(u, op, "topology.node.k8s.io", "noderesourcetopologies");
  const nd = (u) => request(u, "UPDATE", "", "nodes");
  const base = { "kubernetes.io/hostname": "n1", "nvidia.com/gpu.present": "true" };
  const cases = [
    ["create its own slice", rs(n1, "CREATE"), slice("n1"), null, "allowed"],
    ["update its own slice", rs(n1, "UPDATE"), slice("n1"), slice("n1"), "allowed"],
    ["delete its own slice", rs(n1, "DELETE"), null, slice("n1"), "allowed"],
    ["create a slice of node n2", rs(n1, "CREATE"), slice("n2"), null, "denied"],
    ["move a slice of n2 to n1", rs(n1, "UPDATE"), slice("n1"), slice("n2"), "denied"],
    ["delete a slice of n2", rs(n1, "DELETE"), null, slice("n2"), "denied"],
    ["create a slice of another driver", rs(n1, "CREATE"), slice("n1", "gpu.nvidia.com"), null, "denied"],
    ["create a slice without a node-name claim", rs(anon, "CREATE"), slice("n1"), null, "denied"],
    ["create its NodeFeature", nf(n1, "CREATE"), nodeFeature("n1-nodetopo", "n1"), null, "allowed"],
    ["delete its NodeFeature", nf(n1, "DELETE"), null, nodeFeature("n1-nodetopo", "n1"), "allowed"],
    ["create the NodeFeature of n2", nf(n1, "CREATE"), nodeFeature("n2-nodetopo", "n2"), null, "denied"],
    ["create its NodeFeature labelled for n2", nf(n1, "CREATE"), nodeFeature("n1-nodetopo", "n2"), null, "denied"],
    ["create its NodeResourceTopology", nt(n1, "CREATE"), nrt("n1"), null, "allowed"],
    ["update the NodeResourceTopology of n2", nt(n1, "UPDATE"), nrt("n2"), nrt("n2"), "denied"],
    ["another service account (not this policy's business)", rs(other, "CREATE"), slice("n1"), null, "not matched"],
  ];
  if (overlay === "hami-lab") {
    cases.push(
      ["add a nodetopo.dev label to its Node", nd(n1), node("n1", { ...base, "nodetopo.dev/gpu.count": "8" }), node("n1", base), "allowed"],
      ["remove a nodetopo.dev label of its Node", nd(n1), node("n1", base), node("n1", { ...base, "nodetopo.dev/x": "1" }), "allowed"],
      ["set a hami.io annotation on its Node", nd(n1), node("n1", base, { "hami.io/node-nvidia-register": "x" }), node("n1", base), "allowed"],
      ["label node n2", nd(n1), node("n2", { ...base, "nodetopo.dev/a": "1" }), node("n2", base), "denied"],
      ["change a foreign label of its Node", nd(n1), node("n1", { ...base, "nvidia.com/gpu.present": "false" }), node("n1", base), "denied"],
      ["remove a foreign label of its Node", nd(n1), node("n1", { "kubernetes.io/hostname": "n1" }), node("n1", base), "denied"],
      ["add a foreign label to its Node", nd(n1), node("n1", { ...base, "team": "a" }), node("n1", base), "denied"],
      ["change a foreign annotation of its Node", nd(n1), node("n1", base, { "a.example/x": "2" }), node("n1", base, { "a.example/x": "1" }), "denied"],
      ["taint its Node", nd(n1), node("n1", base, {}, { podCIDR: "10.0.0.0/24", taints: [{ key: "k", effect: "NoSchedule" }] }), node("n1", base), "denied"],
      ["patch its Node without a node-name claim", nd(anon), node("n1", { ...base, "nodetopo.dev/a": "1" }), node("n1", base), "denied"],
    );
  } else {
    cases.push(["patch its Node (no policy, and RBAC grants no patch)", nd(n1), node("n1", base), node("n1", base), "not matched"]);
  }
  return cases;
}

// ---- 3. RBAC ------------------------------------------------------------------------------------
function grantedTo(objects, sa) {
  const roles = new Map(objects.filter((o) => o.kind === "ClusterRole" || o.kind === "Role")
    .map((o) => [`${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`, o]));
  const granted = {};
  const problems = [];
  for (const b of objects.filter((o) => o.kind === "ClusterRoleBinding" || o.kind === "RoleBinding")) {
    const bound = (b.subjects ?? []).some((s) => s.kind === "ServiceAccount" && s.name === sa.metadata.name && s.namespace === sa.metadata.namespace);
    if (!bound) continue;
    const ns = b.kind === "RoleBinding" ? b.metadata.namespace : "";
    const role = roles.get(`${b.roleRef.kind}/${b.roleRef.kind === "Role" ? ns : ""}/${b.roleRef.name}`);
    if (!role) {
      problems.push(`${b.kind} ${b.metadata.name} binds ${b.roleRef.kind} ${b.roleRef.name}, which is not in the overlay`);
      continue;
    }
    for (const rule of role.rules ?? []) {
      if ((rule.resourceNames ?? []).length || (rule.nonResourceURLs ?? []).length) problems.push(`${role.metadata.name}: unexpected resourceNames/nonResourceURLs`);
      for (const g of rule.apiGroups ?? []) for (const r of rule.resources ?? []) {
        if (g === "*" || r === "*" || (rule.verbs ?? []).includes("*")) problems.push(`${role.metadata.name}: wildcard in ${JSON.stringify(rule)}`);
        const key = `${g}/${r}${ns ? `@${ns}` : ""}`;
        granted[key] = [...new Set([...(granted[key] ?? []), ...rule.verbs])].sort();
      }
    }
  }
  return { granted, problems };
}

// ---- 4. DaemonSet -------------------------------------------------------------------------------
function checkDaemonSet(overlay, ds) {
  const p = (what) => fail(overlay, `DaemonSet ${ds.metadata.name}: ${what}`);
  const spec = ds.spec.template.spec;
  const ru = ds.spec.updateStrategy?.rollingUpdate ?? {};
  if (ds.spec.updateStrategy?.type !== "RollingUpdate" || ru.maxUnavailable !== 0 || ru.maxSurge !== 1) p("rolling update must be maxUnavailable 0, maxSurge 1");
  if (spec.hostNetwork || spec.hostPID || spec.hostIPC) p("uses a host namespace");
  if (spec.securityContext?.seccompProfile?.type !== "RuntimeDefault") p("no RuntimeDefault seccomp profile");
  for (const taint of ["nvidia.com/gpu", "amd.com/gpu", "habana.ai/gaudi"]) {
    if (!(spec.tolerations ?? []).some((t) => t.key === taint && t.operator === "Exists")) p(`does not tolerate ${taint}`);
  }
  const hostPaths = new Map((spec.volumes ?? []).filter((v) => v.hostPath).map((v) => [v.name, v.hostPath.path]));
  const kubeletPaths = [...hostPaths.values()].filter((h) => h.startsWith("/var/lib/kubelet") || h === "/var/run/cdi");
  if (overlay === "dra" ? kubeletPaths.length === 0 : kubeletPaths.length > 0) p(`kubelet directories ${overlay === "dra" ? "missing" : "mounted"}: ${kubeletPaths.join(", ")}`);
  for (const c of spec.containers) {
    const sc = c.securityContext ?? {};
    const where = `container ${c.name}`;
    if (sc.readOnlyRootFilesystem !== true) p(`${where}: root file system not read-only`);
    if (sc.allowPrivilegeEscalation !== false) p(`${where}: privilege escalation not disabled`);
    if (sc.privileged) p(`${where}: privileged`);
    if (JSON.stringify(sc.capabilities?.drop) !== '["ALL"]' || (sc.capabilities?.add ?? []).length) p(`${where}: capabilities not exactly drop ALL`);
    for (const kind of ["requests", "limits"]) for (const r of ["cpu", "memory"]) if (!c.resources?.[kind]?.[r]) p(`${where}: no ${kind}.${r}`);
    const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e]));
    if (env.HOST_ROOT?.value !== "/host") p(`${where}: HOST_ROOT is not /host`);
    if (env.NODE_NAME?.valueFrom?.fieldRef?.fieldPath !== "spec.nodeName") p(`${where}: NODE_NAME not from spec.nodeName`);
    for (const m of c.volumeMounts ?? []) {
      const host = hostPaths.get(m.name);
      if (!host) continue;
      const writable = host.startsWith("/var/lib/kubelet") || host === "/var/run/cdi";
      if (!writable && m.readOnly !== true) p(`${where}: host path ${host} mounted writable`);
      if (host === "/sys" && m.mountPath !== "/host/sys") p(`${where}: /sys mounted at ${m.mountPath}, not /host/sys`);
      if (writable && c.name === "agent") p(`${where}: the agent mounts kubelet directory ${host}`);
    }
    if (c.name === "agent") {
      if (c.livenessProbe?.httpGet?.path !== "/healthz") p(`${where}: liveness probe is not /healthz`);
      if (c.readinessProbe?.httpGet?.path !== "/readyz") p(`${where}: readiness probe is not /readyz`);
    }
  }
  if (!spec.containers.some((c) => c.name === "agent")) p("no agent container");
  if (spec.securityContext?.runAsNonRoot !== true) p("pod does not run as non-root by default");
  const rootContainers = spec.containers.filter((c) => c.securityContext?.runAsUser === 0).map((c) => c.name);
  if (rootContainers.some((n) => n !== "kubelet-plugin") || (rootContainers.length && overlay !== "dra")) p(`containers running as root: ${rootContainers}`);
}

// ---- driver -------------------------------------------------------------------------------------
const files = fs.readdirSync(dir).filter((f) => f.endsWith(".yaml")).sort();
if (files.length === 0) {
  console.error(`manifests_check.mjs: no rendered overlays in ${dir}`);
  process.exit(1);
}
for (const file of files) {
  const overlay = path.basename(file, ".yaml");
  const objects = YAML.parseAllDocuments(fs.readFileSync(path.join(dir, file), "utf8")).map((d) => d.toJS()).filter(Boolean);
  let expressions = 0;
  for (const obj of objects) {
    if (clusterScoped.has(obj.kind) && obj.metadata.namespace) fail(overlay, `${obj.kind} ${obj.metadata.name} is cluster-scoped but has namespace ${obj.metadata.namespace}`);
    for (const [where, expr] of celExpressions(obj)) {
      expressions++;
      try {
        parse(expr);
      } catch (e) {
        fail(overlay, `${obj.kind} ${obj.metadata.name} ${where}: CEL does not parse: ${e.message.split("\n")[0]}`);
      }
    }
  }
  const sas = objects.filter((o) => o.kind === "ServiceAccount");
  if (sas.length !== 1) {
    fail(overlay, `expected one ServiceAccount, found ${sas.length}`);
    continue;
  }
  const sa = sas[0];

  const policies = objects.filter((o) => o.kind === "ValidatingAdmissionPolicy");
  for (const policy of policies) {
    const bindings = objects.filter((o) => o.kind === "ValidatingAdmissionPolicyBinding" && o.spec.policyName === policy.metadata.name);
    if (!bindings.some((b) => b.spec.validationActions.includes("Deny"))) fail(overlay, `policy ${policy.metadata.name} has no Deny binding`);
    if (policy.spec.failurePolicy !== "Fail") fail(overlay, `policy ${policy.metadata.name} does not fail closed`);
    const me = `system:serviceaccount:${sa.metadata.namespace}:${sa.metadata.name}`;
    if (!(policy.spec.matchConditions ?? []).some((c) => c.expression.includes(`'${me}'`))) fail(overlay, `policy ${policy.metadata.name} does not match the agent's ServiceAccount ${me}`);
  }
  let cases = 0;
  for (const [what, req, object, oldObject, want] of policyCases(sa, overlay)) {
    cases++;
    let got;
    try {
      got = admit(policies, req, object, oldObject);
    } catch (e) {
      got = `error: ${e.message}`;
    }
    if (!got.startsWith(want)) fail(overlay, `the agent of n1 may ${want === "allowed" ? "" : "not "}${what}: got ${got}`);
  }

  const { granted, problems } = grantedTo(objects, sa);
  problems.forEach((p) => fail(overlay, p));
  const expected = expectedRbac[overlay];
  if (!expected) {
    fail(overlay, "no RBAC table for this overlay in manifests_check.mjs");
  } else {
    const show = (m) => JSON.stringify(Object.fromEntries(Object.entries(m).sort()));
    const norm = Object.fromEntries(Object.entries(expected).map(([k, v]) => [k, [...v].sort()]));
    if (show(granted) !== show(norm)) fail(overlay, `RBAC of ${sa.metadata.name} is ${show(granted)}, expected exactly ${show(norm)}`);
  }

  const daemonSets = objects.filter((o) => o.kind === "DaemonSet");
  if (daemonSets.length !== 1) fail(overlay, `expected one DaemonSet, found ${daemonSets.length}`);
  daemonSets.forEach((ds) => checkDaemonSet(overlay, ds));
  console.log(`${overlay}: ${objects.length} objects, ${expressions} CEL expressions parsed, ${cases} admission cases, RBAC ${Object.keys(granted).length} resources`);
}
if (failures.length) {
  failures.forEach((f) => console.error(`FAIL ${f}`));
  console.error(`manifests_check: ${failures.length} failure(s)`);
  process.exit(1);
}
console.log("manifests_check: ok");
