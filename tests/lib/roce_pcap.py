"""RoCEv2 frames in a pcap file, checked independently of the device model.

Everything here is written from the specifications (libpcap file format, IPv4/IPv6/UDP,
IBTA BTH and the RoCEv2 annex's invariant CRC), not from the model's code: the CRC-32 has
its own table (no zlib/binascii), the pcap file is parsed by hand. Used by
tests/guest/wire.t.

    frames = read_pcap(path)                  # [(seconds, bytes)], complete records only
    f = parse(frame)                          # a Frame, or None when it is not RoCEv2
    f.problems                                # what is wrong with it (empty: all good)
"""

import struct

ROCE_PORT = 4791
ETH_P_IP, ETH_P_IPV6, ETH_P_8021Q = 0x0800, 0x86DD, 0x8100

# --- CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) --------------------------------------


def _crc_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc_table()


def crc32(data, crc=0):
    """CRC-32 of ``data`` continuing from ``crc`` (0 to start), as zlib defines it."""
    c = crc ^ 0xFFFFFFFF
    t = _TABLE
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def icrc(l3, ipv6, l3_len):
    """The RoCEv2 invariant CRC of the packet whose IP header starts ``l3`` (bytes) and that
    is ``l3_len`` bytes long up to and without the ICRC: 8 bytes of 0xff, then the IP header,
    UDP header, BTH and the rest with the variant fields set to all ones."""
    p = bytearray(l3[:l3_len])
    if ipv6:
        p[0] |= 0x0F            # traffic class (low nibble of byte 0, high of byte 1)
        p[1] = 0xFF             # traffic class + flow label
        p[2] = p[3] = 0xFF      # flow label
        p[7] = 0xFF             # hop limit
        ip_len = 40
    else:
        p[1] = 0xFF             # TOS (DSCP + ECN)
        p[8] = 0xFF             # TTL
        p[10] = p[11] = 0xFF    # header checksum
        ip_len = (p[0] & 0x0F) * 4
    p[ip_len + 6] = p[ip_len + 7] = 0xFF    # UDP checksum
    p[ip_len + 8 + 4] = 0xFF                # BTH byte 4: FECN, BECN, resv6a
    return crc32(p, crc32(b"\xff" * 8))


def ones_sum(data, s=0):
    """Ones' complement sum of ``data`` as big-endian 16-bit words (odd length: zero pad)."""
    if len(data) & 1:
        data = bytes(data) + b"\0"
    for i in range(0, len(data), 2):
        s += data[i] << 8 | data[i + 1]
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


# --- pcap ------------------------------------------------------------------------------------

class PcapError(Exception):
    pass


def read_pcap(path, offset=0, data=None):
    """The records of a libpcap file (``data``: its bytes instead of reading ``path``) as a
    list of (timestamp in seconds, frame bytes), starting at file byte ``offset`` (0: after
    the global header; else a value returned by :func:`pcap_end`). A truncated last record
    (a file still being written) is left out. Raises PcapError for anything but a 'classic'
    pcap file with Ethernet link type."""
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    if len(data) < 24:
        raise PcapError("%s: %d bytes, no pcap global header" % (path, len(data)))
    magic = data[:4]
    if magic == b"\xd4\xc3\xb2\xa1":
        e, frac = "<", 1e-6
    elif magic == b"\xa1\xb2\xc3\xd4":
        e, frac = ">", 1e-6
    elif magic == b"\x4d\x3c\xb2\xa1":
        e, frac = "<", 1e-9
    elif magic == b"\xa1\xb2\x3c\x4d":
        e, frac = ">", 1e-9
    else:
        raise PcapError("%s: unknown pcap magic %s" % (path, magic.hex()))
    major, minor, _zone, _sigfigs, snaplen, linktype = struct.unpack(e + "HHiIII", data[4:24])
    if major != 2 or linktype & 0x0FFFFFFF != 1:
        raise PcapError("%s: pcap version %d.%d link type %d (want 2.x, Ethernet 1)" % (
            path, major, minor, linktype))
    pos = max(24, offset)
    out = []
    while pos + 16 <= len(data):
        sec, sub, incl, orig = struct.unpack(e + "IIII", data[pos:pos + 16])
        if incl > max(snaplen, 65535) or incl > orig:
            raise PcapError("%s: bad record at byte %d (caplen %d, len %d)" % (
                path, pos, incl, orig))
        if pos + 16 + incl > len(data):
            break
        out.append((sec + sub * frac, data[pos + 16:pos + 16 + incl]))
        pos += 16 + incl
    return out


