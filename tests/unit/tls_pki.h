// A throw-away PKI for TLS tests, made by the openssl command at test time: ca.pem, a server
// certificate for 127.0.0.1 and localhost (server.pem/.key; "localhost" is the authority gRPC
// checks on unix: targets) and client certificates signed by the CA, one per role
// (manager/service/caller.h): client (CN=admin), agent-leaf0 (CN=agent:leaf0),
// tenant-default (URI SAN epic:tenant:default, CN=rank-host: the URI decides), and more with
// make_client_cert.
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

// <d>/<name>.pem/.key: a client certificate with subject CN=`cn` and, if `uri` is set, the
// URI subject alternative name `uri`, signed by <d>/ca.pem. false if openssl failed.
inline bool make_client_cert(const std::string& d, const std::string& name, const std::string& cn,
                             const std::string& uri = "") {
  const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  const std::string ext = d + "/" + name + ".ext";
  std::ofstream(ext) << (uri.empty() ? "basicConstraints=CA:FALSE\n"
                                     : "subjectAltName=URI:" + uri + "\n");
  return run_quiet("openssl req" + ec + " -keyout " + d + "/" + name + ".key -out " + d + "/" +
                   name + ".csr -subj '/CN=" + cn + "'") &&
         run_quiet("openssl x509 -req -in " + d + "/" + name + ".csr -CA " + d + "/ca.pem -CAkey " +
                   d + "/ca.key -CAcreateserial -days 1 -extfile " + ext + " -out " + d + "/" +
                   name + ".pem");
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
         make_client_cert(d, "client", "admin") &&
         make_client_cert(d, "agent-leaf0", "agent:leaf0") &&
         make_client_cert(d, "tenant-default", "rank-host", "epic:tenant:default");
}

}  // namespace epic::testing
