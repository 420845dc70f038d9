#!/usr/bin/python3
"""Independent-oracle test of EPIC's wire layer against scapy's RoCE layer.

Direction A: scapy (scapy.contrib.roce, Debian python3-scapy) builds random
RoCEv2 frames; `inc-wire decode --hex` must read every field identically and
report the ICRC scapy computed as valid.

Direction B: `inc-wire encode` builds random frames; scapy dissects them, must
see the intended fields, and rebuilding them with scapy (ICRC, IPv4 checksum,
IP and UDP lengths recomputed by scapy) must reproduce our bytes exactly.

scapy computes no ICRC for IPv6. IPv6 frames are checked against the ICRC as
the IBA spec defines it, written here in a few lines of Python with zlib; the
rxe IPv6 capture (tests/oracle/rxe_fixture_test.cc), when present, checks it
against Linux.

Run with Debian's /usr/bin/python3 (the one python3-scapy installs into).
"""
import argparse
import random
import struct
import subprocess
import sys
import zlib

import logging
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import Ether, Dot1Q, IP, IPv6, UDP, Raw, raw  # noqa: E402
from scapy.contrib.roce import BTH, AETH  # noqa: E402

# opcode -> (extension header layout, carries payload, position)
# layout items: name, length, wire format
RETH = [("reth_va", "Q"), ("reth_rkey", "I"), ("reth_dma_len", "I")]
AETH_F = [("aeth_syndrome", "B"), ("aeth_msn", "3")]
IMM = [("immdt", "I")]
DETH = [("deth_qkey", "I"), ("deth_pad", "B"), ("deth_src_qp", "3")]
ATOMIC = [("atomic_va", "Q"), ("atomic_rkey", "I"), ("atomic_swap_add", "Q"), ("atomic_compare", "Q")]
ATOMIC_ACK = [("atomic_ack_orig", "Q")]
IETH = [("ieth_rkey", "I")]

SEND_WRITE = {
    0x00: ([], "first"), 0x01: ([], "middle"), 0x02: ([], "last"), 0x03: (IMM, "last"),
    0x04: ([], "only"), 0x05: (IMM, "only"), 0x06: (RETH, "first"), 0x07: ([], "middle"),
    0x08: ([], "last"), 0x09: (IMM, "last"), 0x0A: (RETH, "only"), 0x0B: (RETH + IMM, "only"),
}
OPCODES = {}
for base in (0x00, 0x20):
    for code, (ext, pos) in SEND_WRITE.items():
        OPCODES[base + code] = (ext, True, pos)
OPCODES.update({
    0x0C: (RETH, False, "only"), 0x0D: (AETH_F, True, "first"), 0x0E: ([], True, "middle"),
    0x0F: (AETH_F, True, "last"), 0x10: (AETH_F, True, "only"), 0x11: (AETH_F, False, None),
    0x12: (AETH_F + ATOMIC_ACK, False, None), 0x13: (ATOMIC, False, "only"),
    0x14: (ATOMIC, False, "only"), 0x16: (IETH, True, "last"), 0x17: (IETH, True, "only"),
    0x64: (DETH, True, "only"), 0x65: (DETH + IMM, True, "only"),
    0x81: ([("cnp_reserved", "16")], False, None),
})

BITS = {"Q": 64, "I": 32, "B": 8, "3": 24}


def pack_ext(fields, values):
    out = b""
    for name, fmt in fields:
        v = values[name]
        if fmt == "3":
            out += struct.pack(">I", v)[1:]
        elif fmt == "16":
            out += v
        else:
            out += struct.pack(">" + fmt, v)
    return out


def spec_icrc(frame, l3_off, ipv6):
    """ICRC per IBA A17.3.3, independent of scapy and of the C++ code."""
    b = bytearray(frame[l3_off:-4])
    if ipv6:
        b[0] |= 0x0F
        b[1:4] = b"\xff\xff\xff"
        b[7] = 0xFF
        udp = 40
    else:
        b[1] = 0xFF
        b[8] = 0xFF
        b[10:12] = b"\xff\xff"
        udp = 20
    b[udp + 6:udp + 8] = b"\xff\xff"
    b[udp + 8 + 4] = 0xFF
    return zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xFFFFFFFF


def rand_psn(rng):
    r = rng.random()
    if r < 0.3:
        return rng.randrange(0xFFFFF0, 0x1000000)
    if r < 0.5:
        return rng.randrange(0, 0x10)
    return rng.randrange(0, 1 << 24)


