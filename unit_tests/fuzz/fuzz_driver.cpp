// A main for the fuzz targets where libFuzzer is not used (any compiler): runs every seed
// given (files, or folders of them) once, then, with --seconds N, mutates randomly chosen
// seeds for N seconds (seeded: --seed S repeats a run). No coverage feedback: random byte
// edits, splices and numbers chosen to break ranges and types. An input that crashes
// (a signal, or an exception other than the std::runtime_error the target expects and
// catches) is written to --crash-dir (default: the current folder) as crash-<hash>, to be
// fixed and kept as a seed (docs/TESTING.md).
//
//   fuzz_<target> [--seconds N] [--seed S] [--max-len L] [--crash-dir DIR] PATH...
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

// The input being run and where it goes should it crash: set before every run, read by
// the signal handler (which may only write what is already there).
const std::string* g_input = nullptr;
char g_crash_path[4096];

void save_input() {
  if (g_input == nullptr) return;
  const int fd = ::open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    const char* data = g_input->data();
    std::size_t left = g_input->size();
    while (left > 0) {
      const ssize_t n = ::write(fd, data, left);
      if (n <= 0) break;
      data += n, left -= static_cast<std::size_t>(n);
    }
    ::close(fd);
  }
  const char head[] = "fuzz_driver: crash; input written to ";
  (void)!::write(2, head, sizeof head - 1);
  (void)!::write(2, g_crash_path, std::strlen(g_crash_path));
  (void)!::write(2, "\n", 1);
}

extern "C" void on_signal(int signal) {
  save_input();
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

void run(const std::string& input, const std::string& crash_dir) {
  std::snprintf(g_crash_path, sizeof g_crash_path, "%s/crash-%016llx", crash_dir.c_str(),
                static_cast<unsigned long long>(fnv1a(input)));
  g_input = &input;
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
  g_input = nullptr;
}

std::string read_file(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

/// Values that break types and ranges: JSON numbers past int, int64 and double, other
/// types, and stencil-text tokens.
const char* const g_tokens[] = {
    "0",     "-1",       "1",      "2147483647", "2147483648", "-2147483649", "4294967297", "18446744073709551616",
    "1e400", "-1e400",   "1e-400", "0.5",        "1e308",      "NaN",         "\"x\"",      "null",
    "[]",    "{}",       "true",   "[0]",        "-0",         ",",           ":",          ";",
    "r=",    "box3d:r=", "33",     "-33"};

std::string mutate(std::string s, const std::vector<std::string>& seeds, std::mt19937_64& rng, std::size_t max_len) {
  auto pick = [&](std::size_t n) {
    return n == 0 ? std::size_t{0} : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  };
  const int edits = 1 + static_cast<int>(pick(4));
  for (int e = 0; e < edits; ++e) {
    switch (pick(8)) {
      case 0:  // flip a bit
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << pick(8));
        break;
      case 1:  // a random byte
        s.insert(s.begin() + static_cast<long>(pick(s.size() + 1)), static_cast<char>(pick(256)));
        break;
      case 2: {  // erase a stretch
        if (s.empty()) break;
        const std::size_t at = pick(s.size());
        s.erase(at, 1 + pick(std::min<std::size_t>(16, s.size() - at)));
        break;
      }
      case 3: {  // duplicate a stretch
        if (s.empty()) break;
        const std::size_t at = pick(s.size()), n = 1 + pick(std::min<std::size_t>(64, s.size() - at));
        s.insert(at, s.substr(at, n));
        break;
      }
      case 4:  // cut the end
        s.resize(pick(s.size() + 1));
        break;
      case 5:
      case 6: {  // replace a number (or the character there) with a token
        if (s.empty()) break;
        std::size_t at = pick(s.size()), end = at;
        const auto numeric = [](char c) {
          return std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == 'e';
        };
        while (at > 0 && numeric(s[at - 1])) --at;
        while (end < s.size() && numeric(s[end])) ++end;
        s.replace(at, std::max<std::size_t>(end - at, 1), g_tokens[pick(std::size(g_tokens))]);
        break;
      }
      default: {  // splice another seed in
        const std::string& other = seeds[pick(seeds.size())];
        const std::size_t at = pick(s.size() + 1), from = pick(other.size() + 1);
        s = s.substr(0, at) + other.substr(from, pick(other.size() - from + 1));
        break;
      }
    }
  }
  if (s.size() > max_len) s.resize(max_len);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds        = 0;
  std::uint64_t seed    = 1;
  std::size_t max_len   = 1 << 20;
  std::string crash_dir = ".";
  std::vector<fs::path> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value            = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "fuzz_driver: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--seconds") seconds = std::stod(value());
    else if (arg == "--seed") seed = std::stoull(value());
    else if (arg == "--max-len") max_len = std::stoull(value());
    else if (arg == "--crash-dir") crash_dir = value();
    else paths.emplace_back(arg);
  }
  std::vector<std::string> seeds;
  for (const fs::path& p : paths) {
    if (fs::is_directory(p)) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::directory_iterator(p))
        if (entry.is_regular_file()) files.push_back(entry.path());
      std::sort(files.begin(), files.end());
      for (const fs::path& f : files) seeds.push_back(read_file(f));
    } else if (fs::is_regular_file(p)) {
      seeds.push_back(read_file(p));
    } else {
      std::fprintf(stderr, "fuzz_driver: no file or folder %s\n", p.string().c_str());
      return 2;
    }
  }
  if (seeds.empty()) {
    std::fprintf(stderr, "fuzz_driver: no seeds given\n");
    return 2;
  }
  for (int s : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGILL}) std::signal(s, on_signal);

  for (const std::string& input : seeds) run(input, crash_dir);
  std::printf("fuzz_driver: %zu seeds ran\n", seeds.size());
  if (seconds <= 0) return 0;

  std::mt19937_64 rng(seed);
  const auto start = std::chrono::steady_clock::now();
  long runs        = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    const std::string& base = seeds[std::uniform_int_distribution<std::size_t>(0, seeds.size() - 1)(rng)];
    run(mutate(base, seeds, rng, max_len), crash_dir);
    ++runs;
  }
  std::printf("fuzz_driver: %ld mutated inputs ran in %.0f s (seed %llu), no crash\n", runs, seconds,
              static_cast<unsigned long long>(seed));
  return 0;
}
