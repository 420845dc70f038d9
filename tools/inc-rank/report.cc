#include "tools/inc-rank/report.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "host/collective/plan.h"

namespace epic::tools::rank {

namespace {
double tenth(double x) { return std::round(x * 10) / 10; }
}  // namespace

std::string collective_line(uint16_t rank, const CollectiveOutcome& c, bool json) {
  const bool ok = !c.first_difference.has_value();
  if (json) {
    nlohmann::ordered_json j;
    j["rank"] = rank;
    j["k"] = c.k;
    j["primitive"] = vocab::to_string(c.desc.type);
    j["dtype"] = vocab::to_string(c.desc.dtype);
    j["op"] = vocab::to_string(c.desc.op);
    j["root"] = c.desc.root;
    j["count"] = c.desc.count;
    j["bytes"] = c.bytes;
    j["ok"] = ok;
    j["latency_us"] = tenth(c.latency_us);
    if (!ok) j["first_difference"] = *c.first_difference;
    return j.dump();
  }
  std::string s = "inc-rank: rank " + std::to_string(rank) + " k=" + std::to_string(c.k) + " " +
                  host::format_collective(c.desc) + " bytes=" + std::to_string(c.bytes) +
                  (ok ? " ok" : " WRONG first_difference=" + std::to_string(*c.first_difference));
  char lat[32];
  std::snprintf(lat, sizeof lat, " latency_us=%.1f", c.latency_us);
  return s + lat;
}

std::string summary_line(uint16_t rank, const Summary& s, bool json) {
  if (json) {
    nlohmann::ordered_json j;
    j["rank"] = rank;
    j["summary"] = true;
    j["collectives"] = s.collectives;
    j["failed"] = s.failed;
    j["retransmits"] = s.qp.tx_retransmits;
    j["timeouts"] = s.qp.timeouts;
    j["rnr_naks"] = s.qp.rx_rnr_nak;
    j["naks_seq"] = s.qp.rx_nak_seq;
    // Results that arrived after a gap (a frame lost or dropped on the way down) and
    // duplicates of results already taken.
    j["rx_out_of_sequence"] = s.qp.rx_request_out_of_sequence;
    j["rx_duplicates"] = s.qp.rx_request_duplicate;
    j["rx_kernel_drops"] = s.kernel_rx_drops;  // the socket's buffer overflowed
    // Congestion signals: results that arrived marked CE, CNPs we sent for them, CNPs we got.
    j["rx_ce_marked"] = s.qp.rx_ce_marked;
    j["tx_cnps"] = s.qp.tx_cnps;
    j["rx_cnps"] = s.qp.rx_cnp;
    j["resent_timeout"] = s.qp.tx_resent_timeout;
    j["resent_nak_seq"] = s.qp.tx_resent_nak_seq;
    j["resent_rnr_probe"] = s.qp.tx_resent_rnr_probe;
    j["resent_rnr_window"] = s.qp.tx_resent_rnr_window;
    j["resent_after_probe"] = s.qp.tx_resent_after_probe;
    j["exit"] = s.exit_code;
    if (!s.error.empty()) j["error"] = s.error;
    return j.dump();
  }
  return std::string("INC_RANK ") + (s.exit_code == kExitPass ? "PASS" : "FAIL") +
         " rank=" + std::to_string(rank) + " collectives=" + std::to_string(s.collectives) +
         " failed=" + std::to_string(s.failed) +
         " retransmits=" + std::to_string(s.qp.tx_retransmits) +
         " timeouts=" + std::to_string(s.qp.timeouts) +
         " rnr_naks=" + std::to_string(s.qp.rx_rnr_nak) +
         " naks_seq=" + std::to_string(s.qp.rx_nak_seq) + " exit=" + std::to_string(s.exit_code);
}

}  // namespace epic::tools::rank
