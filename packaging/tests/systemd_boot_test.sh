#!/usr/bin/env bash
# systemd_boot_test.sh DEBDIR CACHE: the nodetopo package on a Debian 12 system booted with
# systemd as PID 1 (systemd-nspawn --boot), the unit run as shipped.
#
# The offline checks (packaging.systemd.verify/.security) read the unit; this runs it. A Debian 12
# minbase root (the debootstrap tarball of CACHE, shared with chroot_install_test.sh) gets systemd
# and dbus, is booted in a container with its own network namespace (loopback only, so port 9464
# and the bus are the container's), and inside it:
#   1. `apt-get install ./nodetopo_*.deb` on the running system: the maintainer scripts create the
#      user, the directories, and enable and start nodetopo.service;
#   2. Type=notify: `systemctl start` returns only after READY=1, by then the agent owns its bus
#      name and /readyz answers 200; STATUS= is the agent's;
#   3. the sandbox as applied: the main process runs as nodetopo, with no capabilities,
#      NoNewPrivs, a seccomp filter; `systemd-analyze security nodetopo` on the running unit;
#   4. `systemctl reload` (SIGHUP): the same process, the reload counted in /metrics, active again;
#   5. D-Bus on the system bus: the name owned by the user nodetopo; anyone reads GetTopology and
#      `topo dump --from-agent`; `Refresh` works as root, is refused (AccessDenied) to a plain user
#      and allowed once that user is in the group nodetopo;
#   6. the watchdog: WatchdogSec=30s as shipped and pinged; with a drop-in of WatchdogSec=2s a
#      stopped (SIGSTOP) agent is killed by systemd ("watchdog timeout") and restarted;
#   7. `systemctl stop` ends it cleanly; `apt-get purge` removes it.
# The base with systemd and the package's dependencies downloaded is cached in CACHE
# (bookworm-systemd-ARCH.tar.gz); delete it to rebuild. Needs root, systemd-nspawn (package
# systemd-container), and the Debian mirror for the first run only.
#
# Exit 0 when every step holds; each failing step names itself and prints the unit's status and
# journal.
set -euo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: systemd_boot_test.sh DEBDIR CACHE" >&2
  exit 2
fi
debdir=$(cd "$1" && pwd)
mkdir -p "$2"
cache=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
suite=bookworm
arch=$(dpkg --print-architecture)
start=$(date +%s)

