// The sparstencil command line.
//   sparstencil plan <stencil> --grid 10240x10240 [--precision f16] [--device h100]
//                    [--steps t] [--boundary periodic] [--backend auto|generic|cuda_sptc|dense]
//                    [--float-grids] [--json]
//   sparstencil devices
// Names (precision, device, boundary, backend, presets) are read in any case. Errors,
// including output that cannot be written, are one line on standard error and exit status 2.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "SparStencil_Config.hpp"
#include "SparStencil_Parse.hpp"
#include "SparStencil_Backends.hpp"

namespace {

std::vector<long> parse_grid(const std::string& text) {
  try {
    return sparstencil::parse_extents(text);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("--grid: ") + e.what());
  }
}

std::string lower_case(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

/// The value of integer option `name`, which must lie in [low, high].
int parse_count(const char* name, const std::string& text, int low, int high) {
  long long value   = 0;
  const char* end   = text.data() + text.size();
  const auto result = std::from_chars(text.data(), end, value);
  if (text.empty() || result.ec != std::errc() || result.ptr != end || value < low || value > high) {
    throw std::runtime_error(std::string(name) + ": '" + text + "' is not a whole number from " + std::to_string(low) +
                             " to " + std::to_string(high));
  }
  return static_cast<int>(value);
}

/// Exit status 0, or 2 with a message where standard output could not be written (a full
/// disk, a closed pipe).
int flushed() {
  std::cout.flush();
  if (std::cout) return 0;
  std::cerr << "sparstencil: cannot write the output (standard output: write failed)\n";
  return 2;
}

/// The first line of an error message, without the library's "sparstencil::" prefix.
std::string one_line(const std::string& message) {
  std::string line         = message.substr(0, message.find('\n'));
  const std::string prefix = "sparstencil::";
  return line.compare(0, prefix.size(), prefix) == 0 ? line.substr(prefix.size()) : line;
}

}  // namespace

int main(int argc, char* argv[]) {
  CLI::App app{"SparStencil: plan stencils for sparse tensor cores and explain the plan"};
  app.require_subcommand(1);
  app.failure_message([](const CLI::App*, const CLI::Error& e) { return std::string(e.what()) + "\n"; });

  std::string stencil_text, grid_text, precision = "f16", device = "h100", boundary = "periodic", backend = "auto";
  std::string steps_text = "1", row_alignment_text = "16";
  double input_magnitude = 1.0;
  bool json = false, allow_overflow = false, float_grids = false;
  CLI::App* plan = app.add_subcommand("plan", "plan a stencil and print explain() (or the plan as JSON)");
  plan->add_option("stencil", stencil_text, "preset, builder (box2d:r=3) or offset:weight terms")->required();
  plan->add_option("--grid", grid_text, "grid extents, e.g. 10240x10240")->required();
  plan->add_option("--precision", precision, "f16, bf16, tf32, f32 or f64")->capture_default_str();
  plan->add_option("--device", device, "h100, h200, a100, mi250x, gpu or cpu")->capture_default_str();
  plan->add_option("--steps", steps_text, "time steps fused into one launch")->capture_default_str();
  plan->add_option("--boundary", boundary, "interior, periodic or fixed_rim")->capture_default_str();
  plan->add_option("--backend,--executor", backend, "auto or a backend: " SPARSTENCIL_BACKEND_NAMES)
      ->capture_default_str();
  plan->add_option("--input-magnitude", input_magnitude, "the largest |value| of the inputs (range check)")
      ->capture_default_str();
  plan->add_flag("--allow-overflow", allow_overflow, "warn instead of refusing values the precision cannot hold");
  plan->add_option("--row-alignment", row_alignment_text,
                   "bytes every grid row starts on: 16 (rows of whole 16-byte units), 8, 4, 2 or 1")
      ->capture_default_str();
  plan->add_flag("--float-grids", float_grids, "the grids hold float, read as the f16 or bf16 operands of --precision");
  plan->add_flag("--json", json, "print the plan as JSON");
  CLI::App* devices = app.add_subcommand("devices", "list the device descriptions of the cost model");

  // (CLI11 says only "A subcommand is required" for a misspelt one.)
  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
      known += (known.empty() ? "" : ", ") + command->get_name();
      found = found || command->get_name() == argv[1];
    }
    if (!found) {
      std::cerr << "sparstencil: unknown command '" << argv[1] << "' (commands: " << known << "; try --help)\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "sparstencil: " << one_line(e.what()) << "\n";
    return 2;
  }
  try {
    if (*devices) {
      for (const std::string& name : sparstencil::device_names()) {
        const auto& d = sparstencil::device_description(name);
        std::cout << name << std::string(name.size() < 5 ? 5 - name.size() : 0, ' ') << " " << d.source << "\n";
      }
      return flushed();
    }
    sparstencil::PlanRequest request;
    request.stencil         = sparstencil::parse_stencil(stencil_text);
    request.grid            = parse_grid(grid_text);
    request.precision       = sparstencil::precision_from_string(lower_case(precision));
    request.device          = lower_case(device);
    request.steps           = parse_count("--steps", steps_text, 1, INT_MAX);
    request.boundary        = sparstencil::boundary_from_string(lower_case(boundary));
    request.input_magnitude = input_magnitude;
    request.allow_overflow  = allow_overflow;
    request.float_grids     = float_grids;
    request.row_alignment   = parse_count("--row-alignment", row_alignment_text, 1, INT_MAX);
    backend                 = lower_case(backend);
    if (backend != "auto") request.backends = {sparstencil::backend_model(backend).name().data()};
    const sparstencil::Plan result = sparstencil::make_plan(request);
    std::cout << (json ? sparstencil::to_json(result) + "\n" : sparstencil::explain(result));
    return flushed();
  } catch (const std::exception& e) {
    std::cerr << "sparstencil: " << one_line(e.what()) << "\n";
    return 2;
  }
}
