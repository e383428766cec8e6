#!/usr/bin/env node
// A fake Kubernetes API server over HTTPS, for the tests of nodetopo's publisher (tests/kube) and
// the fleet simulation (bench/fleet). Faithful where the publisher depends on it:
// resourceVersion and optimistic concurrency (409 on a stale update or failed delete
// precondition), generateName, ownerReferences, field selectors on spec.nodeName / spec.driver,
// watch with bookmarks and 410 Expired, DeleteCollection as the kubelet sends it, Status error
// bodies, merge and strategic-merge patches (of maps), the Node status subresource, /version and /apis discovery, CRDs present or absent, bearer tokens that expire, client
// certificates. Every object written is validated by tests/validate (npm kubernetes-models and
// the CRD schemas) before it is stored; an invalid one is refused with 422.
//
//   node server.mjs --cert F --key F --ca F [--port 0] [--version 1.35] [--crds nfd,nrt]
//                   [--nodes n1,n2] [--token T]... [--bookmark-ms 1000] [--no-dra]
//
// Prints "LISTENING <port>" once ready. Tests drive it through /_fake/* (no authentication):
//   GET  /_fake/state?resource=R            stored objects of R
//   POST /_fake/faults {rule} | DELETE      fault injection (see matchFault)
//   POST /_fake/tokens {token, ttlMs}        accept a token (expiring after ttlMs)
//   POST /_fake/tokens/revoke {token}
//   POST /_fake/crds {name, present}         install / remove the nfd or nrt CRD
//   POST /_fake/wipe {node}                  the kubelet's DeleteCollection of a node's slices
//   POST /_fake/touch {resource, name, ns}   a concurrent writer changes an object
//   POST /_fake/apply {object}               store an object as another client would
//   POST /_fake/reset                        restart with the data lost (nodes re-registered)
//   GET  /_fake/stats | POST /_fake/stats/reset   request counters, per second
//   GET  /_fake/summary                      per node: slices, devices, generations
//   POST /_fake/cut-watches                  every watch connection dropped (an outage)
import fs from "node:fs";
import https from "node:https";
import crypto from "node:crypto";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const { validateObject } = await import(pathToFileURL(path.join(here, "../../validate/validate.mjs")).href);

// --- options -------------------------------------------------------------------------------------
const argv = process.argv.slice(2);
const opt = { port: 0, version: "1.35", crds: "", nodes: "", tokens: [], bookmarkMs: 1000, dra: true };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const next = () => argv[++i];
  if (a === "--cert") opt.cert = next();
  else if (a === "--key") opt.key = next();
  else if (a === "--ca") opt.ca = next();
  else if (a === "--port") opt.port = Number(next());
  else if (a === "--version") opt.version = next();
  else if (a === "--crds") opt.crds = next();
  else if (a === "--nodes") opt.nodes = next();
  else if (a === "--token") opt.tokens.push(next());
  else if (a === "--bookmark-ms") opt.bookmarkMs = Number(next());
  else if (a === "--no-dra") opt.dra = false;
  else if (a === "--quiet-validation") opt.skipValidation = true;
  else {
    console.error(`server.mjs: unknown option ${a}`);
    process.exit(2);
  }
}

// --- state ---------------------------------------------------------------------------------------
const resources = {
  nodes: { group: "", version: "v1", kind: "Node", namespaced: false },
  resourceslices: { group: "resource.k8s.io", version: "v1", kind: "ResourceSlice", namespaced: false },
  // Read by the DRA kubelet plugin (tests/kubelet); tests store them through /_fake/apply.
  resourceclaims: { group: "resource.k8s.io", version: "v1", kind: "ResourceClaim", namespaced: true },
  nodefeatures: { group: "nfd.k8s-sigs.io", version: "v1alpha1", kind: "NodeFeature", namespaced: true, crd: "nfd" },
  noderesourcetopologies: { group: "topology.node.k8s.io", version: "v1alpha2", kind: "NodeResourceTopology", namespaced: false, crd: "nrt" },
};
const crds = new Set(opt.crds.split(",").filter(Boolean));
let rv = 1;
let compactedRv = 0; // events at or below this are gone: a watch from there gets 410
let store = new Map(); // key -> object
let events = []; // {rv, resource, type, obj}
const watchers = new Set();
const tokens = new Map(opt.tokens.map((t) => [t, Infinity]));
let faults = [];
let stats = { started: Date.now(), counts: {}, perSecond: {} };