def rand_payload_len(rng, pos):
    r = rng.random()
    if pos in ("first", "middle"):  # full path-MTU packets: a multiple of 4, no pad
        return rng.choice([256, 512, 1024, 2048, 4096]) if r < 0.5 else 4 * rng.randrange(1, 1025)
    if r < 0.15:
        return rng.choice([0, 1, 2, 3, 4, 4093, 4094, 4095, 4096])
    if r < 0.5:
        return rng.randrange(0, 65)
    return rng.randrange(0, 4097)


def random_fields(rng):
    opcode = rng.choice(sorted(OPCODES))
    ext, has_payload, pos = OPCODES[opcode]
    f = {
        "opcode": opcode,
        "eth_dst": "02:%02x:%02x:%02x:%02x:%02x" % tuple(rng.randrange(256) for _ in range(5)),
        "eth_src": "02:%02x:%02x:%02x:%02x:%02x" % tuple(rng.randrange(256) for _ in range(5)),
        "ipv6": rng.random() < 0.15,
        "tos": rng.randrange(256),
        "ttl": rng.randrange(1, 256),
        "ipv4_id": rng.randrange(1 << 16),
        "ipv4_flags_frag": rng.choice([0, 0x4000]),
        "flow_label": rng.randrange(1 << 20),
        "udp_sport": rng.randrange(1 << 16),
        "udp_checksum": rng.choice([0, 0, rng.randrange(1 << 16)]),
        "se": rng.randrange(2), "migreq": rng.randrange(2), "pkey": rng.randrange(1 << 16),
        "fecn": rng.randrange(2), "becn": rng.randrange(2),
        "resv6": rng.randrange(64) if rng.random() < 0.1 else 0,
        "dqpn": rng.randrange(1 << 24), "ackreq": rng.randrange(2),
        "resv7": rng.randrange(128) if rng.random() < 0.1 else 0,
        "psn": rand_psn(rng),
    }
    if rng.random() < 0.2:
        f["vlan_tci"] = rng.randrange(1 << 16)
    if f["ipv6"]:
        f["ip_src"] = "fd00:%x::%x" % (rng.randrange(1 << 16), rng.randrange(1, 1 << 16))
        f["ip_dst"] = "fd00:%x::%x" % (rng.randrange(1 << 16), rng.randrange(1, 1 << 16))
    else:
        f["ip_src"] = "10.%d.%d.%d" % (rng.randrange(256), rng.randrange(256), rng.randrange(1, 255))
        f["ip_dst"] = "10.%d.%d.%d" % (rng.randrange(256), rng.randrange(256), rng.randrange(1, 255))
    for name, fmt in ext:
        if fmt == "16":
            f[name] = bytes(rng.randrange(256) for _ in range(16)) if rng.random() < 0.2 else bytes(16)
        elif name == "deth_pad":
            f[name] = 0
        else:
            f[name] = rng.randrange(1 << BITS[fmt])
    n = rand_payload_len(rng, pos) if has_payload else 0
    f["payload"] = bytes(rng.randrange(256) for _ in range(n))
    f["padcount"] = (4 - n % 4) % 4
    return f


def scapy_frame(f):
    """Build the frame with scapy; scapy computes lengths, IPv4 checksum and (IPv4) ICRC."""
    ext, _, _ = OPCODES[f["opcode"]]
    l2 = Ether(dst=f["eth_dst"], src=f["eth_src"])
    if "vlan_tci" in f:
        t = f["vlan_tci"]
        l2 = l2 / Dot1Q(prio=t >> 13, id=(t >> 12) & 1, vlan=t & 0xFFF)
    if f["ipv6"]:
        l3 = IPv6(src=f["ip_src"], dst=f["ip_dst"], tc=f["tos"], fl=f["flow_label"], hlim=f["ttl"])
    else:
        l3 = IP(src=f["ip_src"], dst=f["ip_dst"], tos=f["tos"], ttl=f["ttl"], id=f["ipv4_id"],
                flags=f["ipv4_flags_frag"] >> 13, frag=f["ipv4_flags_frag"] & 0x1FFF)
    bth = BTH(opcode=f["opcode"], solicited=f["se"], migreq=f["migreq"], padcount=f["padcount"],
              pkey=f["pkey"], fecn=f["fecn"], becn=f["becn"], resv6=f["resv6"], dqpn=f["dqpn"],
              ackreq=f["ackreq"], resv7=f["resv7"], psn=f["psn"])
    body = pack_ext(ext, f) + f["payload"] + b"\x00" * f["padcount"]
    if f["opcode"] == 0x11:  # scapy has an AETH layer: use it for ACKs
        rest = AETH(syndrome=f["aeth_syndrome"], msn=f["aeth_msn"])
    else:
        rest = Raw(body) if body else None
    pkt = l2 / l3 / UDP(sport=f["udp_sport"], dport=4791, chksum=f["udp_checksum"]) / bth
    if rest is not None:
        pkt = pkt / rest
    frame = bytearray(raw(pkt))
    if f["ipv6"]:  # scapy leaves the ICRC at 0 for IPv6
        l3_off = 14 + (4 if "vlan_tci" in f else 0)
        frame[-4:] = struct.pack("<I", spec_icrc(bytes(frame), l3_off, True))
    return bytes(frame)


