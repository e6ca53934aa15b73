#pragma once
// The benchmarks' problem sizes, one place for every harness: the papers' (1-D 10,240,000
// points, 2-D 10240 x 10240, 3-D 512^3) or small ones that fit a CPU run in seconds.
#include <vector>

namespace sparstencil::bench {

inline std::vector<long> problem_extents(int dims, bool paper) {
  if (dims == 1) return {paper ? 10240000L : 1L << 20};
  if (dims == 2) return paper ? std::vector<long>{10240, 10240} : std::vector<long>{1024, 1024};
  return paper ? std::vector<long>{512, 512, 512} : std::vector<long>{96, 96, 96};
}

}  // namespace sparstencil::bench
