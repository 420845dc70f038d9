// Stand-in for libFuzzer's main when the compiler has no -fsanitize=fuzzer
// (gcc): runs LLVMFuzzerTestOneInput over every file and directory given,
// so the committed corpus is still replayed. Flags starting with '-' are
// ignored, so the ctest command line is the same for both drivers.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace fs = std::filesystem;

static void run_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
}

int main(int argc, char** argv) {
  size_t n = 0;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    const fs::path p(argv[i]);
    if (fs::is_directory(p)) {
      for (const auto& e : fs::directory_iterator(p)) {
        if (e.is_regular_file()) {
          run_file(e.path());
          ++n;
        }
      }
    } else if (fs::exists(p)) {
      run_file(p);
      ++n;
    }
  }
  std::printf("replayed %zu inputs (no random run: this build has no libFuzzer)\n", n);
  return 0;
}
