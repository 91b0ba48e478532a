#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Write the hand-made seeds of model/fuzz/corpus/cmd (fuzz_cmd.c's input script),
model/fuzz/corpus/wire (fuzz_wire.c's), model/fuzz/corpus/guest and model/fuzz/corpus/eth
(fuzz_guest.c's, as fuzz-guest and fuzz-eth).

libFuzzer's own corpus entries are named by their SHA-1; these start with "seed-" and say
what they set up, so that the fuzzer reaches paths that random mutation finds only by
chance: today the Ethernet transmitter with its descriptor layouts (a frame in pieces, an
offload context for checksum and TSO over IPv4 and IPv6) and its event moderation
(a period and a frame count at creation, then MODIFY_ETH_TXQ), and receive side scaling (two
RX queues, SET_RSS through a DMA input, TCP frames from the wire hashed to them). Each seed
creates an EQ and a TX (or RX) queue through the command ring, writes descriptors and frame headers into the DMA arena
and rings the queue's doorbell, as tern_core does (Documentation/hw/interface.rst,
"Ethernet"). The wire seeds connect RC QPs in selective repeat at MTU 1024 with multi-packet
SENDs and WRITEs in flight, so the log holds the SR opcodes' MIDDLE/LAST packets (their RETH or
SEND placement header, Documentation/hw/rdma.rst), and deliver frames of it again with their
placement headers changed (address, key, length, receive ordinal, offset, reserved bits), the
ICRC fixed, so the responder's out-of-order placement sees hostile headers after a gap. Run
it after changing a layout: `model/fuzz/make-seeds.py`.
"""
import os
import struct

ARENA = 0x100000                 # fuzz_cmd.c: ARENA_BASE
EQ_RING = ARENA + 0x1000         # 16 << 4 bytes
TXQ_RING = ARENA + 0x2000        # 16 << 6 bytes
FRAME = ARENA + 0x3000           # frame bytes

CMD_CREATE_EQ, CMD_CREATE_ETH_TXQ, CMD_MODIFY_ETH_TXQ = 0x0010, 0x0020, 0x0024
CMD_CREATE_ETH_RXQ, CMD_SET_RSS = 0x0022, 0x0026
RXQ_RINGS = ARENA + 0x5000       # two RX rings of 16 << 6 bytes
RSS_IN = ARENA + 0x6000          # SET_RSS input (176 bytes, by DMA)
RX_BUFS = ARENA + 0x8000         # receive buffers, 2 KiB each
RSS_HASH_ALL = 0x3f
MEM_DIRECT = 0
TXD_MORE, TXD_CTX = 1 << 0, 1 << 1
CTX_CSUM, CTX_TSO = 1 << 0, 1 << 1
DB_ETH_TXQ_ARM, DB_ETH_RXQ_ARM = 0x600, 0x800  # arm doorbells: value = the driver's CI


def mem_desc(addr):
    return struct.pack("<QIBBH", addr, 1, 12, MEM_DIRECT, 0)


def command(opcode, token, payload):
    """Op 0: one 64-byte command entry with its input inline (at most 40 bytes)."""
    assert len(payload) <= 40
    sqe = struct.pack("<HHHHQQ", opcode, token, len(payload), 0, 0, 0) + payload
    return b"\x00" + sqe.ljust(64, b"\x00")


def arena(addr, data):
    """Op 1, as often as needed: 16 bytes at a time at a 16-byte aligned arena address."""
    out = b""
    data = data.ljust((len(data) + 15) // 16 * 16, b"\x00")
    for off in range(0, len(data), 16):
        index = (addr - ARENA + off) // 16
        out += b"\x01" + struct.pack("<H", index) + data[off:off + 16]
    return out


def command_dma(opcode, token, in_addr, in_len):
    """Op 0: a command entry whose input (over 40 bytes) the device reads at ``in_addr``."""
    sqe = struct.pack("<HHHHQQ", opcode, token, in_len, 0, in_addr, 0)
    return b"\x00" + sqe.ljust(64, b"\x00")


def wire_frame(length, after_dst):
    """Op 4: a frame of ``length`` bytes to the broadcast address, ``after_dst`` (66 bytes:
    source MAC on) from the input."""
    assert length >= 72 and len(after_dst) == 66
    return b"\x04" + struct.pack("<H", length) + after_dst


def rss_seed():
    """An EQ, two RX queues with buffers, SET_RSS over both, then TCP frames of four flows."""
    out = command(CMD_CREATE_EQ, 1, mem_desc(EQ_RING) + struct.pack("<BBHI", 4, 0, 0, 0))
    for q in range(2):
        ring = RXQ_RINGS + q * 0x400
        out += command(CMD_CREATE_ETH_RXQ, 2 + q, mem_desc(ring) +
                       struct.pack("<BBHHH", 6, 0, 0, 0, 0))
        out += arena(ring, b"".join(struct.pack("<QHHHH", RX_BUFS + (q * 4 + i) * 0x800, 2048,
                                                0, 0, 0) for i in range(4)))
        out += doorbell(DB_ETH_RXQ_ARM + 4 * q, 0) + doorbell(0x400 + 4 * q, 4)
    key = bytes((i * 37 + 11) & 0xff for i in range(40))
    indir = bytes(i & 1 for i in range(128))
    out += arena(RSS_IN, struct.pack("<II", RSS_HASH_ALL, 0) + key + indir)
    out += command_dma(CMD_SET_RSS, 4, RSS_IN, 176)
    for flow in range(4):
        hdr = ipv4_tcp(100)
        hdr = hdr[:34] + struct.pack(">H", 40000 + flow) + hdr[36:]
        out += wire_frame(154, hdr[6:54].ljust(66, b"\x00"))
    return out + time_passes(100)


def doorbell(offset, value):
    """Op 2 on the doorbell BAR's first page (BAR 2)."""
    return b"\x02" + struct.pack("<BH", 1, offset) + struct.pack("<I", value)


