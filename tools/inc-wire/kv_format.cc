#include "tools/inc-wire/kv_format.h"

#include <charconv>
#include <limits>
#include <sstream>

#include "datapath/wire/icrc.h"
#include "proto/vocab/addr.h"
#include "proto/vocab/psn.h"

namespace epic::tools {
namespace w = epic::wire;

std::string to_hex(const uint8_t* data, size_t len) {
  static const char* kDigits = "0123456789abcdef";
  std::string s(len * 2, '0');
  for (size_t i = 0; i < len; ++i) {
    s[2 * i] = kDigits[data[i] >> 4];
    s[2 * i + 1] = kDigits[data[i] & 0xF];
  }
  return s;
}

bool from_hex(std::string_view hex, std::vector<uint8_t>& out) {
  if (hex.size() % 2 != 0) return false;
  out.clear();
  for (size_t i = 0; i < hex.size(); i += 2) {
    unsigned v = 0;
    auto r = std::from_chars(hex.data() + i, hex.data() + i + 2, v, 16);
    if (r.ec != std::errc() || r.ptr != hex.data() + i + 2) return false;
    out.push_back(static_cast<uint8_t>(v));
  }
  return true;
}

std::string format_fields(const w::PacketView& v) {
  const w::RocePacket p = w::decode(v);
  const w::OpcodeInfo& op = *v.op;
  std::ostringstream o;
  o << "eth_dst=" << vocab::format_mac(p.eth_dst) << " eth_src=" << vocab::format_mac(p.eth_src);
  if (p.has_vlan) o << " vlan_tci=" << p.vlan_tci;
  if (p.ip_version == w::IpVersion::kV4) {
    o << " ip_version=4 ip_src=" << vocab::format_ipv4(p.ipv4_src)
      << " ip_dst=" << vocab::format_ipv4(p.ipv4_dst) << " ipv4_id=" << p.ipv4_id
      << " ipv4_flags_frag=" << p.ipv4_flags_frag;
  } else {
    o << " ip_version=6 ip_src=" << vocab::format_ipv6(p.ipv6_src)
      << " ip_dst=" << vocab::format_ipv6(p.ipv6_dst) << " flow_label=" << p.ipv6_flow_label;
  }
  o << " tos=" << int{p.tos} << " ttl=" << int{p.ttl} << " udp_sport=" << p.udp_src_port
    << " udp_dport=" << p.udp_dst_port << " udp_checksum=" << p.udp_checksum
    << " opcode=" << int{p.opcode} << " opname=" << op.name << " se=" << p.solicited
    << " migreq=" << p.mig_req << " padcount=" << int{v.pad_count()}
    << " tver=" << int{p.transport_version} << " pkey=" << p.pkey << " fecn=" << p.fecn
    << " becn=" << p.becn << " resv6=" << int{p.bth_reserved6} << " dqpn=" << p.dest_qp
    << " ackreq=" << p.ack_req << " resv7=" << int{p.bth_reserved7} << " psn=" << p.psn;
  if (op.has(w::kExtDeth)) o << " deth_qkey=" << p.deth.qkey << " deth_src_qp=" << p.deth.src_qp;
  if (op.has(w::kExtReth)) {
    o << " reth_va=" << p.reth.va << " reth_rkey=" << p.reth.rkey
      << " reth_dma_len=" << p.reth.dma_len;
  }
  if (op.has(w::kExtAtomicEth)) {
    o << " atomic_va=" << p.atomic_eth.va << " atomic_rkey=" << p.atomic_eth.rkey
      << " atomic_swap_add=" << p.atomic_eth.swap_add << " atomic_compare=" << p.atomic_eth.compare;
  }
  if (op.has(w::kExtAeth)) {
    o << " aeth_syndrome=" << int{p.aeth.syndrome} << " aeth_msn=" << p.aeth.msn;
  }
  if (op.has(w::kExtAtomicAckEth)) o << " atomic_ack_orig=" << p.atomic_ack_orig;
  if (op.has(w::kExtImmDt)) o << " immdt=" << p.immdt;
  if (op.has(w::kExtIeth)) o << " ieth_rkey=" << p.ieth_rkey;
  o << " payload_len=" << p.payload.size()
    << " payload=" << to_hex(p.payload.data(), p.payload.size());
  if (v.pad_count() > 0) o << " pad_bytes=" << to_hex(p.pad_bytes.data(), v.pad_count());
  o << " icrc=" << v.icrc() << " icrc_ok=" << (w::compute_icrc(v) == v.icrc());
  return o.str();
}

namespace {

template <typename T>
bool parse_int(std::string_view s, T& out) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    base = 16;
  }
  uint64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return false;
  if (v > static_cast<uint64_t>(std::numeric_limits<T>::max())) return false;
  out = static_cast<T>(v);
  return true;
}

bool parse_bool(std::string_view s, bool& out) {
  if (s == "1" || s == "true") return out = true, true;
  if (s == "0" || s == "false") return out = false, true;
  return false;
}

}  // namespace