const key = (res, ns, name) => `${res}/${ns ?? ""}/${name}`;
const clone = (o) => JSON.parse(JSON.stringify(o));
const served = (res) => (res === "resourceslices" || res === "resourceclaims" ? opt.dra : !resources[res].crd || crds.has(resources[res].crd));

function addNode(name) {
  const obj = { apiVersion: "v1", kind: "Node", metadata: { name, labels: { "kubernetes.io/hostname": name, "team.example.com/owner": "infra" } } };
  commit("nodes", undefined, obj, "ADDED");
}
function stamp(obj, isNew) {
  obj.metadata.resourceVersion = String(++rv);
  if (isNew) {
    obj.metadata.uid = crypto.randomUUID();
    obj.metadata.creationTimestamp = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    obj.metadata.generation = 1;
  }
}
function commit(res, ns, obj, type) {
  if (type === "ADDED") stamp(obj, true);
  else if (type === "MODIFIED") stamp(obj, false);
  else obj.metadata.resourceVersion = String(++rv);
  const k = key(res, ns, obj.metadata.name);
  if (type === "DELETED") store.delete(k);
  else store.set(k, obj);
  const ev = { rv, resource: res, type, obj: clone(obj) };
  events.push(ev);
  if (events.length > 5000) {
    compactedRv = events[events.length - 5001].rv;
    events = events.slice(-5000);
  }
  for (const w of watchers) w.send(ev);
  if (res === "nodes" && type === "DELETED") collectGarbage(obj.metadata.uid);
  return obj;
}
// The garbage collector: dependents of a deleted owner go too.
function collectGarbage(uid) {
  for (const [k, o] of [...store]) {
    if ((o.metadata.ownerReferences ?? []).some((r) => r.uid === uid)) commit(k.split("/")[0], o.metadata.namespace, clone(o), "DELETED");
  }
}
for (const n of opt.nodes.split(",").filter(Boolean)) addNode(n);

// --- helpers -------------------------------------------------------------------------------------
function status(res, code, reason, message, details, headers = {}) {
  const body = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code };
  if (details) body.details = details;
  return send(res, code, body, headers);
}
function send(res, code, body, headers = {}) {
  res.writeHead(code, { "Content-Type": "application/json", ...headers });
  res.end(JSON.stringify(body));
  return code;
}
function get(obj, dotted) {
  return dotted.split(".").reduce((o, k) => (o == null ? undefined : o[k]), obj);
}
function parseSelector(text) {
  const out = [];
  for (const part of (text ?? "").split(",").filter(Boolean)) {
    const m = part.match(/^([^=!]+)(==|=|!=)(.*)$/);
    if (!m) throw new Error(`invalid field selector ${part}`);
    out.push({ field: m[1], neg: m[2] === "!=", value: m[3] });
  }
  return out;
}
function selectorAllows(resName, field) {
  const allowed = { resourceslices: ["metadata.name", "spec.nodeName", "spec.driver"], nodes: ["metadata.name"], resourceclaims: ["metadata.name"], nodefeatures: ["metadata.name"], noderesourcetopologies: ["metadata.name"] };
  return allowed[resName].includes(field);
}
const matches = (sel, obj) => sel.every((s) => (String(get(obj, s.field) ?? "") === s.value) !== s.neg);
function randomSuffix() {
  const alphabet = "bcdfghjklmnpqrstvwxz2456789";
  let s = "";
  for (let i = 0; i < 5; i++) s += alphabet[crypto.randomInt(alphabet.length)];
  return s;
}
function readBody(req) {
  return new Promise((resolve) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", () => resolve(""));
  });
}
function mergePatch(target, patch) {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return clone(patch);
  const out = target !== null && typeof target === "object" && !Array.isArray(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}
// The first part of a strategic merge patch this fake cannot apply faithfully, or "".
function smpUnsupported(patch, where = "") {
  if (Array.isArray(patch)) return `a list (at ${where || "the top"})`;
  if (patch === null || typeof patch !== "object") return "";
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith("$")) return `the directive ${k}`;
    const inner = smpUnsupported(v, where ? `${where}.${k}` : k);
    if (inner) return inner;
  }
  return "";
}
function count(verb, res, code) {
  const k = `${verb} ${res} ${code}`;
  stats.counts[k] = (stats.counts[k] ?? 0) + 1;
  const sec = Math.floor((Date.now() - stats.started) / 1000);
  stats.perSecond[sec] = (stats.perSecond[sec] ?? 0) + 1;
}
function invalid(obj, res, resName) {
  if (opt.skipValidation) return false;
  const problems = validateObject(obj, "request", false);
  const name = obj?.metadata?.name ?? obj?.metadata?.generateName ?? "(unnamed)";
  if (obj?.kind !== resources[resName].kind) problems.push(`kind ${obj?.kind} does not belong to ${resName}`);
  if (problems.length === 0) return false;
  status(res, 422, "Invalid", `${resources[resName].kind} "${name}" is invalid: ${problems.join("; ")}`, { name, kind: resName });
  return true;
}