def time_passes(units):
    return b"\x03" + struct.pack("<I", units)


def txd(addr, length, flags):
    return struct.pack("<QHHHH", addr, length, flags, 0, 0)


def ctx(csum_start, csum_offset, mss, ctx_flags):
    return struct.pack("<HHHHHHHH", csum_start, csum_offset, mss, ctx_flags, 0, TXD_CTX, 0, 0)


def checksum16(data):
    s = 0
    for i in range(0, len(data) - 1, 2):
        s += data[i] << 8 | data[i + 1]
    if len(data) % 2:
        s += data[-1] << 8
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ipv4_tcp(payload_len):
    eth = bytes.fromhex("0274650000020274650000010800")
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + 20 + payload_len, 1, 0x4000, 64,
                               6, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])))
    struct.pack_into(">H", ip, 10, checksum16(bytes(ip)))
    pseudo = (10 << 8) + 1 + (10 << 8) + 2 + 6 + 20 + payload_len
    tcp = struct.pack(">HHIIBBHHH", 40000, 5201, 1, 0, 5 << 4, 0x18, 65535,
                      (pseudo & 0xffff) + (pseudo >> 16), 0)
    return eth + bytes(ip) + tcp


def ipv6_tcp(payload_len):
    eth = bytes.fromhex("02746500000202746500000186dd")
    src = bytes.fromhex("fe800000000000000074650000000001")
    dst = bytes.fromhex("fe800000000000000074650000000002")
    ip = struct.pack(">IHBB16s16s", 6 << 28, 20 + payload_len, 6, 64, src, dst)
    tcp = struct.pack(">HHIIBBHHH", 40000, 5201, 1, 0, 5 << 4, 0x18, 65535, 0, 0)
    return eth + ip + tcp


