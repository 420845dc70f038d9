// wire_bench: ICRC and parser throughput on one core, next to their physical
// baselines measured in the same run (interleaved, median of N repetitions):
//   - ICRC GB/s at 256 B, 1 KB and 4 KB frames vs. plain CRC-32 of the same
//     bytes by ISA-L (folding/PCLMULQDQ) and by zlib, and vs. memcpy;
//   - parse+verify (IPv4 checksum and ICRC) frames/s vs. parse without ICRC.
// Output: JSON lines (tests/bench/README.md). --quick for a CI smoke run.
#include <isa-l/crc.h>
#include <zlib.h>

#include <cstring>
#include <string>
#include <vector>

#include "datapath/wire/builder.h"
#include "datapath/wire/icrc.h"
#include "datapath/wire/parser.h"
#include "tests/bench/bench_util.h"

namespace {

using namespace epic;
using bench::emit;
using bench::keep;
using bench::summarize;
using bench::time_s;

constexpr int kPool = 256;  // frames cycled through per size (fits in L2 up to 1 KB)

std::vector<std::vector<uint8_t>> make_frames(size_t frame_size) {
  const size_t headers = 14 + 20 + 8 + 12 + 4;
  std::vector<std::vector<uint8_t>> frames;
  for (int i = 0; i < kPool; ++i) {
    frames.push_back(wire::PacketBuilder()
                         .eth({2, 0, 0, 0, 0, 2}, {2, 0, 0, 0, 0, 1})
                         .ipv4(0x0A000001, 0x0A000002)
                         .bth(wire::op::kSendLast, 0x11, static_cast<uint32_t>(i))
                         .payload_pattern(frame_size - headers, static_cast<uint8_t>(i))
                         .build());
  }
  return frames;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int reps = 7;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      quick = true;
      reps = 3;
    } else if (a == "--json") {
      // JSON lines are the only output format.
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(3, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr,
                   "usage: wire_bench [--json] [--quick] [--reps N]\n"
                   "ICRC and parser throughput on one core with same-run baselines; JSON lines.\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  const double target_bytes = quick ? 4e6 : 256e6;  // bytes per repetition

  for (size_t size : {256, 1024, 4096}) {
    const auto frames = make_frames(size);
    const uint16_t l3 = 14;
    const auto icrc_off = static_cast<uint16_t>(size - 4);
    const size_t covered = icrc_off - l3;  // bytes the ICRC and the plain CRCs run over
    const int iters = static_cast<int>(target_bytes / static_cast<double>(covered) / kPool) + 1;
    std::vector<uint8_t> dst(size);
    std::vector<double> icrc_v, isal_v, zlib_v, copy_v;
    auto gbps = [&](double s) { return static_cast<double>(covered) * iters * kPool / s / 1e9; };
    for (int r = -1; r < reps; ++r) {  // r == -1 is the warm-up
      const double t_icrc = time_s([&] {
        for (int it = 0; it < iters; ++it)
          for (const auto& f : frames)
            keep(wire::compute_icrc(f.data(), wire::IpVersion::kV4, l3, icrc_off));
      });
      const double t_isal = time_s([&] {
        for (int it = 0; it < iters; ++it)
          for (const auto& f : frames) keep(crc32_gzip_refl(0, f.data() + l3, covered));
      });
      const double t_zlib = time_s([&] {
        for (int it = 0; it < iters; ++it)
          for (const auto& f : frames) keep(crc32(0, f.data() + l3, static_cast<uInt>(covered)));
      });
      const double t_copy = time_s([&] {
        for (int it = 0; it < iters; ++it)
          for (const auto& f : frames) {
            std::memcpy(dst.data(), f.data() + l3, covered);
            keep(dst[0]);
          }
      });
      if (r < 0) continue;
      icrc_v.push_back(gbps(t_icrc));
      isal_v.push_back(gbps(t_isal));
      zlib_v.push_back(gbps(t_zlib));
      copy_v.push_back(gbps(t_copy));
    }
    const std::string sz = "\"frame_bytes\":" + std::to_string(size) +
                           ",\"crc_bytes\":" + std::to_string(covered) + ",";
    const auto icrc = summarize(icrc_v), isal = summarize(isal_v), zl = summarize(zlib_v),
               cp = summarize(copy_v);
    emit("wire", "icrc", sz, icrc, "GB/s", reps);
    emit("wire", "crc32_isal", sz, isal, "GB/s", reps);
    emit("wire", "crc32_zlib", sz, zl, "GB/s", reps);
    emit("wire", "memcpy", sz, cp, "GB/s", reps);
    const bool isal_fastest = isal.median >= zl.median;
    const double fastest = isal_fastest ? isal.median : zl.median;
    std::printf(
        "{\"bench\":\"wire\",\"metric\":\"icrc_vs_fastest_crc32\",%s\"fastest\":\"%s\","
        "\"ratio\":%.3f,\"note\":\"ICRC time / plain CRC-32 time on the same bytes; <= 2 "
        "required\"}\n",
        sz.c_str(), isal_fastest ? "crc32_isal" : "crc32_zlib", fastest / icrc.median);
  }

  // Parser: frames/s with full verification vs. without the ICRC pass.
  for (size_t size : {256, 1024}) {
    const auto frames = make_frames(size);
    const int iters = quick ? 200 : 20000;
    std::vector<double> full_v, noicrc_v;
    const wire::ParseOptions no_icrc{.verify_icrc = false};
    for (int r = -1; r < reps; ++r) {
      size_t ok = 0;
      const double t_full = time_s([&] {
        for (int it = 0; it < iters; ++it)
          for (const auto& f : frames) ok += wire::parse(f.data(), f.size()).ok();
      });
      const double t_no = time_s([&] {
        for (int it = 0; it < iters; ++it)
          for (const auto& f : frames) ok += wire::parse(f.data(), f.size(), no_icrc).ok();
      });
      if (ok != 2ull * iters * kPool) {
        std::fprintf(stderr, "wire_bench: parser rejected a benchmark frame\n");
        return 1;
      }
      if (r < 0) continue;
      full_v.push_back(iters * kPool / t_full / 1e6);
      noicrc_v.push_back(iters * kPool / t_no / 1e6);
    }
    const std::string sz = "\"frame_bytes\":" + std::to_string(size) + ",";
    emit("wire", "parse_verify", sz, summarize(full_v), "Mpps", reps);
    emit("wire", "parse_no_icrc", sz, summarize(noicrc_v), "Mpps", reps);
  }
  return 0;
}