// Faults: {method, resource, watch, status, count, retryAfter, delayMs, reset, conflictWriter}.
// A rule matches when every given field matches; `count` (default 1, -1 forever) runs it down.
function matchFault(method, resName, isWatch) {
  for (const f of faults) {
    if (f.count === 0) continue;
    if (f.method && f.method !== method) continue;
    if (f.resource && f.resource !== resName) continue;
    if (f.watch !== undefined && f.watch !== isWatch) continue;
    if (f.untilMs && Date.now() > f.untilMs) continue;
    if (f.count > 0) f.count--;
    return f;
  }
  return null;
}

// --- watch ---------------------------------------------------------------------------------------
function startWatch(req, res, resName, ns, q) {
  let sel;
  try {
    sel = parseSelector(q.get("fieldSelector"));
  } catch (e) {
    return status(res, 400, "BadRequest", e.message);
  }
  const def = resources[resName];
  res.writeHead(200, { "Content-Type": "application/json", "Transfer-Encoding": "chunked" });
  const from = q.get("resourceVersion");
  const fits = (ev) => ev.resource === resName && (ns === undefined || ev.obj.metadata.namespace === ns) && (matches(sel, ev.obj) || ev.type === "DELETED" && matches(sel, ev.obj));
  // Never after the end: a bookmark due at the same moment as the timeout (300 s is five 60 s
  // bookmarks) would otherwise write to an ended stream and kill the server.
  const write = (o) => {
    if (!res.writableEnded && !res.destroyed) res.write(JSON.stringify(o) + "\n");
  };
  res.on("error", () => {}); // a client gone mid-write: its "close" cleans up
  if (from && from !== "0" && (Number(from) < compactedRv || Number(from) > rv)) {
    write({ type: "ERROR", object: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: `too old resource version: ${from} (${compactedRv})`, reason: "Expired", code: 410 } });
    res.end();
    return 200;
  }
  const w = {
    lastRv: rv,
    send(ev) {
      if (!fits(ev)) return;
      write({ type: ev.type, object: ev.obj });
      this.lastRv = ev.rv;
    },
  };
  if (!from || from === "0") {
    for (const [k, o] of store) if (k.startsWith(resName + "/") && fits({ resource: resName, obj: o, type: "ADDED" })) write({ type: "ADDED", object: o });
  } else {
    for (const ev of events) if (ev.rv > Number(from)) w.send(ev);
  }
  watchers.add(w);
  const bookmarks = q.get("allowWatchBookmarks") === "true" ? setInterval(() => write({ type: "BOOKMARK", object: { kind: def.kind, apiVersion: def.group ? `${def.group}/${def.version}` : def.version, metadata: { resourceVersion: String(rv) } } }), opt.bookmarkMs) : null;
  const timeout = Number(q.get("timeoutSeconds") ?? 1800);
  const timer = setTimeout(() => {
    done();
    res.end();
  }, timeout * 1000);
  const done = () => {
    watchers.delete(w);
    clearTimeout(timer);
    if (bookmarks) clearInterval(bookmarks);
  };
  w.close = () => {
    done();
    res.socket?.destroy();
  };
  res.on("close", done);
  return 200;
}