def setup(period_us=0, frames=0):
    """An EQ, and a TX queue reporting to it with the event moderation given."""
    return (command(CMD_CREATE_EQ, 1, mem_desc(EQ_RING) + struct.pack("<BBHI", 4, 0, 0, 0)) +
            command(CMD_CREATE_ETH_TXQ, 2, mem_desc(TXQ_RING) +
                    struct.pack("<BBHHH", 6, 0, 0, period_us, frames)))


def frame_seed(headers, payload_len, descs, period_us=0, frames=0, modify=None):
    """A frame: its headers at FRAME, the descriptors at the ring's start, the doorbell;
    ``modify``: (period, frames) for a MODIFY_ETH_TXQ after it, and the frame sent again."""
    ring = b"".join(descs)
    out = (setup(period_us, frames) + arena(FRAME, headers) + arena(TXQ_RING, ring) +
           doorbell(DB_ETH_TXQ_ARM, 0) + doorbell(0x200, len(descs) & 0xffff) +
           time_passes(1000))
    if modify:
        out += (command(CMD_MODIFY_ETH_TXQ, 3, struct.pack("<IHHI", 0, modify[0], modify[1], 0)) +
                arena(TXQ_RING + 16 * len(descs), ring) +
                doorbell(DB_ETH_TXQ_ARM, len(descs) & 0xffff) +
                doorbell(0x200, 2 * len(descs) & 0xffff) + time_passes(2000))
    return out


# fuzz_wire.c's first two bytes: MTU 1024 (cfg % 5 == 2), RC selective repeat (0x4), IPv4,
# retry and RNR retry 7, the posted messages 4500 bytes and up (bits 14:10 = 3)
WIRE_CFG_SR = 0xFF7
WIRE_EXT = 14 + 20 + 8 + 12      # IPv4: where the extension headers after the BTH start


def wire_frame_again(dev, k, flips, fix=True):
    """'F': frame k of the wire log to @dev, with (offset, xor) flips, its length kept."""
    b = b"F" + bytes([dev, k, len(flips)])
    for off, x in flips:
        b += struct.pack(">HB", off, x)
    return b + struct.pack(">HB", 0, 0) + bytes([1 if fix else 0])


def wire_sr_seed(flips):
    """Frames 1..30 of the log sent again to both devices with @flips, time passing."""
    b = struct.pack(">H", WIRE_CFG_SR)
    for k in range(1, 31):
        b += wire_frame_again(k & 1, k, flips)
    return b + b"T\x00" + struct.pack(">H", 2000)


# ---- fuzz_wire.c's other scripts: every opcode, CC, CNPs, UD, SRQ, local WQEs ----------------
WIRE_CFG_RC = 0x0FF2             # RC, MTU 1024, IPv4, retries 7, messages of 4500 bytes and up
WIRE_CFG_RC6 = 0x0FFA            # RC over IPv6, MTU 256
WIRE_CFG_UC = 0x8FF2             # UC


def wcmd(c, dev, *args):
    return c.encode() + bytes([dev]) + b"".join(args)


def u8(v):
    return bytes([v & 0xff])


def u16(v):
    return struct.pack(">H", v & 0xffff)


