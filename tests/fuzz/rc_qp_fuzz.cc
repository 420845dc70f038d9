// libFuzzer target for the RC endpoint's receive path: any sequence of
// well-formed RoCEv2 frames (the parser accepts; header fields, opcodes, PSNs,
// lengths and RETHs are the fuzzer's) is fed to a QP that has sends
// outstanding, receives posted and a registered region. The QP must not crash
// or touch memory it does not own (ASan), must only emit frames that parse,
// and must account for every received packet in exactly one counter.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "datapath/wire/parser.h"
#include "host/transport/soft/rc_qp.h"

namespace w = epic::wire;
namespace s = epic::soft;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  s::QpConfig c;
  c.qpn = 0x12;
  c.remote_qpn = 0x11;
  c.sq_psn = 0xFFFFF0u + data[0] % 16;  // near the wrap
  c.rq_psn = 0xFFFFF0u + data[1] % 16;
  c.pmtu = static_cast<uint16_t>(256u << (data[2] % 5));
  c.max_outstanding = 1 + data[3] % 32;
  s::RcQp qp(c);
  std::vector<uint8_t> out(8192), mr(8192), rbuf(16384), src(20000, 0x5A);
  qp.register_mr({0x1000, mr.data(), mr.size(), 0x77});
  for (uint64_t i = 0; i < 4; ++i) qp.post_recv({i, rbuf.data() + i * 4096, 4096});
  qp.post_send({1, s::SendOp::kSend, src.data(), 5000});
  qp.post_send({2, s::SendOp::kRdmaWriteWithImm, src.data(), 300, 9, 0x2000, 0x55});

  // Input: frames as [len_hi, len_lo, bytes...].
  size_t off = 4;
  uint64_t now = 0;
  const w::ParseOptions lenient{.verify_ipv4_checksum = false, .verify_icrc = false};
  while (off + 2 <= size) {
    const size_t len = (size_t{data[off]} << 8 | data[off + 1]) % 4200;
    off += 2;
    const size_t n = len < size - off ? len : size - off;
    const auto r = w::parse(data + off, n, lenient);
    off += n;
    now += 1000;
    if (r.ok()) qp.receive(r.view, now);
    qp.on_timer(now);
    while (auto f = qp.pop_tx(now)) {
      if (!w::parse(f->data(), f->size()).ok()) std::abort();
    }
    while (qp.poll_cq()) {
    }
  }
  if (qp.counters().rx_accounted() != qp.counters().rx_packets) std::abort();
  return 0;
}
