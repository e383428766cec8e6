#!/usr/bin/python3
"""The system bus policy dev.nodetopo.Topology1.conf, enforced by a real dbus-daemon.

    unshare --mount --propagation private dbus_policy_test.py POLICY

Runs a private dbus-daemon (never the system bus) whose configuration is Debian's own
/usr/share/dbus-1/system.conf with only its socket, user, fork, pid file, syslog and include
directories replaced, plus the policy under test, unmodified. The users the policy names must
exist for dbus-daemon to apply it, so the test bind-mounts copies of /etc/passwd and /etc/group
that add them; it must therefore run as root in a mount namespace of its own (the ctest entry
starts it under `unshare --mount`), which keeps the host's files untouched. Clients run under
`setpriv --reuid`:

  nodetopo         (the service's user)          may own the name
  root, ntmember (group nodetopo), nobody        may not own it
  nobody                                         may read (methods, properties, introspection),
                                                 may not Refresh, may not Set a property
  ntmember (in group nodetopo), root             may Refresh

Exit status 0 when every expectation holds, 1 otherwise (each failure printed).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

NAME = "dev.nodetopo.Topology1"
PATH = "/dev/nodetopo/Topology1"
IFACE = "dev.nodetopo.Topology1"
SYSTEM_CONF = "/usr/share/dbus-1/system.conf"
SERVICE_UID, MEMBER_UID = 64990, 64991


def fail(msg):
    print(f"dbus_policy_test: {msg}", file=sys.stderr)
    sys.exit(1)


# --- client and owner modes (run under setpriv) -------------------------------------------------


def bus(address):
    import dbus

    return dbus.bus.BusConnection(address)


def mode_own(address):
    """Try to own the name; print OWNED or DENIED <error>."""
    import dbus

    try:
        reply = bus(address).request_name(NAME, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
        print("OWNED" if reply == dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER else f"REPLY {reply}")
    except dbus.exceptions.DBusException as e:
        print(f"DENIED {e.get_dbus_name()}")


def mode_serve(address):
    """Own the name and answer the agent's interface, as a stand-in for `topo agent`."""
    import dbus
    import dbus.service
    from dbus.mainloop.glib import DBusGMainLoop
    from gi.repository import GLib

    DBusGMainLoop(set_as_default=True)
    conn = dbus.bus.BusConnection(address)

    class Topology(dbus.service.Object):
        @dbus.service.method(IFACE, in_signature="s", out_signature="s")
        def GetTopology(self, fmt):
            return "{}"

        @dbus.service.method(IFACE, in_signature="s", out_signature="s")
        def GetMatrix(self, fmt):
            return "{}"

        @dbus.service.method(IFACE, in_signature="ss", out_signature="s")
        def Export(self, kind, fmt):
            return "{}"

        @dbus.service.method(IFACE, in_signature="", out_signature="t")
        def Refresh(self):
            return dbus.UInt64(7)

        @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="ss", out_signature="v")
        def Get(self, iface, prop):
            return dbus.UInt64(7)

        @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="s", out_signature="a{sv}")
        def GetAll(self, iface):
            return {"Generation": dbus.UInt64(7)}

        @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="ssv", out_signature="")
        def Set(self, iface, prop, value):
            pass

    name = dbus.service.BusName(NAME, conn, do_not_queue=True)
    obj = Topology(conn, PATH)
    print("ready", flush=True)
    GLib.MainLoop().run()
    del name, obj


def mode_call(address, interface, member, *args):
    """Call one method; print OK or DENIED <error name>."""
    import dbus

    proxy = bus(address).get_object(NAME, PATH, introspect=False)
    converted = [dbus.String(a) for a in args]
    try:
        proxy.get_dbus_method(member, interface)(*converted, timeout=5)
        print("OK")
    except dbus.exceptions.DBusException as e:
        print(f"DENIED {e.get_dbus_name()}")


# --- the driver (root) ---------------------------------------------------------------------------


def setpriv(user):
    """setpriv as USER with its primary and supplementary groups from the user database."""
    import pwd

    entry = pwd.getpwnam(user)
    return ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--init-groups",
            sys.executable, os.path.abspath(__file__)]


def as_user(user, *args):
    return subprocess.run(setpriv(user) + list(args), capture_output=True, text=True, timeout=30,
                          check=False)


def bus_config(tmp, policy):
    text = open(SYSTEM_CONF).read()
    # Keep Debian's default policy; replace what would touch the host's real system bus.
    for pattern in [r"<user>.*?</user>", r"<fork/>", r"<pidfile>.*?</pidfile>", r"<syslog/>",
                    r"<includedir>.*?</includedir>", r"<include [^>]*>.*?</include>",
                    r"<servicehelper>.*?</servicehelper>", r"<standard_system_servicedirs/>"]:
        text = re.sub(pattern, "", text)
    text, n = re.subn(r"<listen>.*?</listen>", f"<listen>unix:path={tmp}/bus</listen>", text)
    if n != 1:
        fail(f"{SYSTEM_CONF}: expected one <listen> element, found {n}")
    text = text.replace("</busconfig>", f"  <include>{policy}</include>\n</busconfig>")
    path = os.path.join(tmp, "system.conf")
    with open(path, "w") as f:
        f.write(text)
    return path