def wire_seeds():
    t = wcmd("T", 0, u16(3000))
    every_op = b"".join(wcmd("P", k & 1, u8(op), u16(300 + 700 * op))
                        for op in range(8) for k in range(2)) + t
    seeds = {}
    for name, cfg in (("rc", WIRE_CFG_RC), ("rc6", WIRE_CFG_RC6), ("uc", WIRE_CFG_UC),
                      ("sr", WIRE_CFG_SR)):
        seeds["seed-%s-every-op" % name] = struct.pack(">H", cfg) + every_op
        # DCQCN on both, CNPs made of logged frames to both sides
        seeds["seed-%s-cnp" % name] = (struct.pack(">H", cfg) + wcmd("C", 0, u8(1)) +
                                       wcmd("C", 1, u8(1)) + every_op +
                                       b"".join(wcmd("N", k & 1, u8(k)) for k in range(12)) +
                                       t)
        # HPCC: the data frames carry INT shims, the peer echoes them
        seeds["seed-%s-hpcc" % name] = (struct.pack(">H", cfg) + wcmd("C", 0, u8(2)) +
                                        wcmd("C", 1, u8(2)) + every_op + every_op)
        # TIMELY on the QPs' priority: WRITEs (op 2) and READs (op 4) both ways, time
        # passing between them: segments opened, extended and closed, voided by resends
        rw = b"".join(wcmd("P", k & 1, u8(2 if k < 4 else 4), u16(700 + 3000 * k)) +
                      wcmd("T", 0, u16(20000)) for k in range(8))
        seeds["seed-%s-timely" % name] = (struct.pack(">H", cfg) + wcmd("C", 0, u8(3)) +
                                          wcmd("C", 1, u8(3)) + rw + every_op + rw)
    # UD SENDs both ways, to the UD QPs and to those on the SRQs, one with a wrong Q_Key;
    # logged frames made UD datagrams for either
    ud = b"".join(wcmd("U", k & 1, u16(64 + 900 * k), u8(k % 4)) for k in range(8))
    ud += b"".join(wcmd("F", k & 1, u8(k), u8(0), u16(0), u8(0), u8(fl))
                   for k in range(1, 9) for fl in (3, 7))
    seeds["seed-ud-srq"] = struct.pack(">H", WIRE_CFG_RC) + ud + wcmd("T", 0, u16(2000))
    # fast registration, window binding, remote access through both, invalidation
    local = b""
    for s in range(2):
        local += wcmd("L", s, u8(0x3c), u16(0x1000)) + wcmd("L", s, u8(0x01), u16(0x0800))
    local += every_op + b"".join(wcmd("L", s, u8(op), u16(0)) for s in range(2)
                                 for op in (2, 3))
    seeds["seed-frwr-mw"] = struct.pack(">H", WIRE_CFG_RC) + local + t
    # losses: the QPs' state changes, time for retransmission and RNR
    # ECN CE on received data frames (the IPv4 TOS byte's ECT(0) made CE): CNPs sent back
    # (ECN bits 00 or 11 -> 11 whatever they were; 'C' 0xfd: DCQCN on priorities 0-5)
    ce = b"".join(wcmd("F", d, u8(k), u8(1), u16(15), u8(0x03), u16(0), u8(0), u8(1))
                  for k in range(1, 16) for d in range(2))
    marked = b"".join(wcmd("E", k & 1, u8(op), u16(300 + 900 * op))
                      for op in range(8) for k in range(2))
    seeds["seed-rc-ce"] = (struct.pack(">H", WIRE_CFG_RC) + wcmd("C", 0, u8(0xfd)) +
                           wcmd("C", 1, u8(0xfd)) + marked + t + ce + t + every_op + marked +
                           t)
    seeds["seed-rc-states"] = (struct.pack(">H", WIRE_CFG_RC) + every_op +
                               wcmd("S", 0, u8(0)) + wcmd("S", 0, u8(1 | 3 << 3)) +
                               wcmd("S", 0, u8(2)) + every_op + wcmd("S", 1, u8(3)) + t)
    return seeds


# ---- fuzz_guest.c / fuzz-eth: its scripts ------------------------------------------------------
GUEST_RC = 0x0DF2 | 0x80         # RC, MTU 1024, retries 7, RQ doorbell record, DCQCN
GUEST_SR = 0x0DF6                # RC selective repeat
GUEST_UC = 0x8DF2
GUEST_HPCC = 0x0DF2 | 0x200      # HPCC instead of DCQCN; SRQ without a record
SQE_SGE_LEN = 32 + 8             # the first SGE's length in a send WQE
CTRL_REG = 0x000c                   # TERN_REG_CTRL (TERN_CTRL_RESET: bit 0)


def g(c, dev, *args):
    return c.encode() + bytes([dev]) + b"".join(args)