// --- API -----------------------------------------------------------------------------------------
function discovery(res, p) {
  if (p === "/version") {
    const [major, minor] = opt.version.split(".");
    return send(res, 200, { major, minor, gitVersion: `v${opt.version}.0`, platform: "linux/amd64" });
  }
  if (p === "/api") return send(res, 200, { kind: "APIVersions", versions: ["v1"] });
  const groups = [];
  for (const [name, def] of Object.entries(resources)) {
    if (!def.group || !served(name) || groups.some((g) => g.name === def.group)) continue;
    const gv = `${def.group}/${def.version}`;
    groups.push({ name: def.group, versions: [{ groupVersion: gv, version: def.version }], preferredVersion: { groupVersion: gv, version: def.version } });
  }
  return send(res, 200, { kind: "APIGroupList", apiVersion: "v1", groups });
}

function route(p) {
  // /api/v1/nodes[/name] | /apis/G/V[/namespaces/NS]/R[/name]
  // /api/v1/nodes/NAME/status is the status subresource (as the real server: a write through it
  // changes only .status, a write of the Node itself never changes .status).
  let m = p.match(/^\/api\/v1\/(nodes)(?:\/([^/]+)(?:\/(status))?)?$/);
  if (m) return { resName: m[1], name: m[2] && decodeURIComponent(m[2]), sub: m[3] };
  m = p.match(/^\/apis\/([^/]+)\/([^/]+)(?:\/namespaces\/([^/]+))?\/([^/]+)(?:\/([^/]+))?$/);
  if (!m) return null;
  const [, group, version, ns, resName, name] = m;
  const def = resources[resName];
  if (!def || def.group !== group || def.version !== version) return { missing: true };
  if (def.namespaced !== (ns !== undefined)) return { missing: true };
  return { resName, ns: ns && decodeURIComponent(ns), name: name && decodeURIComponent(name) };
}

