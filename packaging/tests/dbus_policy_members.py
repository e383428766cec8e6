#!/usr/bin/python3
"""dbus_policy_members.py POLICY INTERFACE_XML: the bus policy names exactly the interface's methods.

Every method of dev.nodetopo.Topology1 in the introspection XML (the D-Bus IDL of `topo agent`)
must be allowed by the policy to someone (a read method to everyone, Refresh to root and the
group), and the policy must not name a method the interface does not have (a stale rule). So a
method added to the IDL fails here until the policy says who may call it.
"""
import sys
import xml.etree.ElementTree as ET

IFACE = "dev.nodetopo.Topology1"
policy, idl = sys.argv[1], sys.argv[2]
methods = {m.get("name") for i in ET.parse(idl).getroot().iter("interface") if i.get("name") == IFACE
           for m in i.iter("method")}
if not methods:
    sys.exit(f"{idl}: no methods of interface {IFACE}")
named = {a.get("send_member") for a in ET.parse(policy).getroot().iter("allow")
         if a.get("send_interface") == IFACE and a.get("send_member")}
missing, stale = sorted(methods - named), sorted(named - methods)
for m in missing:
    print(f"{policy}: method {m} of {idl} is allowed to no one; add a rule naming it", file=sys.stderr)
for m in stale:
    print(f"{policy}: names method {m}, which {idl} does not declare", file=sys.stderr)
if missing or stale:
    sys.exit(1)
print(f"policy names the {len(methods)} methods of {IFACE}: {', '.join(sorted(methods))}")