def guest_seeds():
    seeds = {}
    t = g("t", 0, u16(4000))
    ops = b"".join(g("p", d, u8(0), u8(op), u8(1), u16(0x4000 + 911 * op))
                   for op in list(range(11)) + [0x27, 0x48, 0x6a, 0x7f] for d in range(2))
    ud = b"".join(g("p", d, u8(q), u8(op), u8(1), u16(0x100 + 333 * op))
                  for d in range(2) for q in (1, 2) for op in range(4))
    rq = b"".join(g("r", d, u8(q)) for d in range(2) for q in range(9))
    for name, cfg in (("rc", GUEST_RC), ("sr", GUEST_SR), ("uc", GUEST_UC),
                      ("hpcc", GUEST_HPCC)):
        seeds["seed-%s-every-op" % name] = struct.pack(">H", cfg) + rq + ops + ud + t
    # a send WQE read, its SGE length rewritten before the retransmission the lost frames
    # cause; rings rewritten after the device read them
    lossy = g("f", 0, u8(0x55))
    rewrite = b""
    for slot in range(4):
        rewrite += g("p", 0, u8(0), u8(0), u8(1), u16(0x7fff))
        rewrite += g("w", 0, u8(0), u16(slot * 128 + SQE_SGE_LEN + 1), u8(0x7f))
    seeds["seed-sq-rewrite"] = (struct.pack(">H", GUEST_RC) + lossy + rewrite +
                                g("f", 0, u8(0)) + t + t)
    seeds["seed-rings-rewrite"] = (struct.pack(">H", GUEST_RC) + ops + b"".join(
        g("w", d, u8(m), u16(o), u8(0xa5)) for d in range(2) for m in range(14)
        for o in (0, 9, 33)) + ud + t)
    # DMA into the device's own BARs: the CQ's, EQs', rings' and page list's addresses,
    # MSI-X messages
    bar = b"".join(g("a", 0, u8(m), u16(o), u8(k), u16(0x40 + 8 * m))
                   for m in (0, 1, 4, 8, 9, 10, 12) for o in (0, 32) for k in (0, 1))
    bar += b"".join(g("m", d, u8(v), u8(k), u16(0x100 * v), struct.pack(">I", 0x12345))
                    for d in range(2) for v in range(3) for k in (0, 1))
    seeds["seed-bar-dma"] = struct.pack(">H", GUEST_RC) + bar + ops + ud + rq + t
    # doorbells and registers with any value; the other commands
    dbs = b"".join(g("d", 0, u8(k), u16(o), struct.pack(">Q", 0xffffffff00ff0000 | o))
                   for k in range(8) for o in (0, 0x20, 0x48, 0x200, 0x400))
    ctl = b"".join(g("c", d, u8(k), u16(0x1234 + k)) for d in range(2) for k in range(20))
    seeds["seed-doorbells"] = struct.pack(">H", GUEST_RC) + ops + dbs + ctl + t
    seeds["seed-eth"] = struct.pack(">H", GUEST_RC) + eth_script()
    # CQ events and moderation: MODIFY_CQ (4 CQEs or 10 us), the CQ armed, work completing
    moder = (g("c", 0, u8(0), u16(4 | 10 << 8)) + g("c", 1, u8(0), u16(1 | 1 << 8)) +
             g("c", 0, u8(2), u16(1)) + g("c", 1, u8(2), u16(0)) + g("c", 0, u8(6), u16(1)))
    seeds["seed-cq-events"] = (struct.pack(">H", GUEST_RC) + rq + moder + ops + t + moder +
                               ops + t)
    # queries with DCQCN and with HPCC; objects destroyed while in use, last the QP with a
    # window bound through it; the SQ's memory faulting
    bind = g("p", 0, u8(0), u8(0x0a), u8(1), u16(0x0800))
    kill = b"".join(g("c", 0, u8(k), u16(a)) for k in (10, 11, 12, 13, 14, 15, 17, 18)
                    for a in (0, 1, 2))
    for name, cfg in (("dcqcn", GUEST_RC), ("hpcc", GUEST_HPCC)):
        seeds["seed-query-destroy-%s" % name] = (struct.pack(">H", cfg) + ops + t +
                                                 g("c", 0, u8(10), u16(0)) + kill + bind +
                                                 t + g("c", 0, u8(16), u16(0)) + t)
    seeds["seed-sq-fault"] = (struct.pack(">H", GUEST_RC) + g("c", 0, u8(20), u16(1)) + ops +
                              t + g("c", 0, u8(20), u16(0)) + ops + t)
    # PFC on, PAUSE and PFC frames received; the device reset through its register
    pfc = g("c", 0, u8(19), u16(0x08)) + g("c", 1, u8(19), u16(0xff))
    pfc += b"".join(g("x", d, u8(sp), u16(0), u8(0)) for d in range(2)
                    for sp in (0x21, 0x25, 0x2d, 0x31, 0x35))
    seeds["seed-pfc"] = struct.pack(">H", GUEST_RC) + pfc + ops + t + pfc + t
    # HPCC's window at work: WRITEs that complete, their ACKs echoing the wire's INT records
    writes = b"".join(g("p", d, u8(0), u8(2), u8(1), u16(3000 + 100 * i))
                      for i in range(12) for d in range(2))
    seeds["seed-hpcc-writes"] = struct.pack(">H", GUEST_HPCC) + writes + t + writes + t
    # the MR in use changed in place (REREG_MR): rights cut and given back under its key,
    # then another key byte and another PD (refused)
    rereg = lambda a: g("c", 1, u8(21), u16(a))
    seeds["seed-rereg"] = (struct.pack(">H", GUEST_RC) + rq + rereg(0x0001) + ops + t +
                           rereg(0x000f) + ops + rereg(0x4000 | 5 << 7 | 0x0f) +
                           rereg(0x800f) + ops + t)
    # dev 0 paused by its peer on every priority while it has work: its QPs wait for the MAC
    xoff = g("x", 0, u8(0x25), u16(0), u8(0))
    seeds["seed-pfc-paused-work"] = (struct.pack(">H", GUEST_RC) + g("c", 0, u8(19), u16(0xff)) +
                                     xoff + ops + g("t", 1, u16(0x0400)) + xoff + ops + t)
    # a CQ of 16 entries whose consumer record is rewritten: the device finds it overflowed
    seeds["seed-cq-overflow"] = (struct.pack(">H", GUEST_RC) + g("c", 0, u8(1), u16(0)) + rq +
                                 ops + g("w", 0, u8(5), u16(16 * 32), u8(0x80)) + ops + t)
    # the CQ's and the Ethernet rings' memory faulting for the device's DMA
    seeds["seed-dma-faults"] = (struct.pack(">H", GUEST_RC) + g("c", 0, u8(20), u16(2)) + ops +
                                t + g("c", 1, u8(20), u16(3)) + eth_script() +
                                g("c", 1, u8(20), u16(4)) + eth_script() + t)
    # UD multicast: both sides' UD QPs (and the SRQ ones) in group 0, dev 1 in group 1 too;
    # SENDs to the groups (DestQP 0xffffff, then any), detached, attached with hostile GIDs,
    # last dev 0's UD QP destroyed while a member
    mc = lambda d, arg: g("c", d, u8(22), u16(arg))
    join = b"".join(mc(d, a) for d in range(2) for a in (0, 2)) + mc(1, 1 << 2)
    mcs = b"".join(g("p", d, u8(q), u8(2), u8(0x40 | grp << 3 | k), u16(0x200 + 64 * grp))
                   for d in range(2) for q in (1, 2) for grp in (0, 1) for k in (0, 4))
    leave = mc(0, 1) + mc(1, 3) + mc(1, 1 << 2 | 1) + mc(1, 1 << 2 | 1)
    hostile = b"".join(mc(0, 0x8000 | x) for x in (0x0010, 0x0000, 0x1e20, 0xff10, 0x0201))
    seeds["seed-ud-mcast"] = (struct.pack(">H", GUEST_RC) + rq + join + mcs + t + leave +
                              mcs + t + hostile + join + mcs + t + g("c", 0, u8(12), u16(0)) +
                              mcs + t)
    seeds["seed-reset"] = (struct.pack(">H", GUEST_RC) + ops +
                           g("d", 0, u8(2), u16(CTRL_REG), struct.pack(">Q", 1)) + t + ops + t)
    return seeds


