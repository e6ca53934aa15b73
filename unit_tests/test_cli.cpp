// The sparstencil command line, run as a user would.
#include <cstdio>

#include "test_utils.hpp"

namespace sparstencil::test {
namespace {

struct CliResult {
  int status;
  std::string output;  // standard output and standard error together
};

/// Runs the command line with `arguments`; `redirect` says where its outputs go (both to
/// the result by default).
CliResult run_cli(const std::string& arguments, const std::string& redirect = "2>&1") {
  const std::string command = std::string(SPARSTENCIL_CLI_PATH) + " " + arguments + " " + redirect;
  FILE* pipe                = popen(command.c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string output;
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

TEST(Cli, PlanPrintsAReadablePlan) {
  const CliResult r = run_cli("plan box2d:r=3 --grid 10240x10240 --precision f16 --device h100");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* part : {"SparStencil plan: box2d:r=3", "backend", "cuda_sptc", "tile", "patch", "nonzeros",
                           "S =", "MMAs", "GStencil/s", "bids", "chosen", "generic"}) {
    EXPECT_NE(r.output.find(part), std::string::npos) << part << " missing from:\n" << r.output;
  }
}

// A 3-D stencil has dozens of candidate tiles whose lower bounds cannot win: they share
// one line per reason (a line a tile made the sparse plan 52 lines long).
TEST(Cli, PlanOfA3DStencilIsShort) {
  const CliResult r = run_cli("plan box3d27p --grid 512x512x512");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_LE(std::count(r.output.begin(), r.output.end(), '\n'), 22) << r.output;
  EXPECT_NE(r.output.find(" tiles "), std::string::npos) << r.output;
}

TEST(Cli, JsonParsesBackToAnEqualPlan) {
  for (const char* args : {"plan box2d:r=3 --grid 10240x10240 --precision f16 --device h100 --json",
                           "plan heat3d --grid 512x512x512 --precision tf32 --steps 2 --json",
                           "plan heat2d --grid 999x1001 --steps 3 --boundary fixed_rim --json",
                           "plan 1d5p --grid 10240000 --precision f64 --json",
                           "plan box2d:r=7 --grid 4096x4096 --precision bf16 --float-grids --json"}) {
    const CliResult r = run_cli(args);
    ASSERT_EQ(r.status, 0) << r.output;
    const Plan parsed = plan_from_json(r.output);
    PlanRequest request;
    request.stencil     = parsed.original;
    request.grid        = parsed.grid;
    request.precision   = parsed.precision;
    request.float_grids = parsed.float_grids;
    request.steps       = parsed.fused_steps;
    request.boundary    = parsed.boundary;
    EXPECT_TRUE(parsed == make_plan(request)) << args;
    EXPECT_EQ(to_json(parsed) + "\n", r.output);
  }
}

TEST(Cli, BadArgumentsGiveOneLineAndFailure) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"plan box2d:r=3", "--grid is required"},
      {"plan box9d --grid 10x10", "unknown stencil name 'box9d'"},
      {"plan box2d:r=3 --grid 10x", "'10x' is not extents"},
      {"plan heat2d --grid 100x100 --precision f8", "unknown precision 'f8'"},
      {"plan heat2d --grid 100x100 --device tpu", "unknown device 'tpu'"},
      {"plan heat2d --grid 100x100 --boundary wrap", "unknown boundary 'wrap'"},
      {"plan heat2d --grid 100x100 --backend fast", "unknown backend 'fast' (known: generic, cuda_sptc, dense)"},
      {"plan heat2d --grid 100x100 --steps 0", "--steps: '0' is not a whole number from 1 to 2147483647"},
      {"plan heat2d --grid 100x100 --steps 99999999999", "--steps: '99999999999' is not a whole number from 1"},
      {"plan heat2d --grid 100x100 --steps 2x", "--steps: '2x' is not a whole number"},
      {"plan heat2d --grid 100x100 --row-alignment 3", "row alignment"},
      {"plan heat2d --grid 100x100 --precision f64 --backend cuda_sptc", "precision f64 has no sparse"},
      {"plan heat2d --grid 100x100 --steps 2 --boundary interior --backend dense", "need a periodic boundary"},
      {"plan heat2d --grid 2x100", "grid extent 2 along axis 0 is too small"},
      {"plan heat2d --grid 100x100 --precision tf32 --float-grids", "float grids are read as f16 or bf16"},
      {"plan '0,0 1' --grid 9x9", "expected ':'"},
      {"frobnicate", "unknown command 'frobnicate' (commands: plan, devices; try --help)"},
      {"", "A subcommand is required"},
  };
  for (const auto& [args, message] : cases) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << " said: " << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << args << " said: " << r.output;
  }
}

TEST(Cli, ReadsNamesInAnyCase) {
  const CliResult lower = run_cli(
      "plan heat2d --grid 100x100 --precision f32 --device h200 --boundary fixed_rim "
      "--backend generic --json");
  const CliResult upper = run_cli(
      "plan HEAT2D --grid 100x100 --precision F32 --device H200 --boundary Fixed_Rim "
      "--backend Generic --json");
  ASSERT_EQ(lower.status, 0) << lower.output;
  ASSERT_EQ(upper.status, 0) << upper.output;
  EXPECT_EQ(plan_from_json(upper.output).precision, plan_from_json(lower.output).precision);
  EXPECT_EQ(plan_from_json(upper.output).boundary, plan_from_json(lower.output).boundary);
  EXPECT_EQ(plan_from_json(upper.output).backend, plan_from_json(lower.output).backend);
}

// Output that cannot be written (a full disk here) is an error, for every command.
TEST(Cli, OutputThatCannotBeWrittenFails) {
  if (FILE* full = std::fopen("/dev/full", "w")) {
    std::fclose(full);
  } else {
    GTEST_SKIP() << "no /dev/full on this system";
  }
  for (const char* args : {"plan heat2d --grid 100x100", "plan heat2d --grid 100x100 --json", "devices"}) {
    const CliResult r = run_cli(args, "2>&1 >/dev/full");
    EXPECT_EQ(r.status, 2) << args << " said: " << r.output;
    EXPECT_NE(r.output.find("cannot write the output"), std::string::npos) << args << " said: " << r.output;
  }
}

TEST(Cli, ListsDevices) {
  const CliResult r = run_cli("devices");
  ASSERT_EQ(r.status, 0);
  for (const char* d : {"h100", "h200", "a100", "cpu"}) EXPECT_NE(r.output.find(d), std::string::npos);
}

}  // namespace
}  // namespace sparstencil::test
