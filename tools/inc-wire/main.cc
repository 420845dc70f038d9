// inc-wire: decode, build and verify RoCEv2 frames from the command line.
// The operator's window onto EPIC's wire layer (datapath/wire), and the
// bridge the scapy oracle test uses to compare our parser and builder with an
// independent implementation.
#include <pcap/pcap.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "datapath/wire/parser.h"
#include "tools/inc-wire/kv_format.h"

namespace {

namespace w = epic::wire;
using epic::tools::format_fields;

constexpr const char* kUsage = R"(usage: inc-wire COMMAND [options]

Decode, build and verify RoCEv2 frames (Ethernet [802.1Q] / IPv4|IPv6 / UDP 4791 /
BTH / extension headers / payload / ICRC).

commands:
  decode [--hex] [--no-verify] [FILE]
      Print every frame as one line of key=value fields (all header fields,
      payload as hex, icrc and icrc_ok), or `error=REASON` when the frame is
      not well-formed RoCEv2. FILE is a pcap (Ethernet link type), or with
      --hex a text file of one hex frame per line; '-' or no FILE reads stdin.
      --no-verify skips the IPv4 checksum and ICRC checks (fields are still
      printed, icrc_ok tells whether the ICRC matches).
  encode
      Read lines of key=value fields from stdin (the same keys `decode`
      prints; omitted fields take defaults) and print each frame as hex, with
      lengths, pad count, IPv4 checksum and ICRC computed.
  verify FILE
      Parse and ICRC-check every frame of a pcap; print a count per opcode and
      per rejection reason. Exit status 1 if any frame was rejected.

exit status: 0 success, 1 a frame or line was rejected, 2 usage or I/O error.
)";

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "inc-wire: %s\n(run 'inc-wire --help' for usage)\n", msg.c_str());
  return 2;
}

// Calls fn(frame, len) for each frame of a pcap; returns an error message or "".
template <typename Fn>
std::string for_each_pcap_frame(const std::string& path, Fn fn) {
  std::array<char, PCAP_ERRBUF_SIZE> err{};
  pcap_t* pc = pcap_open_offline(path == "-" ? "-" : path.c_str(), err.data());
  if (pc == nullptr) return std::string("cannot read pcap: ") + err.data();
  if (pcap_datalink(pc) != DLT_EN10MB) {
    pcap_close(pc);
    return path + ": link type is not Ethernet (capture on an Ethernet interface, not 'any')";
  }
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  int rc;
  while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
    if (h->caplen != h->len) {
      pcap_close(pc);
      return path + ": frames were truncated by the capture (snaplen); capture with -s 0";
    }
    fn(data, h->caplen);
  }
  std::string result = rc == PCAP_ERROR ? std::string(pcap_geterr(pc)) : "";
  pcap_close(pc);
  return result;
}

template <typename Fn>
std::string for_each_hex_frame(const std::string& path, Fn fn) {
  FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "r");
  if (f == nullptr) return "cannot open " + path + ": " + std::strerror(errno);
  std::string line;
  std::vector<uint8_t> frame;
  char buf[65536];
  size_t lineno = 0;
  std::string result;
  while (std::fgets(buf, sizeof buf, f) != nullptr) {
    ++lineno;
    line = buf;
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (line.empty()) continue;
    if (!epic::tools::from_hex(line, frame)) {
      result = "line " + std::to_string(lineno) + ": not an even-length hex string";
      break;
    }
    fn(frame.data(), frame.size());
  }
  if (f != stdin) std::fclose(f);
  return result;
}

int cmd_decode(const std::vector<std::string>& args) {
  bool hex = false;
  w::ParseOptions opts;
  std::string path = "-";
  for (const auto& a : args) {
    if (a == "--hex")
      hex = true;
    else if (a == "--no-verify")
      opts.verify_icrc = opts.verify_ipv4_checksum = false;
    else if (!a.empty() && a[0] == '-' && a != "-")
      return usage_error("decode: unknown option " + a);
    else
      path = a;
  }
  bool any_bad = false;
  size_t n = 0;
  auto emit = [&](const uint8_t* data, size_t len) {
    const auto r = w::parse(data, len, opts);
    std::printf("frame=%zu error=%s", n++, std::string(w::to_string(r.error)).c_str());
    if (r.ok()) std::printf(" %s", format_fields(r.view).c_str());
    std::printf("\n");
    any_bad |= !r.ok();
  };
  const std::string err = hex ? for_each_hex_frame(path, emit) : for_each_pcap_frame(path, emit);
  if (!err.empty()) return usage_error(err);
  return any_bad ? 1 : 0;
}

int cmd_encode() {
  std::string line;
  size_t lineno = 0;
  std::vector<uint8_t> out(70000);
  while (std::getline(std::cin, line)) {
    ++lineno;
    if (line.empty()) continue;
    const auto kv = epic::tools::parse_fields(line);
    if (!kv.error.empty()) {
      std::fprintf(stderr, "inc-wire encode: line %zu: %s\n", lineno, kv.error.c_str());
      return 1;
    }
    const size_t n = w::encode(kv.packet, out.data(), out.size());
    if (n == 0) {
      std::fprintf(stderr, "inc-wire encode: line %zu: frame larger than 65535 bytes\n", lineno);
      return 1;
    }
    std::printf("%s\n", epic::tools::to_hex(out.data(), n).c_str());
  }
  return 0;
}

int cmd_verify(const std::vector<std::string>& args) {
  if (args.size() != 1) return usage_error("verify: expected exactly one pcap file");
  std::map<std::string, size_t> by_opcode, by_error;
  size_t total = 0, bad = 0;
  const std::string err = for_each_pcap_frame(args[0], [&](const uint8_t* d, size_t len) {
    ++total;
    const auto r = w::parse(d, len);
    if (r.ok()) {
      ++by_opcode[std::string(r.view.op->name)];
    } else {
      ++bad;
      ++by_error[std::string(w::to_string(r.error))];
    }
  });
  if (!err.empty()) return usage_error(err);
  std::printf("%zu frames, %zu well-formed with a valid ICRC, %zu rejected\n", total, total - bad,
              bad);
  for (const auto& [name, n] : by_opcode) std::printf("  %-36s %zu\n", name.c_str(), n);
  for (const auto& [name, n] : by_error) std::printf("  rejected %-27s %zu\n", name.c_str(), n);
  return bad == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage_error("missing command");
  const std::string cmd = args[0];
  args.erase(args.begin());
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "decode") return cmd_decode(args);
  if (cmd == "encode") {
    if (!args.empty()) return usage_error("encode: takes no arguments (reads stdin)");
    return cmd_encode();
  }
  if (cmd == "verify") return cmd_verify(args);
  return usage_error("unknown command '" + cmd + "'");
}