async function api(req, res, url) {
  const p = url.pathname;
  const q = url.searchParams;
  if (p === "/version" || p === "/api" || p === "/apis") {
    const fault = matchFault(req.method, p.slice(1), false);
    if (fault?.status) return status(res, fault.status, "InternalError", fault.message ?? `injected ${fault.status}`);
    if (fault?.reset) {
      req.socket.destroy();
      return "reset";
    }
    return discovery(res, p);
  }
  const r = route(p);
  if (!r || r.missing || !served(r.resName)) return status(res, 404, "NotFound", "the server could not find the requested resource");
  const { resName, ns, name, sub } = r;
  // Nodes: what a write may change (the registry's nodeStrategy / nodeStatusStrategy).
  const scoped = (patched, current) => {
    if (resName !== "nodes") return patched;
    const out = sub === "status" ? { ...clone(current), status: patched.status } : { ...patched, status: current.status };
    if (out.status === undefined) delete out.status;
    else out.status = clone(out.status);
    return out;
  };
  const def = resources[resName];
  const isWatch = q.get("watch") === "true" || q.get("watch") === "1";
  const body = req.method === "GET" ? "" : await readBody(req);
  const fault = matchFault(req.method, resName, isWatch);
  if (fault) {
    if (fault.delayMs) await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
    if (fault.reset) {
      req.socket.destroy();
      return "reset";
    }
    if (fault.conflictWriter && name) touch(resName, ns, name);
    if (fault.status) {
      const headers = fault.retryAfter !== undefined ? { "Retry-After": String(fault.retryAfter) } : {};
      return status(res, fault.status, fault.reason ?? "InternalError", fault.message ?? `injected ${fault.status}`, undefined, headers);
    }
  }
  const k = name !== undefined ? key(resName, ns, name) : null;
  const current = k ? store.get(k) : undefined;
  const notFound = () => status(res, 404, "NotFound", `${resName} "${name}" not found`, { name, kind: resName });

  if (req.method === "GET" && name === undefined) {
    if (isWatch) return startWatch(req, res, resName, ns, q);
    let sel;
    try {
      sel = parseSelector(q.get("fieldSelector"));
    } catch (e) {
      return status(res, 400, "BadRequest", e.message);
    }
    for (const s of sel) if (!selectorAllows(resName, s.field)) return status(res, 400, "BadRequest", `field label not supported: ${s.field}`);
    const items = [...store].filter(([kk, o]) => kk.startsWith(resName + "/") && (ns === undefined || o.metadata.namespace === ns) && matches(sel, o)).map(([, o]) => o);
    return send(res, 200, { kind: `${def.kind}List`, apiVersion: def.group ? `${def.group}/${def.version}` : "v1", metadata: { resourceVersion: String(rv) }, items });
  }
  if (req.method === "GET") return current ? send(res, 200, current) : notFound();

  let obj;
  if (body) {
    try {
      obj = JSON.parse(body);
    } catch (e) {
      return status(res, 400, "BadRequest", `the body is not JSON: ${e.message}`);
    }
  }
  if (req.method === "POST" && name === undefined) {
    if (resName === "nodes") return status(res, 403, "Forbidden", "nodes are registered by the kubelet");
    if (!obj?.metadata) return status(res, 400, "BadRequest", "metadata required");
    if (ns !== undefined) {
      if (obj.metadata.namespace && obj.metadata.namespace !== ns) return status(res, 400, "BadRequest", "the namespace of the object does not match the namespace of the request");
      obj.metadata.namespace = ns;
    }
    if (!obj.metadata.name && obj.metadata.generateName) {
      do obj.metadata.name = obj.metadata.generateName + randomSuffix();
      while (store.has(key(resName, ns, obj.metadata.name)));
    }
    if (!obj.metadata.name) return status(res, 422, "Invalid", `${def.kind} is invalid: metadata.name: Required value: name or generateName is required`);
    if (obj.metadata.resourceVersion) return status(res, 400, "BadRequest", "resourceVersion should not be set on objects to be created");
    if (invalid(obj, res, resName)) return 422;
    if (store.has(key(resName, ns, obj.metadata.name))) return status(res, 409, "AlreadyExists", `${resName} "${obj.metadata.name}" already exists`, { name: obj.metadata.name, kind: resName });
    return send(res, 201, commit(resName, ns, obj, "ADDED"));
  }
  if (req.method === "PUT" && name !== undefined) {
    if (!current) return notFound();
    if (!obj?.metadata || obj.metadata.name !== name) return status(res, 400, "BadRequest", "the name of the object does not match the name on the URL");
    if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== current.metadata.resourceVersion) {
      return status(res, 409, "Conflict", `Operation cannot be fulfilled on ${resName} "${name}": the object has been modified; please apply your changes to the latest version and try again`, { name, kind: resName });
    }
    if (obj.metadata.uid && obj.metadata.uid !== current.metadata.uid) return status(res, 409, "Conflict", `Precondition failed: UID in precondition: ${obj.metadata.uid}, UID in object meta: ${current.metadata.uid}`);
    if (ns !== undefined) obj.metadata.namespace = ns;
    obj = scoped(obj, current);
    if (invalid(obj, res, resName)) return 422;
    obj.metadata.uid = current.metadata.uid;
    obj.metadata.creationTimestamp = current.metadata.creationTimestamp;
    obj.metadata.generation = (current.metadata.generation ?? 1) + (JSON.stringify(obj.spec) !== JSON.stringify(current.spec) ? 1 : 0);
    return send(res, 200, commit(resName, ns, obj, "MODIFIED"));
  }
  if (req.method === "PATCH" && name !== undefined) {
    if (!current) return notFound();
    const type = (req.headers["content-type"] ?? "").split(";")[0];
    const accepted = ["application/merge-patch+json", "application/strategic-merge-patch+json"];
    if (!accepted.includes(type)) return status(res, 415, "UnsupportedMediaType", `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")} (got ${type})`);
    // A strategic merge patch of maps is a JSON merge patch; lists and $-directives merge by the
    // Go types' patch tags, which this fake does not know: refused, never applied differently.
    if (type === "application/strategic-merge-patch+json") {
      const unsupported = smpUnsupported(obj);
      if (unsupported) return status(res, 400, "BadRequest", `strategic merge patch: ${unsupported} is not implemented by the fake API server`);
    }
    const want = obj?.metadata?.resourceVersion;
    if (want && want !== current.metadata.resourceVersion) return status(res, 409, "Conflict", `Operation cannot be fulfilled on ${resName} "${name}": the object has been modified; please apply your changes to the latest version and try again`);
    const patched = scoped(mergePatch(current, obj), current);
    patched.metadata.name = name;
    patched.metadata.uid = current.metadata.uid;
    if (invalid(patched, res, resName)) return 422;
    return send(res, 200, commit(resName, ns, patched, "MODIFIED"));
  }
  if (req.method === "DELETE" && name !== undefined) {
    if (!current) return notFound();
    const pre = obj?.preconditions ?? {};
    if (pre.uid && pre.uid !== current.metadata.uid) return status(res, 409, "Conflict", `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid}`, { name, kind: resName });
    if (pre.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) return status(res, 409, "Conflict", `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`, { name, kind: resName });
    commit(resName, ns, clone(current), "DELETED");
    return send(res, 200, { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details: { name, kind: resName, uid: current.metadata.uid } });
  }
  if (req.method === "DELETE" && name === undefined) {
    return deleteCollection(res, resName, ns, q.get("fieldSelector"));
  }
  return status(res, 405, "MethodNotAllowed", `${req.method} is not supported on ${p}`);
}

