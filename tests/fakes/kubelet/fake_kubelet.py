#!/usr/bin/python3
"""A fake kubelet for nodetopo's DRA kubelet plugin, written independently of the C++ stubs.

It does what the kubelet's plugin manager and DRA manager do, over the same gRPC API: watch the
plugin registry directory for new sockets, call Registration.GetInfo, check the PluginInfo
(type DRAPlugin, the driver name, an endpoint, a supported DRA service), answer with
NotifyRegistrationStatus, and then call NodePrepareResources / NodeUnprepareResources on the
plugin's endpoint. The Python classes are generated at run time by grpc_tools.protoc (Debian's
python3-grpc-tools) from kubelet/proto into a temporary directory; nothing generated is kept.
"""
import importlib
import os
import shutil
import sys
import tempfile
import time

import grpc
from grpc_tools import protoc

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_ROOT = os.path.join(HERE, "..", "..", "..", "kubelet", "proto")
PROTOS = ["pluginregistration/v1/api.proto", "dra/v1/api.proto", "dra/v1beta1/api.proto"]


def generate_stubs():
    """Runs protoc on the project's .proto files; returns {proto: (pb2, pb2_grpc)}."""
    out = tempfile.mkdtemp(prefix="fake-kubelet-stubs-")
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    for proto in PROTOS:
        args = ["protoc", f"-I{PROTO_ROOT}", f"-I{include}", f"--python_out={out}",
                f"--grpc_python_out={out}", os.path.join(PROTO_ROOT, proto)]
        if protoc.main(args) != 0:
            raise RuntimeError(f"protoc failed on {proto}")
    # protoc writes dra/v1/api_pb2.py etc.; make the folders packages.
    for root, _dirs, _files in os.walk(out):
        open(os.path.join(root, "__init__.py"), "a").close()
    sys.path.insert(0, out)
    stubs = {}
    try:
        for proto in PROTOS:
            mod = proto[:-len(".proto")].replace("/", ".")
            stubs[proto] = (importlib.import_module(mod + "_pb2"),
                            importlib.import_module(mod + "_pb2_grpc"))
    finally:
        # Every module is imported now and lives in sys.modules, so the folder can go at once:
        # removing it here rather than at exit keeps /tmp clean even when a test kills us.
        sys.path.remove(out)
        shutil.rmtree(out, ignore_errors=True)
    return stubs


STUBS = generate_stubs()
REG_PB, REG_GRPC = STUBS["pluginregistration/v1/api.proto"]
DRA = {"v1": STUBS["dra/v1/api.proto"], "v1beta1": STUBS["dra/v1beta1/api.proto"]}
SERVICE = {"v1": "v1.DRAPlugin", "v1beta1": "v1beta1.DRAPlugin"}


class RegistrationError(Exception):
    pass


