// A throw-away PKI for TLS tests, made by the openssl command at test time: ca.pem, a server
// certificate for 127.0.0.1 and localhost (server.pem/.key; "localhost" is the authority gRPC
// checks on unix: targets) and a client certificate (client.pem/.key) signed by the CA.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace epic::testing {

inline bool run_quiet(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

inline bool have_openssl() { return run_quiet("command -v openssl"); }

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// false if openssl failed.
inline bool make_test_pki(const std::string& d) {
  const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  std::ofstream(d + "/san.ext") << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
  return run_quiet("openssl req -x509" + ec + " -keyout " + d + "/ca.key -out " + d +
                   "/ca.pem -days 1 -subj /CN=epic-test-ca") &&
         run_quiet("openssl req" + ec + " -keyout " + d + "/server.key -out " + d +
                   "/server.csr -subj /CN=inc-manager") &&
         run_quiet("openssl x509 -req -in " + d + "/server.csr -CA " + d + "/ca.pem -CAkey " + d +
                   "/ca.key -CAcreateserial -days 1 -extfile " + d + "/san.ext -out " + d +
                   "/server.pem") &&
         run_quiet("openssl req" + ec + " -keyout " + d + "/client.key -out " + d +
                   "/client.csr -subj /CN=leaf0-agent") &&
         run_quiet("openssl x509 -req -in " + d + "/client.csr -CA " + d + "/ca.pem -CAkey " + d +
                   "/ca.key -CAcreateserial -days 1 -out " + d + "/client.pem");
}

}  // namespace epic::testing