def pcap_end(path):
    """The byte offset after the last complete record of ``path`` (for a later
    ``read_pcap(path, offset)`` that returns only what came after)."""
    with open(path, "rb") as f:
        data = f.read()
    recs = read_pcap(path, data=data)
    pos = 24
    for _, fr in recs:
        pos += 16 + len(fr)
    return pos


# --- BTH opcodes ------------------------------------------------------------------------------

# RC/UC operation (low 5 bits) -> (name, bytes of extension headers, kind) with kind
# "mid" (first/middle packet: a full PMTU of payload, no pad), "end" (last/only: any payload),
# "none" (no payload at all).
_OPS = {
    0x00: ("SEND_FIRST", 0, "mid"), 0x01: ("SEND_MIDDLE", 0, "mid"),
    0x02: ("SEND_LAST", 0, "end"), 0x03: ("SEND_LAST_IMM", 4, "end"),
    0x04: ("SEND_ONLY", 0, "end"), 0x05: ("SEND_ONLY_IMM", 4, "end"),
    0x06: ("WRITE_FIRST", 16, "mid"), 0x07: ("WRITE_MIDDLE", 0, "mid"),
    0x08: ("WRITE_LAST", 0, "end"), 0x09: ("WRITE_LAST_IMM", 4, "end"),
    0x0A: ("WRITE_ONLY", 16, "end"), 0x0B: ("WRITE_ONLY_IMM", 20, "end"),
    0x0C: ("READ_REQUEST", 16, "none"),
    0x0D: ("READ_RESPONSE_FIRST", 4, "mid"), 0x0E: ("READ_RESPONSE_MIDDLE", 0, "mid"),
    0x0F: ("READ_RESPONSE_LAST", 4, "end"), 0x10: ("READ_RESPONSE_ONLY", 4, "end"),
    0x11: ("ACK", 4, "none"), 0x12: ("ATOMIC_ACK", 12, "none"),
    0x13: ("CMP_SWAP", 28, "none"), 0x14: ("FETCH_ADD", 28, "none"),
    0x16: ("SEND_LAST_INV", 4, "end"), 0x17: ("SEND_ONLY_INV", 4, "end"),
}


# tern's selective repeat (Documentation/hw/rdma.rst, "Out-of-order placement"): the
# MIDDLE/LAST packets of a SEND or WRITE in manufacturer-specific opcodes, each with its
# placement header after the BTH: a RETH (WRITE) or the 8-byte SEND placement header (SPH).
_SR_OPS = {
    0xC0: ("SR_WRITE_MIDDLE", 16, "mid", "reth"), 0xC1: ("SR_WRITE_LAST", 16, "end", "reth"),
    0xC2: ("SR_WRITE_LAST_IMM", 20, "end", "reth"),
    0xC3: ("SR_SEND_MIDDLE", 8, "mid", "sph"), 0xC4: ("SR_SEND_LAST", 8, "end", "sph"),
    0xC5: ("SR_SEND_LAST_IMM", 12, "end", "sph"), 0xC6: ("SR_SEND_LAST_INV", 12, "end", "sph"),
}


def opcode_info(op):
    """(name, extension header bytes, kind) of BTH opcode ``op``, or None if unknown."""
    if op == 0x81:
        return ("CNP", 16, "none")
    if op in _SR_OPS:
        name, ext, kind, _ = _SR_OPS[op]
        return ("RC_" + name, ext, kind)
    if op == 0x64:
        return ("UD_SEND_ONLY", 8, "end")
    if op == 0x65:
        return ("UD_SEND_ONLY_IMM", 12, "end")
    if op >> 5 in (0, 1) and op & 0x1F in _OPS:
        name, ext, kind = _OPS[op & 0x1F]
        if op >> 5 == 1 and (op & 0x1F) in (0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x13,
                                              0x14, 0x16, 0x17):
            return None     # UC has SEND and WRITE only
        return (("UC_" if op >> 5 else "RC_") + name, ext, kind)
    return None


# --- one frame --------------------------------------------------------------------------------