def kv_line(f):
    """The same fields as inc-wire encode input."""
    out = []
    for k in ("eth_dst", "eth_src", "vlan_tci", "ip_src", "ip_dst", "tos", "ttl", "udp_sport",
              "udp_checksum", "opcode", "se", "migreq", "pkey", "fecn", "becn", "resv6", "dqpn",
              "ackreq", "resv7", "psn"):
        if k in f:
            out.append("%s=%s" % (k, f[k]))
    if f["ipv6"]:
        out.append("flow_label=%d" % f["flow_label"])
    else:
        out += ["ipv4_id=%d" % f["ipv4_id"], "ipv4_flags_frag=%d" % f["ipv4_flags_frag"]]
    ext, _, _ = OPCODES[f["opcode"]]
    for name, fmt in ext:
        if fmt != "16" and name != "deth_pad":
            out.append("%s=%d" % (name, f[name]))
    out.append("payload=" + f["payload"].hex())
    return " ".join(out)


def run_tool(tool, args, stdin_text):
    p = subprocess.run([tool] + args, input=stdin_text, capture_output=True, text=True, timeout=300)
    return p


def parse_kv(line):
    return dict(tok.split("=", 1) for tok in line.split())


def expect_fields(f):
    """What inc-wire decode must print for frame fields f."""
    e = {k: str(v) for k, v in f.items()
         if k in ("eth_dst", "eth_src", "vlan_tci", "tos", "ttl", "udp_sport", "udp_checksum",
                  "opcode", "se", "migreq", "padcount", "pkey", "fecn", "becn", "resv6", "dqpn",
                  "ackreq", "resv7", "psn")}
    e["ip_version"] = "6" if f["ipv6"] else "4"
    if f["ipv6"]:
        import ipaddress
        e["ip_src"] = str(ipaddress.IPv6Address(f["ip_src"]))
        e["ip_dst"] = str(ipaddress.IPv6Address(f["ip_dst"]))
        e["flow_label"] = str(f["flow_label"])
    else:
        e["ip_src"], e["ip_dst"] = f["ip_src"], f["ip_dst"]
        e["ipv4_id"], e["ipv4_flags_frag"] = str(f["ipv4_id"]), str(f["ipv4_flags_frag"])
    ext, _, _ = OPCODES[f["opcode"]]
    for name, fmt in ext:
        if fmt != "16" and name != "deth_pad":
            e[name] = str(f[name])
    e["payload_len"] = str(len(f["payload"]))
    e["payload"] = f["payload"].hex()
    e["tver"] = "0"
    e["udp_dport"] = "4791"
    return e


def direction_a(tool, rng, count):
    """scapy builds, inc-wire parses."""
    cases = [random_fields(rng) for _ in range(count)]
    frames = [scapy_frame(f) for f in cases]
    p = run_tool(tool, ["decode", "--hex"], "\n".join(fr.hex() for fr in frames) + "\n")
    lines = p.stdout.splitlines()
    if len(lines) != count:
        return ["decode printed %d lines for %d frames; stderr: %s" % (len(lines), count, p.stderr)]
    failures = []
    for i, (f, fr, line) in enumerate(zip(cases, frames, lines)):
        got = parse_kv(line)
        if got.get("error") != "ok":
            failures.append("A%d opcode 0x%02x: rejected %s: %s" % (i, f["opcode"], got.get("error"), fr.hex()))
            continue
        want = expect_fields(f)
        want["icrc"] = str(struct.unpack("<I", fr[-4:])[0])
        want["icrc_ok"] = "1"
        bad = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
        if bad:
            failures.append("A%d opcode 0x%02x: field mismatch (ours, scapy) %s" % (i, f["opcode"], bad))
    return failures


def dissect(frame):
    """Ether(frame), with the UDP payload read as BTH even when scapy guesses
    another layer (it does when the source port is also 4791)."""
    pkt = Ether(frame)
    if BTH not in pkt and UDP in pkt:
        pkt[UDP].decode_payload_as(BTH)
    return pkt


