#pragma once
/// Launches recorded once as a CUDA graph and replayed (Options::cuda_graphs): the graph,
/// and the few a plan keeps by the buffers and stage they were recorded for.
#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "SparStencil_GpuRuntime.hpp"

namespace sparstencil::impl {

/// A CUDA graph of recorded launches, replayed on a stream.
class RecordedLaunches {
 public:
  template <class Record>
  RecordedLaunches(cudaStream_t stream, Record&& record) {
    SPARSTENCIL_GPU_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      record();
    } catch (...) {
      cudaGraph_t partial = nullptr;
      cudaStreamEndCapture(stream, &partial);
      if (partial) cudaGraphDestroy(partial);
      throw;
    }
    cudaGraph_t graph = nullptr;
    SPARSTENCIL_GPU_CHECK(cudaStreamEndCapture(stream, &graph));
    const cudaError_t status = cudaGraphInstantiate(&m_exec, graph, 0);
    cudaGraphDestroy(graph);
    SPARSTENCIL_GPU_CHECK(status);
  }
  ~RecordedLaunches() {
    if (m_exec) cudaGraphExecDestroy(m_exec);  // no throw from a destructor
  }
  RecordedLaunches(const RecordedLaunches&)            = delete;
  RecordedLaunches& operator=(const RecordedLaunches&) = delete;
  void replay(cudaStream_t stream) const { SPARSTENCIL_GPU_CHECK(cudaGraphLaunch(m_exec, stream)); }

 private:
  cudaGraphExec_t m_exec = nullptr;
};

/// The latest `kept` graphs recorded, each for buffers (a, b) and a plan's `Stage`.
template <class Stage>
class RecordedCache {
 public:
  explicit RecordedCache(std::size_t kept) : m_kept(kept) {}
  /// The graph recorded for (a, b, stage), if any.
  const RecordedLaunches* find(const void* a, const void* b, const Stage* stage) const {
    for (const Entry& e : m_entries) {
      if (e.a == a && e.b == b && e.stage == stage) return e.graph.get();
    }
    return nullptr;
  }
  /// `graph` kept for (a, b, stage), the oldest dropped where `kept` are held already.
  const RecordedLaunches& keep(const void* a, const void* b, const Stage* stage,
                               std::unique_ptr<RecordedLaunches> graph) {
    if (m_entries.size() >= m_kept) m_entries.erase(m_entries.begin());
    m_entries.push_back({a, b, stage, std::move(graph)});
    return *m_entries.back().graph;
  }

 private:
  struct Entry {
    const void *a = nullptr, *b = nullptr;
    const Stage* stage = nullptr;
    std::unique_ptr<RecordedLaunches> graph;
  };
  std::vector<Entry> m_entries;
  std::size_t m_kept;
};

}  // namespace sparstencil::impl
#endif