class Frame:
    """A parsed RoCEv2 frame. Fields: ``ipv6``, ``src``/``dst`` (address bytes), ``ip_id``
    (IPv4), ``sport``, ``opcode``, ``opname``, ``kind``, ``pkey``, ``dqpn``, ``psn``, ``pad``,
    ``payload_len``, ``icrc_wire``/``icrc_calc``, ``problems`` (list of text; empty: the frame
    is correct); for tern's selective-repeat opcodes ``reth`` (virtual address, R_Key, DMA
    length) or ``sph`` (receive ordinal, message offset), else None."""

    def __init__(self):
        self.problems = []
        self.ipv6 = False
        self.ip_id = None
        self.opname = "?"
        self.kind = None
        self.payload_len = None
        self.pad = 0
        self.icrc_ok = False
        self.reth = None
        self.sph = None

    def __repr__(self):
        return "<Frame %s %s dqpn %s psn %s len %s%s>" % (
            "IPv6" if self.ipv6 else "IPv4", self.opname, getattr(self, "dqpn", "?"),
            getattr(self, "psn", "?"), self.payload_len,
            (": " + "; ".join(self.problems)) if self.problems else "")


def _u16(b, o):
    return b[o] << 8 | b[o + 1]


def parse(frame):
    """A :class:`Frame` for an Ethernet frame carrying UDP to port 4791 (IPv4 or IPv6,
    optionally 802.1Q tagged), with every check done; None for any other frame."""
    if len(frame) < 14:
        return None
    et, o = _u16(frame, 12), 14
    if et == ETH_P_8021Q and len(frame) >= 18:
        et, o = _u16(frame, 16), 18
    l3 = frame[o:]
    f = Frame()
    bad = f.problems
    if et == ETH_P_IP:
        if len(l3) < 28 or l3[9] != 17:
            return None
        ihl = (l3[0] & 0x0F) * 4
        if len(l3) < ihl + 8 or _u16(l3, ihl + 2) != ROCE_PORT:
            return None
        if l3[0] >> 4 != 4 or ihl != 20:
            bad.append("IPv4 version/IHL byte 0x%02x (want 0x45)" % l3[0])
        total = _u16(l3, 2)
        if total > len(l3) or total < ihl + 8:
            bad.append("IPv4 total length %d, %d bytes after the Ethernet header" % (
                total, len(l3)))
            return f
        if ones_sum(l3[:ihl]) != 0xFFFF:
            bad.append("IPv4 header checksum 0x%04x is wrong" % _u16(l3, 10))
        flags = _u16(l3, 6)
        if flags != 0x4000:
            bad.append("IPv4 flags/fragment offset 0x%04x (want DF only, 0x4000)" % flags)
        if l3[8] == 0:
            bad.append("IPv4 TTL 0")
        f.ip_id = _u16(l3, 4)
        f.src, f.dst = bytes(l3[12:16]), bytes(l3[16:20])
        l3_len = total
        udp_o = ihl
    elif et == ETH_P_IPV6:
        if len(l3) < 48 or l3[6] != 17 or _u16(l3, 42) != ROCE_PORT:
            return None
        f.ipv6 = True
        if l3[0] >> 4 != 6:
            bad.append("IPv6 version %d" % (l3[0] >> 4))
        plen = _u16(l3, 4)
        if 40 + plen > len(l3) or plen < 8:
            bad.append("IPv6 payload length %d, %d bytes after the IPv6 header" % (
                plen, len(l3) - 40))
            return f
        if l3[7] == 0:
            bad.append("IPv6 hop limit 0")
        f.src, f.dst = bytes(l3[8:24]), bytes(l3[24:40])
        l3_len = 40 + plen
        udp_o = 40
    else:
        return None

    # UDP
    udp = l3[udp_o:l3_len]
    f.sport = _u16(udp, 0)
    ulen = _u16(udp, 4)
    if ulen != len(udp):
        bad.append("UDP length %d, IP says %d" % (ulen, len(udp)))
        return f
    if not 0xC000 <= f.sport <= 0xFFFF:
        bad.append("UDP source port %d outside the dynamic range 49152-65535" % f.sport)
    csum = _u16(udp, 6)
    if f.ipv6 or csum:
        pseudo = ones_sum(f.src + f.dst) + 17 + ulen
        if f.ipv6 and csum == 0:
            bad.append("UDP checksum 0 over IPv6 (RFC 8200: not allowed)")
        elif ones_sum(udp, pseudo) != 0xFFFF:
            bad.append("UDP checksum 0x%04x is wrong" % csum)

    # BTH and what follows
    if ulen < 8 + 12 + 4:
        bad.append("UDP length %d: no room for BTH and ICRC" % ulen)
        return f
    bth = udp[8:]
    f.opcode = bth[0]
    f.se, f.migreq = bool(bth[1] & 0x80), bool(bth[1] & 0x40)
    f.pad = (bth[1] >> 4) & 3
    tver = bth[1] & 0x0F
    f.pkey = _u16(bth, 2)
    f.dqpn = bth[5] << 16 | bth[6] << 8 | bth[7]
    f.ackreq = bool(bth[8] & 0x80)
    f.psn = bth[9] << 16 | bth[10] << 8 | bth[11]
    if tver != 0:
        bad.append("BTH TVer %d (want 0)" % tver)
    if f.pkey != 0xFFFF:
        bad.append("BTH P_Key 0x%04x (want the default 0xffff)" % f.pkey)
    if bth[4] & 0x3F:
        bad.append("BTH reserved bits of byte 4 set: 0x%02x" % bth[4])
    if bth[8] & 0x7F:
        bad.append("BTH reserved bits of byte 8 set: 0x%02x" % bth[8])
    info = opcode_info(f.opcode)
    body = ulen - 8 - 4                 # BTH .. pad
    if body % 4:
        bad.append("BTH to ICRC is %d bytes, not a multiple of 4" % body)
    if info is None:
        bad.append("unknown BTH opcode 0x%02x" % f.opcode)
    else:
        f.opname, ext, f.kind = info
        f.payload_len = body - 12 - ext - f.pad
        if f.payload_len < 0:
            bad.append("%s: %d bytes after BTH, less than its %d bytes of headers + pad %d" % (
                f.opname, body - 12, ext, f.pad))
        elif f.kind == "none" and (f.payload_len or f.pad):
            bad.append("%s carries %d payload bytes, pad %d (want none)" % (
                f.opname, f.payload_len, f.pad))
        elif f.kind == "mid" and f.pad:
            bad.append("%s (first/middle packet) has pad %d" % (f.opname, f.pad))
        elif f.pad and any(bth[body - f.pad:body]):
            bad.append("%s: pad bytes not zero" % f.opname)
        elif f.payload_len == 0 and f.pad:
            bad.append("%s: pad %d with no payload" % (f.opname, f.pad))
        if f.opcode in _SR_OPS and f.payload_len >= 0:
            _sr_headers(f, bth, bad)

    # ICRC: the last 4 bytes of the UDP payload, least significant byte first
    end = udp_o + ulen - 4
    f.icrc_wire = struct.unpack("<I", bytes(l3[end:end + 4]))[0]
    f.icrc_calc = icrc(l3, f.ipv6, end)
    f.icrc_ok = f.icrc_wire == f.icrc_calc
    if not f.icrc_ok:
        bad.append("ICRC on the wire 0x%08x, computed 0x%08x" % (f.icrc_wire, f.icrc_calc))
    return f