function deleteCollection(res, resName, ns, selector) {
  let sel;
  try {
    sel = parseSelector(selector);
  } catch (e) {
    return res ? status(res, 400, "BadRequest", e.message) : 400;
  }
  const def = resources[resName];
  const gone = [];
  for (const [kk, o] of [...store]) {
    if (kk.startsWith(resName + "/") && (ns === undefined || o.metadata.namespace === ns) && matches(sel, o)) gone.push(commit(resName, ns, clone(o), "DELETED"));
  }
  if (res) send(res, 200, { kind: `${def.kind}List`, apiVersion: def.group ? `${def.group}/${def.version}` : "v1", metadata: { resourceVersion: String(rv) }, items: gone });
  return gone.length;
}

// A concurrent writer: changes an object (a label) so that the publisher's next update conflicts.
function touch(resName, ns, name) {
  const o = store.get(key(resName, ns, name));
  if (!o) return false;
  const c = clone(o);
  c.metadata.labels = { ...(c.metadata.labels ?? {}), "other-writer.example.com/touched": String(rv) };
  commit(resName, ns, c, "MODIFIED");
  return true;
}

// --- control -------------------------------------------------------------------------------------
async function control(req, res, url) {
  const p = url.pathname;
  const body = req.method === "GET" ? {} : JSON.parse((await readBody(req)) || "{}");
  if (p === "/_fake/state") {
    const resName = url.searchParams.get("resource");
    const items = [...store].filter(([kk]) => kk.startsWith(resName + "/")).map(([, o]) => o);
    return send(res, 200, { rv, items });
  }
  if (p === "/_fake/faults" && req.method === "POST") {
    faults.push({ count: 1, ...body, untilMs: body.forMs ? Date.now() + body.forMs : undefined });
    return send(res, 200, { faults: faults.length });
  }
  if (p === "/_fake/faults" && req.method === "DELETE") {
    faults = [];
    return send(res, 200, {});
  }
  if (p === "/_fake/tokens") {
    tokens.set(body.token, body.ttlMs ? Date.now() + body.ttlMs : Infinity);
    return send(res, 200, {});
  }
  if (p === "/_fake/tokens/revoke") {
    tokens.delete(body.token);
    return send(res, 200, {});
  }
  if (p === "/_fake/crds") {
    if (body.present) crds.add(body.name);
    else crds.delete(body.name);
    return send(res, 200, { crds: [...crds] });
  }
  if (p === "/_fake/wipe") return send(res, 200, { deleted: deleteCollection(null, "resourceslices", undefined, `spec.nodeName=${body.node}`) });
  if (p === "/_fake/touch") return send(res, 200, { touched: touch(body.resource, body.ns, body.name) });
  if (p === "/_fake/apply") {
    const o = body.object;
    const r = Object.entries(resources).find(([, d]) => d.kind === o.kind)?.[0];
    const k = key(r, o.metadata.namespace, o.metadata.name);
    const cur = store.get(k);
    if (cur) {
      o.metadata.uid = cur.metadata.uid;
      return send(res, 200, commit(r, o.metadata.namespace, o, "MODIFIED"));
    }
    if (!o.metadata.name && o.metadata.generateName) o.metadata.name = o.metadata.generateName + randomSuffix();
    return send(res, 200, commit(r, o.metadata.namespace, o, "ADDED"));
  }
  if (p === "/_fake/reset") {
    // etcd lost: every object and event gone, watches cut; the history is gone, so a watch from
    // any earlier version gets 410 Expired and must list again; the kubelets register their
    // nodes again (new UIDs).
    const nodes = [...store.values()].filter((o) => o.kind === "Node").map((o) => o.metadata.name);
    for (const w of [...watchers]) w.close();
    store = new Map();
    events = [];
    compactedRv = ++rv;
    for (const n of nodes) addNode(n);
    return send(res, 200, { nodes });
  }
  if (p === "/_fake/summary") {
    // Per node: slices, devices and pool generations of the slices (the fleet bench polls this
    // instead of the whole state).
    const out = {};
    for (const [kk, o] of store) {
      if (!kk.startsWith("resourceslices/")) continue;
      const n = (out[o.spec.nodeName] ??= { slices: 0, devices: 0, generations: [], counts: [] });
      n.slices++;
      n.devices += (o.spec.devices ?? []).length;
      n.generations.push(o.spec.pool.generation);
      n.counts.push(o.spec.pool.resourceSliceCount);
    }
    return send(res, 200, out);
  }
  if (p === "/_fake/cut-watches") {
    const n = watchers.size;
    for (const w of [...watchers]) w.close();
    return send(res, 200, { cut: n });
  }
  if (p === "/_fake/stats" && req.method === "GET") return send(res, 200, { ...stats, now: Date.now(), watchers: watchers.size });
  if (p === "/_fake/stats/reset") {
    stats = { started: Date.now(), counts: {}, perSecond: {} };
    return send(res, 200, {});
  }
  return status(res, 404, "NotFound", `no control endpoint ${p}`);
}