def eth_script():
    """Flows of TCP segments in sequence (coalesced), UDP, VLAN, IPv6, bad checksums; TX
    frames in pieces with checksum offload and TSO."""
    b = b""
    for spec in (0x00, 0x01, 0x02, 0x03, 0x40, 0x80, 0x21):
        for _ in range(4):
            b += g("x", 0, u8(spec), u16(1400), u8(0))
    for spec in (0x04, 0x05, 0x08, 0x09, 0x10, 0x16):
        b += g("x", 0, u8(spec), u16(300), u8(0))
    b += g("x", 0, u8(0x00), u16(1000), u8(2), u8(47), u8(0x01), u8(20), u8(0x10))
    b += g("t", 0, u16(200))
    # TX: plain in 3 pieces, checksum (IPv4 TCP: start 34, offset 16), TSO by 1000 and 1200
    b += g("e", 0, u8(2), u8(0x00), u16(3000), u16(0), u16(0), u8(0))
    b += g("e", 0, u8(0x81), u8(0x00), u16(1000), u8(34), u8(16), u16(0), u8(1),
           u16(0), u16(0), u8(0), u16(0), u16(0), u8(0))
    b += g("e", 0, u8(0x81), u8(0x00), u16(3000), u8(34), u8(16), u16(1000), u8(3),
           u16(0), u16(0), u8(0), u16(0), u16(0), u8(0))
    b += g("e", 0, u8(0x81), u8(0x01), u16(3000), u8(54), u8(16), u16(1200), u8(3),
           u16(0), u16(0), u8(0), u16(0), u16(0), u8(0))
    b += g("e", 0, u8(0x81), u8(0x04), u16(500), u8(34), u8(6), u16(0), u8(1),
           u16(0), u16(0), u8(0), u16(0), u16(0), u8(0))
    b += g("c", 0, u8(7), u16(0x3f | 1 << 6)) + g("c", 0, u8(9), u16(0x0801))
    return b + g("t", 0, u16(1000))