def add_users(tmp):
    """Bind-mount /etc/passwd and /etc/group copies that add the users of the test."""
    with open("/etc/group") as f:
        groups = [line for line in f if not line.startswith(("nodetopo:", "ntmember:"))]
    groups += [f"nodetopo:x:{SERVICE_UID}:ntmember\n", f"ntmember:x:{MEMBER_UID}:\n"]
    with open("/etc/passwd") as f:
        users = [line for line in f if not line.startswith(("nodetopo:", "ntmember:"))]
    users += [f"nodetopo:x:{SERVICE_UID}:{SERVICE_UID}::/nonexistent:/usr/sbin/nologin\n",
              f"ntmember:x:{MEMBER_UID}:{MEMBER_UID}::/nonexistent:/usr/sbin/nologin\n"]
    for name, lines in (("passwd", users), ("group", groups)):
        copy = os.path.join(tmp, name)
        with open(copy, "w") as f:
            f.writelines(lines)
        os.chmod(copy, 0o644)
        subprocess.run(["mount", "--bind", copy, f"/etc/{name}"], check=True)


def main():
    if len(sys.argv) != 2:
        fail("usage: dbus_policy_test.py POLICY (run as root under unshare --mount)")
    policy = os.path.abspath(sys.argv[1])
    if os.geteuid() != 0:
        fail("needs root: it runs dbus-daemon and clients as other users (CI runs as root)")
    if not os.path.isfile(policy):
        fail(f"{policy}: no such policy file")
    for tool in ("dbus-daemon", "setpriv", "mount"):
        if shutil.which(tool) is None:
            fail(f"{tool} not found (scripts/install-deps.sh installs it)")
    # Refuse to bind-mount over the host's files outside a private mount namespace.
    if os.readlink("/proc/self/ns/mnt") == os.readlink(f"/proc/{os.getppid()}/ns/mnt"):
        fail("not in a private mount namespace: run under `unshare --mount --propagation private`")

    tmp = tempfile.mkdtemp(prefix="nodetopo-dbus-")
    os.chmod(tmp, 0o755)
    daemon = server = None
    failures = []
    try:
        add_users(tmp)
        config = bus_config(tmp, policy)
        # Parsing: dbus-daemon refuses a malformed policy file and exits naming it.
        daemon = subprocess.Popen(["dbus-daemon", f"--config-file={config}", "--nofork",
                                   "--print-address=1", "--nopidfile"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        address = daemon.stdout.readline().strip()
        if not address:
            fail(f"dbus-daemon did not start with {policy}: {daemon.stderr.read().strip()}")
        print(f"private bus with {os.path.basename(policy)}: {address}")

        def expect(what, got, want):
            ok = got.startswith(want)
            print(f"{'ok  ' if ok else 'FAIL'} {what}: {got or '(no output)'}")
            if not ok:
                failures.append(f"{what}: expected {want}, got {got!r}")

        for user in ("nobody", "ntmember", "root"):
            r = as_user(user, "own", address)
            expect(f"{user} may not own {NAME}", r.stdout.strip() + r.stderr.strip(),
                   "DENIED org.freedesktop.DBus.Error.AccessDenied")

        server = subprocess.Popen(setpriv("nodetopo") + ["serve", address],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # The stand-in prints "ready" once it owns the name and serves the object (or dies).
        if server.stdout.readline().strip() != "ready":
            server.wait(timeout=10)
            err = server.stderr.read()
            failures.append(f"nodetopo could not own {NAME}: {err.strip()}")
            print(f"FAIL nodetopo owns {NAME}: {err.strip()}")
        else:
            print(f"ok   nodetopo owns {NAME}")
            props = "org.freedesktop.DBus.Properties"
            calls = [
                ("nobody", IFACE, "GetTopology", ["json"], "OK"),
                ("nobody", IFACE, "GetMatrix", ["json"], "OK"),
                ("nobody", IFACE, "Export", ["labels", "json"], "OK"),
                ("nobody", props, "Get", [IFACE, "Generation"], "OK"),
                ("nobody", props, "GetAll", [IFACE], "OK"),
                ("nobody", "org.freedesktop.DBus.Introspectable", "Introspect", [], "OK"),
                ("nobody", IFACE, "Refresh", [], "DENIED org.freedesktop.DBus.Error.AccessDenied"),
                ("nobody", props, "Set", [IFACE, "Generation", "1"],
                 "DENIED org.freedesktop.DBus.Error.AccessDenied"),
                ("nobody", IFACE, "NotAMethod", [], "DENIED org.freedesktop.DBus.Error.AccessDenied"),
                ("ntmember", IFACE, "Refresh", [], "OK"),
                ("root", IFACE, "Refresh", [], "OK"),
            ]
            for user, iface, member, args, want in calls:
                r = as_user(user, "call", address, iface, member, *args)
                expect(f"{user} calls {iface.rsplit('.', 1)[-1]}.{member}",
                       r.stdout.strip() + r.stderr.strip(), want)
    finally:
        for p in (server, daemon):
            if p is not None and p.poll() is None:
                p.terminate()
                p.wait(timeout=5)
        for name in ("passwd", "group"):
            subprocess.run(["umount", f"/etc/{name}"], check=False)
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        for f in failures:
            print(f"dbus_policy_test: {f}", file=sys.stderr)
        sys.exit(1)
    print("dbus policy: every expectation holds")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in ("own", "serve", "call"):
        {"own": mode_own, "serve": mode_serve, "call": mode_call}[sys.argv[1]](*sys.argv[2:])
    else:
        main()