function authorized(req) {
  if (req.socket.authorized) return true; // a client certificate signed by the CA
  const h = req.headers.authorization ?? "";
  if (!h.startsWith("Bearer ")) return false;
  const exp = tokens.get(h.slice(7));
  return exp !== undefined && Date.now() < exp;
}

function verbOf(req, url) {
  const q = url.searchParams;
  const named = route(url.pathname)?.name !== undefined;
  if (req.method === "GET") return q.get("watch") === "true" || q.get("watch") === "1" ? "watch" : named ? "get" : "list";
  return { POST: "create", PUT: "update", PATCH: "patch", DELETE: named ? "delete" : "deletecollection" }[req.method] ?? req.method;
}

const server = https.createServer(
  { cert: fs.readFileSync(opt.cert), key: fs.readFileSync(opt.key), ca: fs.readFileSync(opt.ca), requestCert: true, rejectUnauthorized: false },
  async (req, res) => {
    const url = new URL(req.url, "https://fake");
    try {
      if (url.pathname.startsWith("/_fake/")) return await control(req, res, url);
      const verb = verbOf(req, url);
      const routed = route(url.pathname);
      const resName = routed?.resName ? routed.resName + (routed.sub ? `/${routed.sub}` : "") : url.pathname;
      if (!authorized(req)) {
        count(verb, resName, 401);
        return status(res, 401, "Unauthorized", "Unauthorized");
      }
      const code = await api(req, res, url);
      count(verb, resName, code);
    } catch (e) {
      console.error(`server.mjs: ${req.method} ${req.url}: ${e.stack}`);
      if (!res.headersSent) status(res, 500, "InternalError", e.message);
    }
  },
);
server.keepAliveTimeout = 60000;
server.listen(opt.port, "127.0.0.1", () => {
  console.log(`LISTENING ${server.address().port}`);
});
process.on("SIGTERM", () => process.exit(0));
