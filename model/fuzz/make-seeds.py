#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Write the hand-made seeds of model/fuzz/corpus/cmd (fuzz_cmd.c's input script) and
model/fuzz/corpus/wire (fuzz_wire.c's).

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
ETH_DB_ARM = 1 << 31


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
        out += doorbell(0x400 + 4 * q, 4 | ETH_DB_ARM)
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
           doorbell(0x200, (len(descs) & 0xffff) | ETH_DB_ARM) + time_passes(1000))
    if modify:
        out += (command(CMD_MODIFY_ETH_TXQ, 3, struct.pack("<IHHI", 0, modify[0], modify[1], 0)) +
                arena(TXQ_RING + 16 * len(descs), ring) +
                doorbell(0x200, (2 * len(descs) & 0xffff) | ETH_DB_ARM) + time_passes(2000))
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
    for d, group in (("cmd", seeds), ("wire", wire)):
        for name, data in group.items():
            with open(os.path.join(os.path.dirname(out), d, name), "wb") as f:
                f.write(data)
            print("%s/%s: %d bytes" % (d, name, len(data)))


if __name__ == "__main__":
    main()
