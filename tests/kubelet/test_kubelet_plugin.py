#!/usr/bin/python3
"""`topo kubelet-plugin` against the fake kubelet (tests/fakes/kubelet) and the fake API server
(tests/fakes/kube-apiserver, HTTPS with a CA made here). One case per run:

  test_kubelet_plugin.py --topo BUILD/topo --case NAME
"""
import argparse
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.dont_write_bytecode = True  # nothing generated lands in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fakes", "kubelet"))
import fake_kubelet  # noqa: E402

DRIVER = "nodetopo.dev"
NODE = "node-a"


def sh(cmd, cwd):
    subprocess.run(cmd, cwd=cwd, shell=True, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


class FakeApi:
    def __init__(self, tmp, version="1.35"):
        self.dir = os.path.join(tmp, "api")
        os.makedirs(self.dir)
        ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
        sh(f"openssl req -x509 {ec} -keyout ca.key -out ca.crt -subj /CN=fake-ca -days 2 && "
           f"openssl req {ec} -keyout server.key -out server.csr -subj /CN=kube-apiserver && "
           "printf 'subjectAltName=IP:127.0.0.1\\n' > server.ext && "
           "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
           "-out server.crt -days 2 -extfile server.ext", self.dir)
        server = os.path.join(HERE, "..", "fakes", "kube-apiserver", "server.mjs")
        self.proc = subprocess.Popen(
            ["node", server, "--cert", "server.crt", "--key", "server.key", "--ca", "ca.crt",
             "--version", version, "--nodes", NODE, "--token", "token-1", "--bookmark-ms", "300"],
            cwd=self.dir, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("LISTENING "), f"fake API server did not start: {line!r}"
        self.url = f"https://127.0.0.1:{int(line.split()[1])}"
        self.ctx = ssl.create_default_context(cafile=os.path.join(self.dir, "ca.crt"))
        self.kubeconfig = os.path.join(self.dir, "kubeconfig")
        with open(self.kubeconfig, "w") as f:
            f.write(f"""apiVersion: v1
kind: Config
current-context: c
clusters: [{{name: k, cluster: {{server: "{self.url}", certificate-authority: ca.crt}}}}]
users: [{{name: u, user: {{token: token-1}}}}]
contexts: [{{name: c, context: {{cluster: k, user: u, namespace: default}}}}]
""")

    def request(self, method, path, body=None, auth=True):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        if auth:
            req.add_header("Authorization", "Bearer token-1")
        with urllib.request.urlopen(req, context=self.ctx, timeout=10) as resp:
            return json.loads(resp.read() or b"{}")

    def apply(self, obj):
        return self.request("POST", "/_fake/apply", {"object": obj}, auth=False)

    def state(self, resource):
        return self.request("GET", f"/_fake/state?resource={resource}", auth=False)["items"]

    def claim(self, name, results, namespace="default"):
        obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
               "metadata": {"name": name, "namespace": namespace},
               "spec": {"devices": {"requests": [{"name": r["request"], "exactly": {
                   "deviceClassName": "gpu.nodetopo.dev"}} for r in results]}},
               "status": {"allocation": {"devices": {"results": results}}}}
        stored = self.apply(obj)
        return (namespace, stored["metadata"]["uid"], name)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(5)


class PluginProc:
    def __init__(self, topo, tmp, api, mock="hami-lab", extra=(), uid=""):
        self.args = [topo, "--log-level", "info", "kubelet-plugin", "--mock", mock, "--node", NODE,
                     "--kubeconfig", api.kubeconfig, "--config", os.path.join(tmp, "plugin.yaml"),
                     "--registry-dir", os.path.join(tmp, "registry"),
                     "--plugins-dir", os.path.join(tmp, "plugins"),
                     "--cdi-dir", os.path.join(tmp, "cdi"), *extra]
        if uid:
            self.args += ["--instance-uid", uid]
        self.log = open(os.path.join(tmp, f"plugin{uid}.log"), "a")
        self.proc = subprocess.Popen(self.args, stdout=self.log, stderr=self.log)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(5)
        assert rc == 0, f"plugin exited {rc}"


def eventually(cond, timeout=30.0, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def validate_cdi(files):
    r = subprocess.run(["node", os.path.join(HERE, "validate-cdi.mjs"), *files],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"CDI schema: {r.stderr}"


def gpu(device, **extra):
    return {"request": extra.pop("request", "gpu"), "driver": DRIVER, "pool": NODE,
            "device": device, **extra}


class Env:
    def __init__(self, topo, version="1.35"):
        self.topo = topo
        self.tmp = tempfile.mkdtemp(prefix="kubelet-plugin-test-")
        with open(os.path.join(self.tmp, "plugin.yaml"), "w") as f:
            f.write("socketCheckMs: 100\nregistrationRetryMs: 200\nforeignSlicePollMs: 200\n"
                    f"vendorCdiDirs: [{os.path.join(self.tmp, 'vendor-cdi')}]\n")
        self.api = FakeApi(self.tmp, version)
        self.kubelet = fake_kubelet.FakeKubelet(os.path.join(self.tmp, "registry"), DRIVER)
        self.plugins = []

    def start(self, **kw):
        p = PluginProc(self.topo, self.tmp, self.api, **kw)
        self.plugins.append(p)
        return p

    def register(self):
        self.kubelet.register(self.kubelet.wait_for_socket())

    def cdi_files(self):
        d = os.path.join(self.tmp, "cdi")
        return sorted(os.path.join(d, f) for f in os.listdir(d) if not f.startswith("."))

    def close(self, ok):
        # SIGTERM first: the plugin then removes its mock host's temporary root, which a SIGKILL
        # would leave behind in /tmp.
        for p in self.plugins:
            if p.proc.poll() is None:
                p.proc.terminate()
        for p in self.plugins:
            try:
                p.proc.wait(5)
            except subprocess.TimeoutExpired:
                p.proc.kill()
                p.proc.wait()
        self.api.stop()
        if ok:
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            print(f"kept {self.tmp}", file=sys.stderr)
            for name in os.listdir(self.tmp):
                if name.endswith(".log"):
                    print(open(os.path.join(self.tmp, name)).read(), file=sys.stderr)


# --- cases ---------------------------------------------------------------------------------------

def case_registration(env):
    p = env.start()
    sock = env.kubelet.wait_for_socket()
    assert os.path.basename(sock) == f"{DRIVER}-reg.sock", sock
    info = env.kubelet.get_info(sock)
    assert info.type == "DRAPlugin" and info.name == DRIVER
    assert info.endpoint == os.path.join(env.tmp, "plugins", DRIVER, "dra.sock"), info.endpoint
    assert list(info.supported_versions) == ["v1.DRAPlugin", "v1beta1.DRAPlugin"]
    # A refusal: the plugin offers a fresh socket again, which the kubelet then accepts.
    env.kubelet.register(sock, accept=False, error="test refusal")
    again = env.kubelet.wait_for_socket(timeout=20)
    assert again == sock
    env.kubelet.register(again)
    assert "test refusal" in open(os.path.join(env.tmp, "plugin.log")).read()
    # Sockets removed by someone: re-created.
    os.unlink(info.endpoint)
    eventually(lambda: os.path.exists(info.endpoint), what="DRA socket re-created")
    # ... and the registration offered again, since the kubelet dropped the old endpoint.
    env.kubelet.register(env.kubelet.wait_for_socket(timeout=20))
    os.unlink(sock)
    eventually(lambda: os.path.exists(sock), what="registration socket re-created")
    p.stop()
    assert not os.path.exists(sock) and not os.path.exists(info.endpoint)


def case_rolling_update(env):
    old = env.start(uid="pod-old")
    env.register()
    new = env.start(uid="pod-new")
    reg = os.path.join(env.tmp, "registry")
    eventually(lambda: len(os.listdir(reg)) == 2, what="two registration sockets")
    names = sorted(os.listdir(reg))
    assert names == [f"{DRIVER}-pod-new-reg.sock", f"{DRIVER}-pod-old-reg.sock"], names
    env.register()
    assert env.kubelet.endpoint().endswith("dra-pod-new.sock")
    old.stop()  # the old pod leaves only its own sockets behind: none
    assert sorted(os.listdir(reg)) == [f"{DRIVER}-pod-new-reg.sock"]
    claim = env.api.claim("c1", [gpu("gpu-0000-01-00-0")])
    assert env.kubelet.prepare([claim])[claim[1]].error == ""
    new.stop()


def case_prepare(env):
    env.start()
    env.register()
    claim = env.api.claim("share", [
        gpu("gpu-0000-01-00-0", shareID="7f3c0e2a-0000-4000-8000-000000000001",
            consumedCapacity={"cores": "30"}),
        {"request": "nic", "driver": DRIVER, "pool": NODE, "device": "nic-0000-42-00-0"}])
    first = env.kubelet.prepare([claim])[claim[1]]
    assert first.error == "", first.error
    files = env.cdi_files()
    assert len(files) == 1, files
    bytes1 = open(files[0], "rb").read()
    second = env.kubelet.prepare([claim], version="v1beta1")[claim[1]]
    def fields(r):
        return [(list(d.request_names), d.pool_name, d.device_name, list(d.cdi_device_ids))
                for d in r.devices]
    assert second.error == "" and fields(second) == fields(first), (second, first)
    assert open(files[0], "rb").read() == bytes1
    validate_cdi(files)
    spec = json.loads(bytes1)
    assert spec["kind"] == f"{DRIVER}/claim"
    ids = [list(d.cdi_device_ids) for d in first.devices]
    assert ids == [[f"{DRIVER}/claim={claim[1]}-gpu-0000-01-00-0"],
                   [f"{DRIVER}/claim={claim[1]}-nic-0000-42-00-0"]], ids
    assert [d.request_names for d in first.devices] == [["gpu"], ["nic"]]
    env_gpu = spec["devices"][0]["containerEdits"]["env"]
    assert "CUDA_DEVICE_SM_LIMIT=30" in env_gpu, env_gpu
    assert "NODETOPO_GPU_0_SHARE_ID=7f3c0e2a-0000-4000-8000-000000000001" in env_gpu
    # The device as `topo export resourceslices` publishes it: its UUID and memory.
    exported = json.loads(subprocess.run(
        [env.topo, "export", "resourceslices", "--mock", "hami-lab", "--node", NODE,
         "--format", "json"], check=True, capture_output=True, text=True).stdout)
    dev = next(d for s in exported["items"] for d in s["spec"]["devices"]
               if d["name"] == "gpu-0000-01-00-0")
    assert f"NODETOPO_GPU_0_UUID={dev['attributes']['uuid']['string']}" in env_gpu, env_gpu
    memory = dev.get("capacity", {}).get("memory", {}).get("value")
    if memory is not None:  # a core-only share gets the same fraction of the memory
        units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
        num, unit = (memory[:-2], memory[-2:]) if memory[-2:] in units else (memory, None)
        mib = int(float(num) * (units[unit] if unit else 1) * 30 / 100 // 2**20)
        assert f"CUDA_DEVICE_MEMORY_LIMIT_0={mib}m" in env_gpu, (memory, env_gpu)
    else:
        assert not any(e.startswith("CUDA_DEVICE_MEMORY_LIMIT") for e in env_gpu), env_gpu
    assert "deviceNodes" not in spec["devices"][0]["containerEdits"]  # a mock GPU: env only
    env_nic = spec["devices"][1]["containerEdits"]["env"]
    assert "NODETOPO_NIC_0_NETDEV=enp66s0np0" in env_nic and \
        "NODETOPO_NIC_0_RDMA_DEVICE=mlx5_0" in env_nic, env_nic
    for _ in range(2):
        r = env.kubelet.unprepare([claim])
        assert r[claim[1]].error == "", r
    assert env.cdi_files() == []
    # The same claim prepared again: the same bytes.
    env.kubelet.prepare([claim])
    assert open(env.cdi_files()[0], "rb").read() == bytes1


def case_restart(env):
    p = env.start()
    env.register()
    claim = env.api.claim("c1", [gpu("gpu-0000-41-00-0")])
    assert env.kubelet.prepare([claim])[claim[1]].error == ""
    assert len(env.cdi_files()) == 1
    p.stop()
    env.start()
    env.register()
    again = env.kubelet.prepare([claim])[claim[1]]  # answered from the checkpoint
    assert again.error == "" and again.devices[0].device_name == "gpu-0000-41-00-0"
    assert env.kubelet.unprepare([claim])[claim[1]].error == ""
    assert env.cdi_files() == []
    ck = json.load(open(os.path.join(env.tmp, "plugins", DRIVER, "checkpoint.json")))
    assert ck["claims"] == {}, ck


def case_other_driver(env):
    env.start()
    env.register()
    other = env.api.claim("vendor", [{"request": "gpu", "driver": "gpu.nvidia.com",
                                      "pool": NODE, "device": "gpu-0"}])
    r = env.kubelet.prepare([other])[other[1]]
    assert "no device of driver nodetopo.dev" in r.error and "gpu.nvidia.com" in r.error, r.error
    mixed = env.api.claim("mixed", [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": NODE,
                                     "device": "gpu-0"},
                                    {"request": "nic", "driver": DRIVER, "pool": NODE,
                                     "device": "nic-0000-42-00-0"}])
    r = env.kubelet.prepare([mixed])[mixed[1]]
    assert r.error == "" and [d.device_name for d in r.devices] == ["nic-0000-42-00-0"]
    missing = ("default", "00000000-0000-0000-0000-000000000000", "absent")
    assert "not found" in env.kubelet.prepare([missing])[missing[1]].error
    validate_cdi(env.cdi_files())


def case_vanished(env):
    env.start()
    env.register()
    claim = env.api.claim("gone", [gpu("gpu-0000-ff-00-0")])
    r = env.kubelet.prepare([claim])[claim[1]]
    assert "gpu-0000-ff-00-0" in r.error and "not on this node" in r.error, r.error
    assert env.cdi_files() == []


def case_publish_policy(env):
    env.start(mock="dgx-h100", extra=["--publish"])
    env.register()

    def ours():
        return {d["name"] for s in env.api.state("resourceslices")
                if s["spec"]["driver"] == DRIVER for d in s["spec"].get("devices", [])}
    eventually(lambda: "gpu-0000-1b-00-0" in ours(), what="our slices published")
    foreign = env.api.apply({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": "node-a-gpu.nvidia.com-x"},
        "spec": {"driver": "gpu.nvidia.com", "nodeName": NODE,
                 "pool": {"name": NODE, "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": "gpu-0", "attributes": {
                     "resource.kubernetes.io/pciBusID": {"string": "0000:1b:00.0"}}}]}})
    eventually(lambda: "gpu-0000-1b-00-0" not in ours(), what="the device left to the vendor")
    assert "gpu-0000-43-00-0" in ours()
    env.api.request("DELETE", "/apis/resource.k8s.io/v1/resourceslices/" +
                    foreign["metadata"]["name"])
    eventually(lambda: "gpu-0000-1b-00-0" in ours(), what="the device published again")


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topo", required=True)
    ap.add_argument("--case", required=True, choices=sorted(CASES))
    args = ap.parse_args()
    env = Env(args.topo, "1.36" if args.case == "publish_policy" else "1.35")
    ok = False
    try:
        CASES[args.case](env)
        ok = True
    finally:
        env.close(ok)
    print(f"{args.case}: ok")


if __name__ == "__main__":
    main()
