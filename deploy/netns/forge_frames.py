"""forge_frames.py — the frame specifications forge_roce.py sends (tests/integration/forge_roce.py):
one dict per forged RoCEv2 frame, and the bytes of EPIC's announcing control message.

Shared by the namespace lab's spoofing test (tests/integration/incd_spoofing.py) and the qemu
lab's (deploy/lab/incd_rxe_forge.py). The protocol numbers here are the specifications' (IBTA
opcodes and AETH syndromes) and EPIC's control message layout (proto/vocab/collective.cc).
"""
import struct

CONTROL_IMM = 0x45504943  # proto/vocab/collective.h kControlImm ("EPIC")
SEND_FIRST, SEND_MIDDLE, SEND_ONLY, SEND_ONLY_IMM, ACK = 0x00, 0x01, 0x04, 0x05, 0x11
NAK_SEQ, ACK_CREDITS = 0x60, 0x1F  # AETH syndromes: PSN sequence error NAK; ACK, 31 credits


def control_payload(type_code, dtype_code, op_code, root, count):
    """proto/vocab/collective.cc encode_control: magic "EPC1", codes, root, count (LE)."""
    return (struct.pack("<I", 0x31435045) + bytes([type_code, dtype_code, op_code, 0]) +
            struct.pack("<HH", root, 0) + struct.pack("<I", count)).hex()


def frame(kind, src_mac, src_ip, dst_mac, dst_ip, dqpn, opcode, psn, sport=0xC000, **extra):
    """One frame of forge_roce.py's SPEC_JSON; `extra`: imm, aeth, payload_len, fill, payload_hex."""
    f = {"kind": kind, "eth_src": src_mac, "eth_dst": dst_mac, "ip_src": src_ip, "ip_dst": dst_ip,
         "udp_sport": sport, "opcode": opcode, "dqpn": dqpn, "psn": psn}
    f.update(extra)
    return f