def _sr_headers(f, bth, bad):
    """Decode and check the placement header of a selective-repeat packet (``f.opcode`` in
    _SR_OPS): a RETH whose DMA length is what is left of the message from the packet's first
    byte (more than a MIDDLE's payload, exactly a LAST's), or an SPH with its reserved bits
    zero, an ordinal of 24 bits and a nonzero offset (a multiple of the MTU, which a MIDDLE's
    payload is)."""
    last = f.kind == "end"
    if _SR_OPS[f.opcode][3] == "reth":
        va, rkey, dlen = struct.unpack(">QII", bytes(bth[12:28]))
        f.reth = (va, rkey, dlen)
        if last and dlen != f.payload_len:
            bad.append("%s: RETH DMA length %d, payload %d" % (f.opname, dlen, f.payload_len))
        elif not last and dlen <= f.payload_len:
            bad.append("%s: RETH DMA length %d, not more than the payload %d" % (
                f.opname, dlen, f.payload_len))
    else:
        rord, off = struct.unpack(">II", bytes(bth[12:20]))
        f.sph = (rord & 0xFFFFFF, off)
        if rord >> 24:
            bad.append("%s: SPH reserved bits 0x%02x" % (f.opname, rord >> 24))
        if off == 0 or (not last and off % f.payload_len if f.payload_len else False):
            bad.append("%s: SPH message offset %d" % (f.opname, off))


def _selftest():
    """Known answers: the CRC-32 check value of "123456789", and the register state after
    the 8 bytes of 0xff that stand for the LRH (0xDEBB20E3 inverted, as rxe starts from)."""
    assert crc32(b"123456789") == 0xCBF43926
    assert crc32(b"\xff" * 8) ^ 0xFFFFFFFF == 0xDEBB20E3


_selftest()
