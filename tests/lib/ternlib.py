"""Helpers shared by tern's guest tests: loading the driver, reading counters, model facts."""

import json
import os
import re
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def model_fw_version():
    """The firmware version the device model reports, as "major.minor.patch", read from the
    model's source (so the test does not restate it)."""
    path = os.path.join(TOP, "model", "lib", "tern_model_int.h")
    with open(path) as f:
        text = f.read()
    parts = []
    for name in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(r"#define\s+TERNM_FW_%s\s+(\d+)" % name, text)
        if not m:
            raise RuntimeError("TERNM_FW_%s not found in %s" % (name, path))
        parts.append(m.group(1))
    return ".".join(parts)


def link_stats(node, dev):
    """``ip -s link`` counters of ``dev`` as a dict: {"rx": {...}, "tx": {...}}."""
    r = node.run("ip -j -s link show dev %s" % dev, check=True)
    return json.loads(r.stdout)[0]["stats64"]


def ethtool_stats(node, dev):
    """``ethtool -S dev`` as a dict of name -> int."""
    r = node.run("ethtool -S %s" % dev, check=True)
    stats = {}
    for line in r.stdout.splitlines()[1:]:
        name, _, value = line.strip().partition(":")
        if value.strip().lstrip("-").isdigit():
            stats[name.strip()] = int(value)
    return stats


def wait_for(fn, timeout=10.0, interval=0.2):
    """Call ``fn`` until it returns a true value or ``timeout`` passes; returns the last
    value."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def carrier(node, dev):
    """1 when ``dev`` has carrier, 0 when not, None when it cannot be read (interface down)."""
    r = node.run("cat /sys/class/net/%s/carrier 2>/dev/null" % dev)
    return int(r.stdout.strip()) if r.rc == 0 and r.stdout.strip() else None