class FakeKubelet:
    """Watches `registry_dir`; `register()` handshakes with every socket seen there."""

    def __init__(self, registry_dir, driver):
        self.registry_dir = registry_dir
        self.driver = driver
        self.seen = {}  # socket path -> identity (inode, ctime) already handled
        self.plugins = {}  # socket path -> PluginInfo

    def new_sockets(self):
        found = []
        try:
            names = sorted(os.listdir(self.registry_dir))
        except FileNotFoundError:
            return found
        for name in names:
            path = os.path.join(self.registry_dir, name)
            try:
                st = os.stat(path)
            except FileNotFoundError:
                continue
            ident = (st.st_ino, st.st_ctime_ns)  # inode numbers are reused at once
            if not name.endswith(".sock") or self.seen.get(path) == ident:
                continue
            found.append((path, ident))
        return found

    def wait_for_socket(self, timeout=30.0):
        """Waits until a socket the kubelet has not handled appears; returns its path."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            found = self.new_sockets()
            if found:
                return found[0][0]
            time.sleep(0.05)
        raise TimeoutError(f"no new registration socket in {self.registry_dir}")

    def get_info(self, path):
        with grpc.insecure_channel("unix://" + path) as channel:
            return REG_GRPC.RegistrationStub(channel).GetInfo(REG_PB.InfoRequest(), timeout=5,
                                                              wait_for_ready=True)

    def register(self, path, accept=True, error=""):
        """The plugin watcher's handshake: GetInfo, validate, NotifyRegistrationStatus."""
        st = os.stat(path)
        ino = (st.st_ino, st.st_ctime_ns)
        with grpc.insecure_channel("unix://" + path) as channel:
            stub = REG_GRPC.RegistrationStub(channel)
            # wait_for_ready: the kubelet's plugin watcher dials with grpc.WithBlock, so a socket
            # that exists but is not listening yet (between the plugin's bind and listen) is
            # waited for, not refused.
            info = stub.GetInfo(REG_PB.InfoRequest(), timeout=5, wait_for_ready=True)
            problems = []
            if info.type != "DRAPlugin":
                problems.append(f"type {info.type!r} is not DRAPlugin")
            if info.name != self.driver:
                problems.append(f"name {info.name!r} is not {self.driver!r}")
            if not info.endpoint:
                problems.append("no endpoint")
            if not any(v in SERVICE.values() for v in info.supported_versions):
                problems.append(f"no supported DRA service in {list(info.supported_versions)}")
            ok = accept and not problems
            stub.NotifyRegistrationStatus(
                REG_PB.RegistrationStatus(plugin_registered=ok,
                                          error="; ".join(problems) or error),
                timeout=5)
        self.seen[path] = ino
        if problems:
            raise RegistrationError("; ".join(problems))
        if ok:
            self.plugins[path] = info
        return info

    def endpoint(self):
        if not self.plugins:
            raise RegistrationError("no plugin registered")
        return list(self.plugins.values())[-1].endpoint

    def prepare(self, claims, version="v1"):
        """claims: [(namespace, uid, name)]; returns {uid: NodePrepareResourceResponse}."""
        pb, pb_grpc = DRA[version]
        with grpc.insecure_channel("unix://" + self.endpoint()) as channel:
            req = pb.NodePrepareResourcesRequest(
                claims=[pb.Claim(namespace=n, uid=u, name=m) for n, u, m in claims])
            return dict(pb_grpc.DRAPluginStub(channel).NodePrepareResources(req, timeout=10).claims)

    def unprepare(self, claims, version="v1"):
        pb, pb_grpc = DRA[version]
        with grpc.insecure_channel("unix://" + self.endpoint()) as channel:
            req = pb.NodeUnprepareResourcesRequest(
                claims=[pb.Claim(namespace=n, uid=u, name=m) for n, u, m in claims])
            return dict(
                pb_grpc.DRAPluginStub(channel).NodeUnprepareResources(req, timeout=10).claims)


def main():
    """By hand: register with every plugin socket, then prepare or unprepare one claim.

      fake_kubelet.py --registry DIR [--driver D] [--version v1|v1beta1] \\
                      {register | prepare NS NAME UID | unprepare NS NAME UID}
    """
    import argparse
    from google.protobuf import json_format
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--registry", required=True, help="the kubelet's plugin registry dir")
    ap.add_argument("--driver", default="nodetopo.dev")
    ap.add_argument("--version", default="v1", choices=sorted(DRA))
    ap.add_argument("action", choices=["register", "prepare", "unprepare"])
    ap.add_argument("claim", nargs="*", metavar="NS NAME UID")
    args = ap.parse_args()
    kubelet = FakeKubelet(args.registry, args.driver)
    info = kubelet.register(kubelet.wait_for_socket())
    print(json_format.MessageToJson(info))
    if args.action == "register":
        return 0
    if len(args.claim) != 3:
        ap.error("prepare and unprepare take NS NAME UID")
    ns, name, uid = args.claim
    call = kubelet.prepare if args.action == "prepare" else kubelet.unprepare
    for claim_uid, resp in call([(ns, uid, name)], version=args.version).items():
        print(claim_uid, json_format.MessageToJson(resp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
