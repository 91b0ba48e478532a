#!/usr/bin/python3
"""Who resent what in a RoCEv2 capture: scripts/roce-retries.py WIRE.pcap [-v]

For a wire dump of a test run (any snap length: TERN_INTEROP_PCAP=128 in tests/interop/rxe.t
keeps the headers only), per sender:
  - go-backs: a request whose PSN is not after the previous one its sender sent to the same QP
    (a retransmission: after a sequence NAK, a timeout or an RNR wait), by opcode;
  - PSNs resent as another opcode than the first time (a requester must resend the very packet
    of a PSN; a responder cannot tell when it does not, and places data at the wrong offset);
  - ACK/NAK syndromes sent (ACK, RNR NAK, NAK with its code: 0x60 sequence, 0x61 invalid
    request, 0x62 remote access, 0x63 remote operational error).
-v also lists each go-back (time, sender, QP, PSN, opcode, how far back). Exit status 1 when
some PSN was resent as another opcode.
"""

import collections
import struct
import sys

OPS = {0: "SEND_FIRST", 1: "SEND_MIDDLE", 2: "SEND_LAST", 3: "SEND_LAST_IMM", 4: "SEND_ONLY",
       5: "SEND_ONLY_IMM", 6: "WRITE_FIRST", 7: "WRITE_MIDDLE", 8: "WRITE_LAST",
       9: "WRITE_LAST_IMM", 10: "WRITE_ONLY", 11: "WRITE_ONLY_IMM", 12: "READ_REQUEST",
       19: "CMP_SWAP", 20: "FETCH_ADD"}
RESPONSES = (13, 14, 15, 16, 17, 18)     # READ responses, ACK, ATOMIC ACK


def opname(op):
    base = OPS.get(op & 0x1f)
    if base is None or op >> 5 > 1:
        return "0x%02x" % op
    return ("UC_" if op >> 5 else "RC_") + base


def frames(path):
    with open(path, "rb") as f:
        hdr = f.read(24)
        if len(hdr) < 24 or hdr[:4] not in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4"):
            sys.exit("%s: not a pcap file" % path)
        e = "<" if hdr[:4] == b"\xd4\xc3\xb2\xa1" else ">"
        while True:
            h = f.read(16)
            if len(h) < 16:
                return
            sec, usec, incl, _ = struct.unpack(e + "IIII", h)
            data = f.read(incl)
            if len(data) < incl:
                return
            yield sec + usec / 1e6, data


def roce(d):
    """(source IP text, BTH bytes, bytes after the BTH) of an IPv4/IPv6 RoCEv2 frame."""
    off = 14
    ethertype = struct.unpack(">H", d[12:14])[0] if len(d) >= 14 else 0
    if ethertype == 0x8100 and len(d) >= 18:
        ethertype = struct.unpack(">H", d[16:18])[0]
        off = 18
    if ethertype == 0x0800 and len(d) >= off + 20 and d[off + 9] == 17:
        src = ".".join(str(b) for b in d[off + 12:off + 16])
        udp = off + (d[off] & 15) * 4
    elif ethertype == 0x86DD and len(d) >= off + 40 and d[off + 6] == 17:
        src = d[off + 8:off + 24].hex()
        udp = off + 40
    else:
        return None
    if len(d) < udp + 20 or struct.unpack(">H", d[udp + 2:udp + 4])[0] != 4791:
        return None
    return src, d[udp + 8:udp + 20], d[udp + 20:]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    verbose = "-v" in sys.argv[2:]
    first = collections.defaultdict(dict)   # (sender, dqpn) -> psn -> opcode
    last = {}
    goback = collections.Counter()
    syndromes = collections.Counter()
    changed, listed, n = [], [], 0
    for t, d in frames(sys.argv[1]):
        r = roce(d)
        if not r:
            continue
        src, bth, rest = r
        n += 1
        op = bth[0]
        dqpn = struct.unpack(">I", b"\0" + bth[5:8])[0]
        psn = struct.unpack(">I", b"\0" + bth[9:12])[0]
        if op == 0x11 and rest:
            s = rest[0]
            syndromes[(src, "ACK" if s < 0x20 else "RNR NAK" if s < 0x40 else
                       "NAK 0x%02x" % s)] += 1
        if op & 0x1f in RESPONSES or op >> 5 > 1:
            continue
        key = (src, dqpn)
        seen = first[key]
        if psn in seen and seen[psn] != op:
            changed.append("%.6f %s -> QP %d PSN 0x%06x: first %s, now %s" % (
                t, src, dqpn, psn, opname(seen[psn]), opname(op)))
        seen.setdefault(psn, op)
        prev = last.get(key)
        back = (prev - psn) & 0xffffff if prev is not None else 0
        if prev is not None and 0 <= back < 0x800000:
            goback[(src, opname(op))] += 1
            listed.append("%.6f %s -> QP %d PSN 0x%06x %s, %d back" % (
                t, src, dqpn, psn, opname(op), back))
        last[key] = psn
    print("%d RoCE frames" % n)
    print("go-backs (sender, opcode resent first): %s" % (
        ", ".join("%s %s: %d" % (s, o, c) for (s, o), c in sorted(goback.items())) or "none"))
    print("ACK/NAK sent: %s" % (
        ", ".join("%s %s: %d" % (s, k, c) for (s, k), c in sorted(syndromes.items())) or
        "none"))
    print("PSNs resent as another opcode: %d" % len(changed))
    for line in changed[:50]:
        print("  " + line)
    if verbose:
        for line in listed:
            print("  go-back " + line)
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