fail() { echo "systemd_boot_test: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root (debootstrap, systemd-nspawn)"
for tool in systemd-nspawn nsenter unshare chroot tar curl; do
  command -v "$tool" >/dev/null || fail "$tool not found (scripts/install-deps.sh installs it; systemd-nspawn is in systemd-container)"
done
deb=$(ls "$debdir"/nodetopo_*_"$arch".deb 2>/dev/null | head -n 1)
[[ -n $deb ]] || fail "no nodetopo_*.deb in $debdir (built by the ctest entry packaging.deb.build)"

mkdir -p "$cache/apt-archives/partial" "$cache/apt-lists/partial"
base="$cache/$suite-minbase-$arch.tar.gz"
sbase="$cache/$suite-systemd-$arch.tar.gz"
sources=$(/usr/bin/python3 "$here/debian_mirror.py" "$suite") || fail "cannot tell which Debian mirror to use"
mirror=$(head -n 1 <<<"$sources")
need_mirror() {
  curl -fsS --max-time 20 -o /dev/null "$mirror/dists/$suite/Release" 2>"$cache/curl.err" ||
    fail "the Debian mirror $mirror (from this machine's /etc/apt/sources.list*) cannot be reached: $(cat "$cache/curl.err"). The first run debootstraps Debian 12 and downloads systemd, dbus and the package's dependencies from it"
}

# Runs a script in a chroot of $1 with proc and the apt caches mounted (private mount namespace).
in_chroot() {
  unshare --mount --propagation private --fork /bin/sh -eu -c '
    root=$1 cache=$2; shift 2
    mount -t proc proc "$root/proc"
    mount --bind "$cache/apt-archives" "$root/var/cache/apt/archives"
    mount --bind "$cache/apt-lists" "$root/var/lib/apt/lists"
    exec chroot "$root" "$@"
  ' sh "$1" "$cache" "${@:2}"
}

work=$(mktemp -d "$cache/boot.XXXXXX")
root="$work/root"
nspawn_pid=
cleanup() {
  if [[ -n $nspawn_pid ]] && kill -0 "$nspawn_pid" 2>/dev/null; then
    kill -TERM "$nspawn_pid" 2>/dev/null || true  # nspawn asks the container's systemd to halt
    for _ in $(seq 50); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$nspawn_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$root"

# ---- the root: Debian 12 minbase + systemd + dbus, the package's dependencies downloaded --------
if [[ ! -f $sbase ]]; then
  if [[ ! -f $base ]]; then
    need_mirror
    echo "debootstrap --variant=minbase $suite from $mirror (cached as $base)"
    rm -rf "$cache/debootstrap"
    debootstrap --variant=minbase "$suite" "$cache/debootstrap" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
      { tail -n 20 "$cache/debootstrap.log" >&2; fail "debootstrap failed (log: $cache/debootstrap.log)"; }
    tar -C "$cache/debootstrap" -czf "$base.tmp" . && mv "$base.tmp" "$base"
    rm -rf "$cache/debootstrap"
  fi
  need_mirror
  t0=$(date +%s)
  tar -C "$root" -xzf "$base"
  tail -n +2 <<<"$sources" >"$root/etc/apt/sources.list"
  rm -f "$root"/etc/apt/sources.list.d/*
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  cat >"$root/tmp/setup.sh" <<'EOF'
#!/bin/sh
set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends systemd systemd-sysv dbus >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; exit 1; }
# A plain user for the bus policy checks; no login, no home.
useradd --system --no-create-home --shell /usr/sbin/nologin alice
# The container has no network once booted: no timers that would try it.
systemctl mask apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer >/dev/null 2>&1 || true
: >/etc/resolv.conf
EOF
  chmod +x "$root/tmp/setup.sh"
  in_chroot "$root" /tmp/setup.sh || fail "installing systemd and dbus into the Debian 12 root failed"
  rm -f "$root/tmp/setup.sh" "$root/tmp/apt.log"
  tar -C "$root" -czf "$sbase.tmp" . && mv "$sbase.tmp" "$sbase"
  rm -rf "$root" && mkdir -p "$root"
  echo "Debian 12 with systemd and dbus made in $(($(date +%s) - t0)) s (cached as $sbase)"
fi
tar -C "$root" -xzf "$sbase"
mkdir -p "$root/var/tmp/nodetopo"
cp "$deb" "$root/var/tmp/nodetopo/"
debname=$(basename "$deb")
# The package's dependencies into the apt cache now, as the booted container has no network
# (only those not cached yet: a run with a warm cache reads no mirror).
if ! in_chroot "$root" apt-get install -qq -y --download-only --no-install-recommends \
     "/var/tmp/nodetopo/$debname" >"$work/download.log" 2>&1; then
  need_mirror
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  in_chroot "$root" apt-get update -qq >/dev/null
  in_chroot "$root" apt-get install -qq -y --download-only --no-install-recommends \
    "/var/tmp/nodetopo/$debname" >"$work/download.log" 2>&1 ||
    { cat "$work/download.log" >&2; fail "downloading the package's dependencies failed"; }
  : >"$root/etc/resolv.conf"
fi

# ---- boot --------------------------------------------------------------------------------------
# --register=no --keep-unit: no systemd on this side to register with or to ask for a scope (the
# container runs in this process's cgroup). --private-network: loopback only.
machine="nodetopo-boot-$$"
echo "--- boot: systemd-nspawn --boot ($machine)"
systemd-nspawn --quiet --boot --register=no --keep-unit --private-network \
  --machine="$machine" --directory="$root" --console=pipe \
  --bind="$cache/apt-archives:/var/cache/apt/archives" \
  --bind="$cache/apt-lists:/var/lib/apt/lists" \
  </dev/null >"$work/console.log" 2>&1 &
nspawn_pid=$!
leader=
for _ in $(seq 100); do
  leader=$(pgrep -P "$nspawn_pid" -x systemd || true)
  [[ -n $leader ]] && break
  kill -0 "$nspawn_pid" 2>/dev/null || { cat "$work/console.log" >&2; fail "systemd-nspawn exited before the container's systemd started"; }
  sleep 0.1
done
[[ -n $leader ]] || { cat "$work/console.log" >&2; fail "no systemd (PID 1) in the container after 10 s"; }

# in_ct CMD...: run CMD in the container (all its namespaces, its root).
in_ct() { nsenter --target "$leader" --all --root --wd -- "$@"; }
unit_report() {
  echo "--- systemctl status nodetopo" >&2
  in_ct systemctl status --no-pager --full nodetopo >&2 || true
  echo "--- journalctl -u nodetopo" >&2
  in_ct journalctl --no-pager -u nodetopo -n 60 >&2 || true
}
check() {  # check MESSAGE CMD...: fail with MESSAGE and the unit's report unless CMD succeeds
  local message=$1
  shift
  "$@" || { unit_report; fail "$message"; }
}
step() { echo "--- $*"; }
prop() { in_ct systemctl show -P "$1" nodetopo; }

t0=$(date +%s%N)
# systemctl needs PID 1's private socket, which exists only once systemd has set itself up.
for _ in $(seq 300); do
  in_ct test -S /run/systemd/private 2>/dev/null && break
  kill -0 "$nspawn_pid" 2>/dev/null || { cat "$work/console.log" >&2; fail "the container stopped while booting"; }
  sleep 0.1
done
state=$(in_ct timeout 120 systemctl is-system-running --wait 2>&1 || true)
boot_ms=$((($(date +%s%N) - t0) / 1000000))
if [[ $state != running ]]; then
  in_ct systemctl --failed --no-pager >&2 || true
  fail "the container booted to '$state', not 'running'"
fi
echo "    systemd $(in_ct systemctl --version | head -n 1 | awk '{print $2}') is PID 1: system running after ${boot_ms} ms"

# ---- 1. install on the running system ----------------------------------------------------------
step "apt-get install ./$debname (postinst on a running systemd)"
in_ct env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  "/var/tmp/nodetopo/$debname" >"$work/apt.log" 2>&1 ||
  { cat "$work/apt.log" >&2; unit_report; fail "installing the package on the booted system failed"; }
check "postinst did not create the user nodetopo" in_ct getent passwd nodetopo >/dev/null
check "nodetopo.service is not enabled after install" in_ct systemctl is-enabled --quiet nodetopo
check "nodetopo.service is not active after install" in_ct systemctl is-active --quiet nodetopo
# Started by the postinst at the first try, not by Restart= after a failed one.
[[ $(prop NRestarts) == 0 ]] || { unit_report; fail "the first start from the postinst failed (NRestarts=$(prop NRestarts))"; }
echo "    user $(in_ct getent passwd nodetopo | cut -d: -f1,3,4), unit enabled and active"

# ---- 2. Type=notify readiness -------------------------------------------------------------------
step "systemctl restart: returns after READY=1"
in_ct systemctl stop nodetopo
t0=$(date +%s%N)
check "systemctl start nodetopo failed" in_ct systemctl start nodetopo
start_ms=$((($(date +%s%N) - t0) / 1000000))
[[ $(prop Type) == notify ]] || fail "Type is $(prop Type), not notify"
[[ $(prop ActiveState) == active && $(prop SubState) == running ]] ||
  { unit_report; fail "after start: $(prop ActiveState)/$(prop SubState), not active/running"; }
# Right when start returns (READY=1 came), the first discovery has been published.
check "the bus name dev.nodetopo.Topology1 is not owned when systemctl start returns" \
  in_ct busctl --system status dev.nodetopo.Topology1 >/dev/null
http_get() {  # http_get PATH: status line and body from the agent's loopback server
  in_ct bash -c 'exec 3<>/dev/tcp/127.0.0.1/9464 && printf "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n" "$1" >&3 && cat <&3' sh "$1"
}
readyz=$(http_get /readyz | tr -d '\r')
head -n 1 <<<"$readyz" | grep -q ' 200' || { echo "$readyz" >&2; unit_report; fail "/readyz is not 200 right after start"; }
status_text=$(prop StatusText)
[[ -n $status_text && $status_text != Running\ the\ first* ]] ||
  { unit_report; fail "STATUS= is '$status_text' after READY"; }
echo "    start took ${start_ms} ms; /readyz 200; STATUS=$status_text"

# ---- 3. the sandbox as applied -------------------------------------------------------------------
step "the sandbox of the running agent"
pid=$(prop MainPID)
pstatus=$(in_ct cat "/proc/$pid/status")
uid=$(awk '/^Uid:/ {print $2}' <<<"$pstatus")
[[ $uid == $(in_ct id -u nodetopo) ]] || fail "the agent runs as uid $uid, not nodetopo"
for want in 'CapEff:	0000000000000000' 'CapBnd:	0000000000000000' 'NoNewPrivs:	1' 'Seccomp:	2'; do
  grep -qF "$want" <<<"$pstatus" || { grep -E '^(Cap|NoNew|Seccomp)' <<<"$pstatus" >&2; fail "the agent's /proc/$pid/status lacks '$want'"; }
done
echo "    uid nodetopo, CapEff=0, CapBnd=0, NoNewPrivs=1, Seccomp=2 (filter)"
in_ct systemd-analyze security --no-pager nodetopo >"$work/security.txt" 2>&1 || true
score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' "$work/security.txt")
[[ -n $score ]] || { cat "$work/security.txt" >&2; fail "systemd-analyze security nodetopo gave no score"; }
echo "    systemd-analyze security nodetopo (the running unit): $score"
awk -v s="$score" 'BEGIN {exit !(s > 1.5)}' && { grep '✗' "$work/security.txt" >&2; fail "exposure $score of the running unit is above 1.5"; }

# ---- 4. reload (SIGHUP) ------------------------------------------------------------------------
step "systemctl reload (SIGHUP)"
reloads() { http_get /metrics | awk '$1 == "nodetopo_config_reloads_total" {print $2}'; }
before=$(reloads)
check "systemctl reload nodetopo failed" in_ct systemctl reload nodetopo
for _ in $(seq 50); do [[ $(reloads) != "$before" ]] && break; sleep 0.1; done
after=$(reloads)
[[ $after == $((before + 1)) ]] || { unit_report; fail "nodetopo_config_reloads_total went from $before to $after after one reload"; }
[[ $(prop MainPID) == "$pid" ]] || fail "reload replaced the process ($pid -> $(prop MainPID))"
[[ $(prop ActiveState) == active ]] || { unit_report; fail "after reload: $(prop ActiveState)"; }
check "the journal does not show the reload" \
  bash -c "nsenter --target $leader --all --root --wd -- journalctl --no-pager -u nodetopo | grep -q 'configuration reloaded'"
echo "    same PID $pid, reloads $before -> $after, journal: configuration reloaded"

# ---- 5. D-Bus ----------------------------------------------------------------------------------
step "D-Bus: owner, readers, Refresh as root, as a plain user, as a member of nodetopo"
owner_uid=$(in_ct busctl --system status dev.nodetopo.Topology1 | awk -F= '$1 == "UID" {print $2}')
[[ $owner_uid == $(in_ct id -u nodetopo) ]] || fail "dev.nodetopo.Topology1 is owned by uid $owner_uid, not nodetopo"
obj=(dev.nodetopo.Topology1 /dev/nodetopo/Topology1 dev.nodetopo.Topology1)
as_alice() { in_ct setpriv --reuid alice --regid alice --init-groups "$@"; }
as_alice busctl --system call "${obj[@]}" GetTopology s json >"$work/get.txt" 2>&1 ||
  { cat "$work/get.txt" >&2; fail "a plain user cannot call GetTopology"; }
as_alice topo dump --from-agent >"$work/dump.txt" 2>&1 ||
  { cat "$work/dump.txt" >&2; fail "topo dump --from-agent fails for a plain user"; }
gen=$(in_ct busctl --system call "${obj[@]}" Refresh 2>&1) || { echo "$gen" >&2; fail "root cannot Refresh"; }
echo "    root: Refresh -> $gen"
if denied=$(as_alice busctl --system call "${obj[@]}" Refresh 2>&1); then
  fail "a user outside the group nodetopo may Refresh ($denied)"
fi
grep -qi 'access denied\|AccessDenied' <<<"$denied" || fail "Refresh as a plain user failed, but not with AccessDenied: $denied"
echo "    alice: GetTopology ok, topo dump --from-agent ok ($(wc -l <"$work/dump.txt") lines), Refresh -> $denied"
in_ct usermod -a -G nodetopo alice
gen=$(as_alice busctl --system call "${obj[@]}" Refresh 2>&1) || fail "a member of the group nodetopo cannot Refresh: $gen"
echo "    alice in group nodetopo: Refresh -> $gen"

# ---- 6. watchdog -------------------------------------------------------------------------------
step "watchdog"
[[ $(prop WatchdogUSec) == 30s ]] || fail "WatchdogUSec is $(prop WatchdogUSec), not 30s"
in_ct mkdir -p /run/systemd/system/nodetopo.service.d
in_ct sh -c 'printf "[Service]\nWatchdogSec=2s\n" >/run/systemd/system/nodetopo.service.d/watchdog-test.conf'
in_ct systemctl daemon-reload
check "restart with WatchdogSec=2s failed" in_ct systemctl restart nodetopo
w1=$(prop WatchdogTimestampMonotonic)
sleep 2.5
w2=$(prop WatchdogTimestampMonotonic)
[[ $w2 -gt $w1 ]] || { unit_report; fail "the agent does not ping the watchdog (WatchdogTimestamp stayed $w1)"; }
echo "    pinged: WatchdogTimestamp $w1 -> $w2 us"
pid=$(prop MainPID)
restarts=$(prop NRestarts)
in_ct sh -c 'kill -STOP "$1"' sh "$pid"  # the shell's kill: minbase has no procps
for _ in $(seq 150); do
  [[ $(prop NRestarts) -gt $restarts && $(prop ActiveState) == active ]] && break
  sleep 0.1
done
[[ $(prop NRestarts) -gt $restarts ]] || { unit_report; fail "a stopped agent was not restarted by the watchdog"; }
check "the journal does not name the watchdog" \
  bash -c "nsenter --target $leader --all --root --wd -- journalctl --no-pager -u nodetopo | grep -qi 'watchdog timeout'"
[[ $(prop MainPID) != "$pid" ]] || fail "the stopped agent still is the main process"
echo "    SIGSTOP of $pid: 'watchdog timeout', restarted as $(prop MainPID) (NRestarts $(prop NRestarts))"
in_ct rm -f /run/systemd/system/nodetopo.service.d/watchdog-test.conf
in_ct systemctl daemon-reload
check "restart after the watchdog test failed" in_ct systemctl restart nodetopo

# ---- 7. stop and purge -------------------------------------------------------------------------
step "systemctl stop; apt-get purge"
check "systemctl stop nodetopo failed" in_ct systemctl stop nodetopo
[[ $(prop Result) == success ]] || { unit_report; fail "stop ended with Result=$(prop Result)"; }
in_ct env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq nodetopo >"$work/apt.log" 2>&1 ||
  { cat "$work/apt.log" >&2; fail "apt-get purge nodetopo failed"; }
in_ct test ! -e /lib/systemd/system/nodetopo.service || fail "the unit is left after purge"
echo "    stopped (Result=success), purged"

in_ct systemctl poweroff >/dev/null 2>&1 || true
for _ in $(seq 100); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.1; done
echo "systemd_boot_test: ok in $(($(date +%s) - start)) s"
