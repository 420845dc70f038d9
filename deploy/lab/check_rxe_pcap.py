#!/usr/bin/python3
"""check_rxe_pcap.py - verify a RoCEv2 capture from the EPIC Soft-RoCE lab.

    /usr/bin/python3 deploy/lab/check_rxe_pcap.py FILE.pcap [--require-all-rc] [--quiet]

For every UDP/4791 packet (IPv4 or IPv6, Ethernet):
  * recomputes the ICRC independently (zlib CRC-32 over the masked pseudo packet of the RoCEv2
    annex: 8 x 0xFF, IP header with TOS/TTL/checksum or traffic class/flow label/hop limit set
    to 1s, UDP header with checksum 1s, BTH with byte 4 set to 1s, payload) and compares it with
    the ICRC in the packet (stored little-endian in its last 4 bytes);
  * for IPv4, also asks scapy (scapy.contrib.roce: BTH.icrc = None, rebuild) for the ICRC and
    compares (scapy 2.5 has no IPv6 ICRC);
  * tallies BTH opcodes and the PSNs of each destination QP's requests.
--require-all-rc fails unless all 18 RC opcodes 0..17 (SEND, RDMA WRITE, READ request/response,
ACK) occur.  Exit status 0 when every check passed.  Needs python3-scapy (Debian).
"""
import struct
import sys
import zlib
from collections import Counter, defaultdict

from scapy.all import Ether, IP, IPv6, UDP, rdpcap  # noqa: E402
from scapy.contrib.roce import BTH  # noqa: E402

RC_NAMES = {
    0: "SEND_FIRST", 1: "SEND_MIDDLE", 2: "SEND_LAST", 3: "SEND_LAST_WITH_IMMEDIATE",
    4: "SEND_ONLY", 5: "SEND_ONLY_WITH_IMMEDIATE", 6: "RDMA_WRITE_FIRST", 7: "RDMA_WRITE_MIDDLE",
    8: "RDMA_WRITE_LAST", 9: "RDMA_WRITE_LAST_WITH_IMMEDIATE", 10: "RDMA_WRITE_ONLY",
    11: "RDMA_WRITE_ONLY_WITH_IMMEDIATE", 12: "RDMA_READ_REQUEST", 13: "RDMA_READ_RESPONSE_FIRST",
    14: "RDMA_READ_RESPONSE_MIDDLE", 15: "RDMA_READ_RESPONSE_LAST", 16: "RDMA_READ_RESPONSE_ONLY",
    17: "ACKNOWLEDGE",
}
RESPONSES = {13, 14, 15, 16, 17}


def own_icrc(frame: bytes):
    """Returns (stored, computed, family) for an Ethernet/IP/UDP/BTH frame, or None."""
    if len(frame) < 14 or struct.unpack("!H", frame[12:14])[0] not in (0x0800, 0x86DD):
        return None
    eth_type = struct.unpack("!H", frame[12:14])[0]
    ip = bytearray(frame[14:])
    if eth_type == 0x0800:
        ihl = (ip[0] & 0x0F) * 4
        total = struct.unpack("!H", ip[2:4])[0]
        ip = ip[:total]
        ip[1] = 0xFF                  # TOS (DSCP, ECN)
        ip[8] = 0xFF                  # TTL
        ip[10:12] = b"\xff\xff"       # header checksum
        l4 = ihl
        family = 4
    else:
        plen = struct.unpack("!H", ip[4:6])[0]
        ip = ip[:40 + plen]
        ip[0] |= 0x0F                 # traffic class (high nibble) ...
        ip[1] = 0xFF                  # ... traffic class (low nibble) + flow label
        ip[2:4] = b"\xff\xff"         # flow label
        ip[7] = 0xFF                  # hop limit
        l4 = 40
        family = 6
    ip[l4 + 6:l4 + 8] = b"\xff\xff"   # UDP checksum
    ip[l4 + 8 + 4] = 0xFF             # BTH byte 4: FECN, BECN, reserved
    stored = bytes(ip[-4:])
    computed = struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(ip[:-4])) & 0xFFFFFFFF)
    return stored, computed, family


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    require_all = "--require-all-rc" in argv
    quiet = "--quiet" in argv
    if len(args) != 1:
        print(__doc__)
        return 2
    pkts = rdpcap(args[0])
    n = roce = own_ok = scapy_ok = scapy_n = 0
    fam = Counter()
    ops = Counter()
    psns = defaultdict(list)
    bad = []
    for i, p in enumerate(pkts, 1):
        n += 1
        if not (p.haslayer(UDP) and p[UDP].dport == 4791 and p.haslayer(BTH)):
            bad.append(f"#{i}: not RoCEv2 (UDP 4791 + BTH)")
            continue
        roce += 1
        raw = bytes(p)
        r = own_icrc(raw)
        if r is None:
            bad.append(f"#{i}: not Ethernet/IP")
            continue
        stored, computed, family = r
        fam[family] += 1
        if stored == computed:
            own_ok += 1
        else:
            bad.append(f"#{i}: ICRC {stored.hex()} != computed {computed.hex()}")
        if p.haslayer(IP):
            scapy_n += 1
            q = p.copy()
            q[BTH].icrc = None
            rebuilt = bytes(Ether(bytes(q)))
            sc = bytes(q[BTH])[-4:]
            if sc == stored and rebuilt[-4:] == stored:
                scapy_ok += 1
            else:
                bad.append(f"#{i}: scapy ICRC {sc.hex()} != packet {stored.hex()}")
        b = p[BTH]
        ops[b.opcode] += 1
        if b.opcode not in RESPONSES:
            psns[b.dqpn].append(b.psn)

    print(f"{args[0]}: {n} packets, {roce} RoCEv2 "
          f"({', '.join(f'IPv{k}: {v}' for k, v in sorted(fam.items()))})")
    print(f"  ICRC (own zlib implementation, IPv4+IPv6): {own_ok}/{roce} match")
    print(f"  ICRC (scapy.contrib.roce, IPv4 only):      {scapy_ok}/{scapy_n} match")
    if not quiet:
        print("  opcodes:")
        for op in sorted(ops):
            print(f"    {ops[op]:5d}  {op:3d} {RC_NAMES.get(op, '?')}")
        for qpn, ps in sorted(psns.items()):
            wrap = any(b < a for a, b in zip(ps, ps[1:]))
            print(f"  requests to QP 0x{qpn:06x}: {len(ps)} packets, PSN 0x{ps[0]:06x} .. 0x{ps[-1]:06x}"
                  f"{' (24-bit PSN wrap)' if wrap else ''}")
    if require_all:
        missing = [f"{op} {RC_NAMES[op]}" for op in range(18) if op not in ops]
        if missing:
            bad.append("missing opcodes: " + ", ".join(missing))
    for line in bad[:20]:
        print("  FAIL " + line)
    ok = not bad and roce > 0
    print("check_rxe_pcap: " + ("PASS" if ok else f"FAIL ({len(bad)} problem(s))"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