KvParse parse_fields(std::string_view line) {
  KvParse r;
  w::RocePacket& p = r.packet;
  std::istringstream in{std::string(line)};
  std::string tok;
  while (in >> tok) {
    const auto eq = tok.find('=');
    if (eq == std::string::npos) return {p, "expected key=value, got '" + tok + "'"};
    const std::string key = tok.substr(0, eq);
    const std::string_view val = std::string_view(tok).substr(eq + 1);
    bool ok = true;
    if (key == "eth_dst" || key == "eth_src") {
      auto m = vocab::parse_mac(val);
      ok = m.has_value();
      if (ok) (key == "eth_dst" ? p.eth_dst : p.eth_src) = *m;
    } else if (key == "vlan_tci") {
      p.has_vlan = true;
      ok = parse_int(val, p.vlan_tci);
    } else if (key == "ip_version") {
      uint8_t ver = 0;
      ok = parse_int(val, ver) && (ver == 4 || ver == 6);
      p.ip_version = ver == 6 ? w::IpVersion::kV6 : w::IpVersion::kV4;
    } else if (key == "ip_src" || key == "ip_dst") {
      const bool src = key == "ip_src";
      if (auto a4 = vocab::parse_ipv4(val)) {
        (src ? p.ipv4_src : p.ipv4_dst) = *a4;
      } else if (auto a6 = vocab::parse_ipv6(val)) {
        (src ? p.ipv6_src : p.ipv6_dst) = *a6;
        p.ip_version = w::IpVersion::kV6;
      } else {
        ok = false;
      }
    } else if (key == "ipv4_id") {
      ok = parse_int(val, p.ipv4_id);
    } else if (key == "ipv4_flags_frag") {
      ok = parse_int(val, p.ipv4_flags_frag);
    } else if (key == "flow_label") {
      ok = parse_int(val, p.ipv6_flow_label) && p.ipv6_flow_label <= 0xFFFFF;
    } else if (key == "tos") {
      ok = parse_int(val, p.tos);
    } else if (key == "ttl") {
      ok = parse_int(val, p.ttl);
    } else if (key == "udp_sport") {
      ok = parse_int(val, p.udp_src_port);
    } else if (key == "udp_dport") {
      ok = parse_int(val, p.udp_dst_port);
    } else if (key == "udp_checksum") {
      ok = parse_int(val, p.udp_checksum);
    } else if (key == "opcode") {
      ok = parse_int(val, p.opcode);
    } else if (key == "se") {
      ok = parse_bool(val, p.solicited);
    } else if (key == "migreq") {
      ok = parse_bool(val, p.mig_req);
    } else if (key == "padcount") {
      uint8_t pad = 0;
      ok = parse_int(val, pad) && pad <= 3;
      p.pad_count = pad;
    } else if (key == "tver") {
      ok = parse_int(val, p.transport_version) && p.transport_version <= 0xF;
    } else if (key == "pkey") {
      ok = parse_int(val, p.pkey);
    } else if (key == "fecn") {
      ok = parse_bool(val, p.fecn);
    } else if (key == "becn") {
      ok = parse_bool(val, p.becn);
    } else if (key == "resv6") {
      ok = parse_int(val, p.bth_reserved6) && p.bth_reserved6 <= 0x3F;
    } else if (key == "dqpn") {
      ok = parse_int(val, p.dest_qp) && p.dest_qp <= vocab::kQpnMask;
    } else if (key == "ackreq") {
      ok = parse_bool(val, p.ack_req);
    } else if (key == "resv7") {
      ok = parse_int(val, p.bth_reserved7) && p.bth_reserved7 <= 0x7F;
    } else if (key == "psn") {
      ok = parse_int(val, p.psn) && p.psn <= vocab::kPsnMask;
    } else if (key == "deth_qkey") {
      ok = parse_int(val, p.deth.qkey);
    } else if (key == "deth_src_qp") {
      ok = parse_int(val, p.deth.src_qp) && p.deth.src_qp <= vocab::kQpnMask;
    } else if (key == "reth_va") {
      ok = parse_int(val, p.reth.va);
    } else if (key == "reth_rkey") {
      ok = parse_int(val, p.reth.rkey);
    } else if (key == "reth_dma_len") {
      ok = parse_int(val, p.reth.dma_len);
    } else if (key == "atomic_va") {
      ok = parse_int(val, p.atomic_eth.va);
    } else if (key == "atomic_rkey") {
      ok = parse_int(val, p.atomic_eth.rkey);
    } else if (key == "atomic_swap_add") {
      ok = parse_int(val, p.atomic_eth.swap_add);
    } else if (key == "atomic_compare") {
      ok = parse_int(val, p.atomic_eth.compare);
    } else if (key == "aeth_syndrome") {
      ok = parse_int(val, p.aeth.syndrome);
    } else if (key == "aeth_msn") {
      ok = parse_int(val, p.aeth.msn) && p.aeth.msn <= vocab::kPsnMask;
    } else if (key == "atomic_ack_orig") {
      ok = parse_int(val, p.atomic_ack_orig);
    } else if (key == "immdt") {
      ok = parse_int(val, p.immdt);
    } else if (key == "ieth_rkey") {
      ok = parse_int(val, p.ieth_rkey);
    } else if (key == "payload") {
      ok = from_hex(val, p.payload);
    } else if (key == "pad_bytes") {
      std::vector<uint8_t> pad;
      ok = from_hex(val, pad) && pad.size() <= p.pad_bytes.size();
      std::copy(pad.begin(), pad.end(), p.pad_bytes.begin());
    } else if (key == "payload_len" || key == "opname" || key == "icrc" || key == "icrc_ok") {
      // Derived on output; accepted and ignored on input so decode output can be re-encoded.
    } else {
      return {p, "unknown field '" + key + "'"};
    }
    if (!ok) return {p, "bad value for " + key + ": '" + std::string(val) + "'"};
  }
  return r;
}

}  // namespace epic::tools