def direction_b(tool, rng, count):
    """inc-wire builds, scapy dissects and rebuilds."""
    cases = [random_fields(rng) for _ in range(count)]
    p = run_tool(tool, ["encode"], "\n".join(kv_line(f) for f in cases) + "\n")
    if p.returncode != 0:
        return ["encode failed: " + p.stderr]
    lines = p.stdout.splitlines()
    if len(lines) != count:
        return ["encode printed %d lines for %d cases" % (len(lines), count)]
    failures = []
    for i, (f, line) in enumerate(zip(cases, lines)):
        ours = bytes.fromhex(line)
        pkt = dissect(ours)
        bth = pkt[BTH] if BTH in pkt else None
        if bth is None:
            failures.append("B%d: scapy found no BTH in %s" % (i, line))
            continue
        want = {"opcode": f["opcode"], "dqpn": f["dqpn"], "psn": f["psn"], "pkey": f["pkey"],
                "padcount": f["padcount"], "ackreq": f["ackreq"], "fecn": f["fecn"],
                "becn": f["becn"], "solicited": f["se"], "migreq": f["migreq"]}
        got = {k: getattr(bth, k) for k in want}
        if got != want:
            failures.append("B%d: scapy reads BTH %s, intended %s" % (i, got, want))
        if f["opcode"] == 0x11 and (pkt[AETH].syndrome, pkt[AETH].msn) != (f["aeth_syndrome"], f["aeth_msn"]):
            failures.append("B%d: scapy reads AETH %s" % (i, pkt[AETH].summary()))
        if f["ipv6"]:
            l3_off = 14 + (4 if "vlan_tci" in f else 0)
            ip = pkt[IPv6]
            if (ip.tc, ip.fl, ip.hlim, ip.src, ip.dst) != (f["tos"], f["flow_label"], f["ttl"],
                                                             str(__import__("ipaddress").IPv6Address(f["ip_src"])),
                                                             str(__import__("ipaddress").IPv6Address(f["ip_dst"]))):
                failures.append("B%d: scapy reads IPv6 %s" % (i, ip.summary()))
            if struct.unpack("<I", ours[-4:])[0] != spec_icrc(ours, l3_off, True):
                failures.append("B%d: IPv6 ICRC differs from the spec computation" % i)
            continue
        # IPv4: let scapy recompute ICRC, IPv4 checksum and both lengths; bytes must not change.
        again = dissect(ours)
        again[BTH].icrc = None
        del again[IP].chksum
        del again[IP].len
        del again[UDP].len
        rebuilt = raw(again)
        if rebuilt != ours:
            failures.append("B%d opcode 0x%02x: scapy rebuild differs:\n ours  %s\n scapy %s"
                            % (i, f["opcode"], ours.hex(), rebuilt.hex()))
    return failures


def rxe_capture(tool, path):
    """Anchor both oracles to Linux: scapy must compute the ICRC rxe sent, and
    inc-wire must print the same ICRC and accept every frame."""
    from scapy.utils import rdpcap
    frames = [bytes(p) for p in rdpcap(path)]
    failures = []
    for i, fr in enumerate(frames):
        pkt = Ether(fr)
        if IP not in pkt or BTH not in pkt:
            failures.append("C%d: scapy does not see IPv4/BTH" % i)
            continue
        again = Ether(fr)
        again[BTH].icrc = None
        if raw(again) != fr:
            failures.append("C%d: scapy's ICRC differs from the one Linux rxe sent" % i)
    p = run_tool(tool, ["decode", path], "")
    lines = p.stdout.splitlines()
    bad = [l for l in lines if "error=ok" not in l or "icrc_ok=1" not in l]
    if len(lines) != len(frames) or bad:
        failures.append("inc-wire decode %s: %d lines for %d frames, %d not ok: %s"
                        % (path, len(lines), len(frames), len(bad), bad[:2]))
    return len(frames), failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inc-wire", required=True, help="path to the inc-wire binary")
    ap.add_argument("--count", type=int, default=2000, help="random frames per direction")
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--pcap", help="an IPv4 capture from Linux rxe to check both oracles against")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    fa = direction_a(a.inc_wire, rng, a.count)
    fb = direction_b(a.inc_wire, rng, a.count)
    nc, fc = rxe_capture(a.inc_wire, a.pcap) if a.pcap else (0, [])
    for f in (fa + fb + fc)[:20]:
        print("FAIL", f)
    print("scapy -> inc-wire: %d frames, %d mismatches" % (a.count, len(fa)))
    print("inc-wire -> scapy: %d frames, %d mismatches" % (a.count, len(fb)))
    if a.pcap:
        print("Linux rxe capture %s: %d frames, %d mismatches" % (a.pcap, nc, len(fc)))
    total = 2 * a.count + nc
    failed = len(fa) + len(fb) + len(fc)
    print("%d passed, %d failed" % (total - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
