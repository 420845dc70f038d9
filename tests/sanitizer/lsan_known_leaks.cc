// LeakSanitizer's suppressions for leaks that are not ours, compiled into every target of an
// AddressSanitizer build (CMakeLists.txt, EPIC_SANITIZE). LSan calls this hook at start-up.
//
// One entry, and only for a library we never call directly:
//   libcrypto.so — OpenSSL 3 allocates a thread's error state (904 bytes, ERR_STATE) the first
//   time a thread records an error; a thread that exits while the state is in use can leave it
//   unfreed (openssl/openssl#24357, seen through gRPC as grpc/grpc#38539). gRPC's TLS threads
//   record one on every refused handshake, so a test that shows a client without a certificate
//   is turned away (TlsTest.IncctlAndARealIncAgentUseMutualTls) fails now and then under CI load
//   with "Direct leak of 904 byte(s) ... CRYPTO_zalloc". Frame-pointer unwinding stops inside
//   libcrypto, so the library name is the narrowest match the report allows.
extern "C" const char* __lsan_default_suppressions();  // NOLINT(bugprone-reserved-identifier)

extern "C" const char* __lsan_default_suppressions() {  // NOLINT(bugprone-reserved-identifier)
  return "leak:libcrypto.so\n";
}
