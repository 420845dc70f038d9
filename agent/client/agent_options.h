// How the agent reaches inc-manager: address, TLS, heartbeat and reconnect timing. incd fills
// it from the `manager:` section of its config (docs/agent.md, docs/incd-config.md).
// Threading: a plain value.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace epic::agent {

struct TlsOptions {
  bool enabled = false;
  std::string root_ca_file;  // PEM; "" = the system's roots
  std::string cert_file;     // PEM client certificate (mutual TLS), with key_file; optional
  std::string key_file;
  std::string server_name;  // overrides the name checked against the certificate; "" = host
};

struct AgentOptions {
  // gRPC target: "host:port", "dns:///name:port", "unix:/path".
  std::string address;
  TlsOptions tls;
  // Until the manager's Registered says otherwise (it may ask for more often, never less).
  std::chrono::milliseconds heartbeat_interval{1000};
  std::chrono::milliseconds reconnect_initial{200};
  std::chrono::milliseconds reconnect_max{10000};
  double reconnect_jitter = 0.2;  // a delay d is drawn from [d·(1 - jitter), d]
  // HTTP/2 keepalive pings to notice a silently dead manager (ping period and ack timeout);
  // 0 = off. inc-manager accepts pings down to 1 s on the agent stream
  // (tests/unit/manager/service/keepalive_test.cc).
  std::chrono::milliseconds keepalive{20000};
  uint64_t seed = 1;  // jitter's PRNG
};

}  // namespace epic::agent