def eth_seeds():
    seeds = {"seed-eth": struct.pack(">H", 0x0003) + eth_script(),
             "seed-eth-jumbo": struct.pack(">H", 0x000e) + eth_script()}
    # PFC with the storm guard (10 ms) over a 32 KiB buffer: UDP frames (DSCP 0: priority 0)
    # fill it past XOFF once both RX rings are empty, the host does not drain for 33 ms (our
    # pause storm), then refills (XON)
    fill = b"".join(g("x", 0, u8(0x04), u16(1400), u8(0)) for _ in range(110))
    seeds["seed-eth-pfc-xoff-storm"] = (struct.pack(">H", 0x0002) +
                                        g("c", 0, u8(19), u16(0x1ff)) + fill +
                                        g("t", 0, u16(0xffff)) + g("t", 0, u16(0xffff)) +
                                        g("c", 0, u8(9), u16(0x1f00)) +
                                        g("c", 0, u8(9), u16(0x1f01)) + g("t", 0, u16(0x1000)))
    # the peer pauses us for 12 ms without a break (its storm), then goes quiet
    peer = b"".join(g("x", 0, u8(0x25), u16(0), u8(0)) + g("t", 0, u16(0x0c00))
                    for _ in range(15))
    seeds["seed-eth-pfc-peer-storm"] = (struct.pack(">H", 0x0002) +
                                        g("c", 0, u8(19), u16(0x1ff)) + peer +
                                        g("t", 0, u16(0xffff)) + g("t", 0, u16(0xffff)))
    seeds["seed-eth-ring-faults"] = (struct.pack(">H", 0x0003) + g("c", 0, u8(20), u16(3)) +
                                     eth_script() + g("c", 0, u8(20), u16(4)) + eth_script())
    seeds["seed-eth-rewrite"] = (struct.pack(">H", 0) + eth_script() + b"".join(
        g("w", 0, u8(m), u16(o), u8(0xff)) for m in (6, 7, 8, 9) for o in (0, 10, 14)) +
        b"".join(g("a", 0, u8(m), u16(0), u8(k), u16(0x400)) for m in (8, 9) for k in range(4))
        + eth_script())
    return seeds


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "cmd")
    h4, h6 = ipv4_tcp(3000), ipv6_tcp(3000)
    seeds = {
        # a plain frame in three pieces
        "seed-eth-tx-pieces": frame_seed(h4, 3000, [
            txd(FRAME, 14, TXD_MORE), txd(FRAME + 14, 40, TXD_MORE),
            txd(FRAME + 0x100, 400, 0)]),
        # checksum offload: the TCP checksum over the frame
        "seed-eth-tx-csum": frame_seed(h4, 1000, [
            ctx(34, 16, 0, CTX_CSUM), txd(FRAME, 54, TXD_MORE), txd(FRAME + 0x100, 1000, 0)]),
        # TSO over IPv4: 3000 bytes of payload in segments of 1000
        "seed-eth-tx-tso4": frame_seed(h4, 3000, [
            ctx(34, 16, 1000, CTX_CSUM | CTX_TSO), txd(FRAME, 54, TXD_MORE),
            txd(FRAME + 0x100, 3000, 0)]),
        # event moderation: 100 us / 4 frames at creation, then 10 us / 1 frame live
        "seed-eth-tx-moderation": frame_seed(h4, 400, [
            txd(FRAME, 54, TXD_MORE), txd(FRAME + 0x100, 400, 0)], 100, 4, (10, 1)),
        # TSO over IPv6
        "seed-eth-tx-tso6": frame_seed(h6, 3000, [
            ctx(54, 16, 1200, CTX_CSUM | CTX_TSO), txd(FRAME, 74, TXD_MORE),
            txd(FRAME + 0x100, 3000, 0)]),
    }
    seeds["seed-eth-rx-rss"] = rss_seed()
    wire = {
        # RETH of SR_WRITE_*: address (bytes 0..7), R_Key (8..11), DMA length (12..15)
        "seed-sr-reth-addr": wire_sr_seed([(WIRE_EXT + 6, 0x10)]),
        "seed-sr-reth-key": wire_sr_seed([(WIRE_EXT + 10, 0x01)]),
        "seed-sr-reth-len": wire_sr_seed([(WIRE_EXT + 12, 0x80)]),
        # SPH of SR_SEND_*: receive ordinal (0..3, 31:24 reserved), offset (4..7)
        "seed-sr-sph-rord": wire_sr_seed([(WIRE_EXT + 3, 0x01)]),
        "seed-sr-sph-rsvd": wire_sr_seed([(WIRE_EXT + 0, 0x40)]),
        "seed-sr-sph-off": wire_sr_seed([(WIRE_EXT + 6, 0x04)]),
        # the opcode itself: SR opcodes turned into others and back
        "seed-sr-opcode": wire_sr_seed([(WIRE_EXT - 12, 0x03)]),
        # unchanged: duplicates of SR packets, placed again or answered with a SACK
        "seed-sr-dup": wire_sr_seed([]),
    }
    wire.update(wire_seeds())
    for d, group in (("cmd", seeds), ("wire", wire), ("guest", guest_seeds()),
                     ("eth", eth_seeds())):
        os.makedirs(os.path.join(os.path.dirname(out), d), exist_ok=True)
        for name, data in group.items():
            with open(os.path.join(os.path.dirname(out), d, name), "wb") as f:
                f.write(data)
            print("%s/%s: %d bytes" % (d, name, len(data)))


if __name__ == "__main__":
    main()
