// The dense executor: one source for NVIDIA (nvcc) and AMD (hipcc -x hip), the vendor's
// instructions and lane layouts taken from SparStencil_MatrixFragments.hpp and the kernel
// body from SparStencil_DenseKernel.hpp.
#include "SparStencil_DenseExecutor.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "SparStencil_DenseKernel.hpp"
#include "SparStencil_DenseModel.hpp"
#include "SparStencil_Error.hpp"
#include "SparStencil_GpuRuntime.hpp"
#include "SparStencil_Overlap.hpp"

#if !defined(SPARSTENCIL_GPU_AMD)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace sparstencil::dense {
namespace {

using sparstencil::impl::fail;

/// Operand kinds: the storage bits (which are the operand format) and the accumulator.
struct F16 {
  using bits = unsigned short;
  using acc  = float;
};
struct BF16 {
  using bits = unsigned short;
  using acc  = float;
};
struct F64 {
  using bits = double;
  using acc  = double;
};

#if defined(SPARSTENCIL_GPU_AMD)
using Layout16 = AmdF16;
using Layout64 = AmdF64;
typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef short short4_ __attribute__((ext_vector_type(4)));
typedef float float4_ __attribute__((ext_vector_type(4)));
typedef double double4_ __attribute__((ext_vector_type(4)));

template <class Kind>
__device__ inline void mma(float (&c)[4], const unsigned short (&a)[4], const unsigned short (&b)[4]) {
  float4_ acc = {c[0], c[1], c[2], c[3]};
  if constexpr (std::is_same_v<Kind, BF16>) {
    const short4_ av = {static_cast<short>(a[0]), static_cast<short>(a[1]), static_cast<short>(a[2]), static_cast<short>(a[3])};
    const short4_ bv = {static_cast<short>(b[0]), static_cast<short>(b[1]), static_cast<short>(b[2]), static_cast<short>(b[3])};
    acc = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(av, bv, acc, 0, 0, 0);
  } else {
    half4 av, bv;
    for (int i = 0; i < 4; ++i) av[i] = __builtin_bit_cast(_Float16, a[i]), bv[i] = __builtin_bit_cast(_Float16, b[i]);
    acc = __builtin_amdgcn_mfma_f32_16x16x16f16(av, bv, acc, 0, 0, 0);
  }
  for (int i = 0; i < 4; ++i) c[i] = acc[i];
}
template <class Kind>
__device__ inline void mma(double (&c)[4], const double (&a)[1], const double (&b)[1]) {
  double4_ acc = {c[0], c[1], c[2], c[3]};
  acc          = __builtin_amdgcn_mfma_f64_16x16x4f64(a[0], b[0], acc, 0, 0, 0);
  for (int i = 0; i < 4; ++i) c[i] = acc[i];
}

/// f32 to the storage bits, round to nearest even.
template <class Kind>
__device__ inline unsigned short to_bits(float x) {
  if constexpr (std::is_same_v<Kind, BF16>) {
    const unsigned u = __builtin_bit_cast(unsigned, x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((u >> 16) | 0x40u);
    return static_cast<unsigned short>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  } else {
    return __builtin_bit_cast(unsigned short, static_cast<_Float16>(x));
  }
}
#else
using Layout16 = NvidiaF16;
using Layout64 = NvidiaF64;

template <class Kind>
__device__ inline void mma(float (&c)[4], const unsigned short (&a)[8], const unsigned short (&b)[4]) {
  unsigned ra[4], rb[2];
  for (int j = 0; j < 4; ++j) ra[j] = a[2 * j] | static_cast<unsigned>(a[2 * j + 1]) << 16;
  for (int j = 0; j < 2; ++j) rb[j] = b[2 * j] | static_cast<unsigned>(b[2 * j + 1]) << 16;
  if constexpr (std::is_same_v<Kind, BF16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
  }
}
template <class Kind>
__device__ inline void mma(double (&c)[2], const double (&a)[1], const double (&b)[1]) {
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
               : "+d"(c[0]), "+d"(c[1])
               : "d"(a[0]), "d"(b[0]));
}

template <class Kind>
__device__ inline unsigned short to_bits(float x) {
  if constexpr (std::is_same_v<Kind, BF16>) return __bfloat16_as_ushort(__float2bfloat16_rn(x));
  else return __half_as_ushort(__float2half_rn(x));
}
#endif

template <class Kind>
using LayoutOf = std::conditional_t<std::is_same_v<Kind, F64>, Layout64, Layout16>;


/// `run` consecutive values in one aligned load (the layout's a_run).
template <int run, class Bits>
__device__ inline void load_run(const Bits* from, Bits* to) {
  if constexpr (run == 1) {
    to[0] = from[0];
  } else {
    using Word   = std::conditional_t<run * sizeof(Bits) == 4, unsigned, uint2>;
    const Word w = *reinterpret_cast<const Word*>(from);
    __builtin_memcpy(to, &w, sizeof w);
  }
}

template <class Kind, int D>
__global__ void __launch_bounds__(block_threads) dense_kernel(const DenseArgs<D> g) {
  using L    = LayoutOf<Kind>;
  using Bits = typename Kind::bits;
  using Acc  = typename Kind::acc;
  extern __shared__ double shared_words[];  // 8-byte aligned: doubles and halves alike
  Bits* image       = reinterpret_cast<Bits*>(shared_words);
  int* gather       = reinterpret_cast<int*>(image + g.image_values);
  int* tile_offsets = gather + g.K;
  int* tile_at      = tile_offsets + g.tiles;   // [tile][axis]: tile_coordinate
  int* point_at     = tile_at + g.tiles * D;    // [row of A'][axis]: point_coordinate
  const Bits* in    = static_cast<const Bits*>(g.in);
  Bits* out         = static_cast<Bits*>(g.out);
  const Bits* a     = reinterpret_cast<const Bits*>(g.a);
  long origin[D];
  block_origin(g, static_cast<long>(blockIdx.x), origin);
  for (int i = threadIdx.x; i < g.K; i += blockDim.x) gather[i] = g.gather[i];
  for (int i = threadIdx.x; i < g.tiles; i += blockDim.x) tile_offsets[i] = g.tile_offsets[i];
  for (int i = threadIdx.x; i < g.tiles * D; i += blockDim.x) tile_at[i] = tile_coordinate(g, i / D, i % D);
  for (int i = threadIdx.x; i < g.m_blocks * 16 * D; i += blockDim.x) point_at[i] = point_coordinate(g, i / D, i % D);
  const int lane = threadIdx.x % L::lanes, wave = threadIdx.x / L::lanes, waves = blockDim.x / L::lanes;
  // The image, a row a wave at a time, its lanes along the row.
  const long x_stride = g.in_stride[D - 1];
  for (int row = wave; row < image_rows(g); row += waves) {
    const ImageRow r = image_row(g, origin, row);
    for (int x = lane; x < g.shared_extent[D - 1]; x += L::lanes) {
      const long at         = image_coordinate(g, origin, D - 1, x);
      image[r.offset + x] = r.inside && at >= 0 ? in[r.in_index + at * x_stride] : Bits(0);
    }
  }
  __syncthreads();
  // A wave's unit of work takes `batch` groups of tiles at once: each A fragment and
  // gather entry loaded serves them all.
  constexpr int batch = group_batch;
  const int groups    = g.tiles / L::n;
  const int units     = (groups + batch - 1) / batch * g.m_blocks * parts<L>();
  for (int index = wave; index < units; index += waves) {
    const Unit first = unit_of<L>(index, g.m_blocks);  // .group: the batch
    Unit u[batch];
    int tile_base[batch][L::b_values];
    Acc c[batch][L::c_values];
    for (int j = 0; j < batch; ++j) {
      u[j] = {first.group * batch + j, first.m_block, first.part};
      for (int i = 0; i < L::b_values; ++i) tile_base[j][i] = u[j].group < groups ? b_tile<L>(u[j], tile_offsets, lane, i) : 0;
      for (int i = 0; i < L::c_values; ++i) c[j][i] = Acc(0);
    }
    for (int kc = 0; kc < g.k_chunks; ++kc) {
      Bits av[L::a_values];
      int row_at[L::b_values];
      for (int i = 0; i < L::a_values; i += L::a_run) load_run<L::a_run>(a + a_index<L>(first, g.K, kc, lane, i), av + i);
      for (int i = 0; i < L::b_values; ++i) row_at[i] = b_gather<L>(gather, kc, lane, i);
      for (int j = 0; j < batch; ++j) {
        if (u[j].group >= groups) break;  // the same for the whole wave
        Bits bv[L::b_values];
        for (int i = 0; i < L::b_values; ++i) bv[i] = row_at[i] < 0 ? Bits(0) : image[tile_base[j][i] + row_at[i]];
        mma<Kind>(c[j], av, bv);
      }
    }
    for (int j = 0; j < batch && u[j].group < groups; ++j) {
      for (int i = 0; i < L::c_values; ++i) {
        const Target t      = c_target<L>(u[j], lane, i);
        const OutputPoint x = output_point(g, origin, tile_at + t.tile * D, point_at + t.row * D);
        if (!x.inside) continue;
        if (g.boundary == 0 || x.interior) {
          if constexpr (std::is_same_v<Kind, F64>) out[x.out_index] = c[j][i];
          else out[x.out_index] = to_bits<Kind>(c[j][i]);
        } else if (g.boundary == 2) {
          out[x.out_index] = in[x.in_index];
        }
      }
    }
  }
}

template <class Kind>
void launch_kind(int dims, const void* args, long blocks, std::size_t shared, Stream stream) {
  const dim3 grid(static_cast<unsigned>(blocks)), block(block_threads);
  switch (dims) {
    case 1: dense_kernel<Kind, 1><<<grid, block, shared, stream>>>(*static_cast<const DenseArgs<1>*>(args)); break;
    case 2: dense_kernel<Kind, 2><<<grid, block, shared, stream>>>(*static_cast<const DenseArgs<2>*>(args)); break;
    default: dense_kernel<Kind, 3><<<grid, block, shared, stream>>>(*static_cast<const DenseArgs<3>*>(args)); break;
  }
  SPARSTENCIL_GPU_CHECK_LAUNCH();
}

template <class T>
T* upload(const std::vector<T>& host) {
  void* device = nullptr;
  SPARSTENCIL_GPU_CHECK(gpu::malloc_bytes(&device, std::max<std::size_t>(host.size(), 1) * sizeof(T)));
  try {
    SPARSTENCIL_GPU_CHECK(gpu::copy_to_device(device, host.data(), host.size() * sizeof(T)));
  } catch (...) {
    (void)gpu::free_bytes(device);
    throw;
  }
  return static_cast<T*>(device);
}

}  // namespace

struct DenseExecutor::State {
  Plan plan;
  DenseArgs<1> args1;
  DenseArgs<2> args2;
  DenseArgs<3> args3;
  int device        = 0;
  long blocks       = 0;
  std::size_t shared = 0;
  std::vector<long> contiguous;
  std::vector<void*> allocations;
  std::string instruction;

  ~State() {
    for (void* p : allocations) (void)gpu::free_bytes(p);  // no throw from a destructor
  }
  template <int D>
  DenseArgs<D>& args() {
    if constexpr (D == 1) return args1;
    else if constexpr (D == 2) return args2;
    else return args3;
  }
  template <int D>
  void set_up(const std::uint32_t* a, const int* gather, const int* tile_offsets) {
    DenseArgs<D>& g = args<D>();
    g               = dense_args<D>(plan);
    g.a             = a;
    g.gather        = gather;
    g.tile_offsets  = tile_offsets;
    blocks          = 1;
    for (int ax = 0; ax < D; ++ax) blocks *= g.blocks[ax];
  }
};

DenseExecutor::DenseExecutor(const Plan& plan) : m_state(std::make_unique<State>()) {
  State& s = *m_state;
  if (plan.backend != "dense" || !plan.dense) {
    fail("DenseExecutor", "the plan is for the ", plan.backend, " backend, not dense");
  }
  verify(plan, "DenseExecutor");
  s.plan = plan;
  SPARSTENCIL_GPU_CHECK(gpu::current_device(&s.device));
  gpu::DeviceProperties props{};
  SPARSTENCIL_GPU_CHECK(gpu::properties(&props, s.device));
#if defined(SPARSTENCIL_GPU_AMD)
  const std::string arch = props.gcnArchName;
  if (arch.rfind("gfx90a", 0) != 0 && arch.rfind("gfx94", 0) != 0) {
    fail("DenseExecutor", "device ", props.name, " (", arch, ") has no MFMA of the kernel: gfx90a or gfx94x is needed");
  }
#else
  if (props.major < 8) {
    fail("DenseExecutor", "device ", props.name, " (compute capability ", props.major, ".", props.minor,
         ") has no mma.sync of the kernel: 8.0 or newer is needed");
  }
#endif
  s.instruction = plan.precision == Precision::f64 ? Layout64::instruction : Layout16::instruction;
  const std::uint32_t* a   = upload(plan.a.values);
  s.allocations.push_back(const_cast<std::uint32_t*>(a));
  const int* gather        = upload(plan.gather);
  s.allocations.push_back(const_cast<int*>(gather));
  const int* tile_offsets  = upload(plan.tile_offsets);
  s.allocations.push_back(const_cast<int*>(tile_offsets));
  switch (plan.dims()) {
    case 1: s.set_up<1>(a, gather, tile_offsets); break;
    case 2: s.set_up<2>(a, gather, tile_offsets); break;
    default: s.set_up<3>(a, gather, tile_offsets); break;
  }
  if (s.blocks > 0x7fffffffL) fail("DenseExecutor", "the grid needs ", s.blocks, " blocks, more than a launch takes");
  s.shared = shared_bytes(plan);
  if (s.shared > max_shared_bytes) {
    fail("DenseExecutor", "a block needs ", s.shared, " bytes of shared memory, more than the kernel's ",
         max_shared_bytes);
  }
  s.contiguous.assign(plan.dims(), 1);
  for (int ax = plan.dims() - 2; ax >= 0; --ax) s.contiguous[ax] = s.contiguous[ax + 1] * plan.grid[ax + 1];
}

DenseExecutor::~DenseExecutor()                               = default;
DenseExecutor::DenseExecutor(DenseExecutor&&) noexcept            = default;
DenseExecutor& DenseExecutor::operator=(DenseExecutor&&) noexcept = default;

const Plan& DenseExecutor::plan() const { return m_state->plan; }

std::string DenseExecutor::describe() const {
  return m_state->instruction + ", " + std::to_string(m_state->blocks) + " blocks x " + std::to_string(block_threads);
}

void DenseExecutor::apply(const void* in, void* out, Stream stream) const {
  apply(in, m_state->contiguous.data(), out, m_state->contiguous.data(), stream);
}

void DenseExecutor::apply(const void* in, const long* in_strides, void* out, const long* out_strides,
                          Stream stream) const {
  State& s    = *m_state;
  const int D = s.plan.dims();
  if (in == nullptr || out == nullptr) fail("DenseExecutor::apply", "null grid pointer");
  for (int a = 0; a < D; ++a) {
    if (in_strides[a] < 1 || out_strides[a] < 1) {
      fail("DenseExecutor::apply", "strides must be positive: in ",
           sparstencil::impl::tuple_string(std::vector<long>(in_strides, in_strides + D)), ", out ",
           sparstencil::impl::tuple_string(std::vector<long>(out_strides, out_strides + D)));
    }
  }
  const std::size_t bytes = static_cast<std::size_t>(storage_bytes(s.plan.precision));
  if (sparstencil::impl::grid_overlap(reinterpret_cast<std::uintptr_t>(in), in_strides,
                                      reinterpret_cast<std::uintptr_t>(out), out_strides, s.plan.grid.data(), D,
                                      bytes) != sparstencil::impl::Overlap::none) {
    fail("DenseExecutor::apply", "in and out overlap in memory (or may: equal strides are decided element by ",
         "element, others by their memory ranges): a step needs separate buffers");
  }
  int current = 0;
  SPARSTENCIL_GPU_CHECK(gpu::current_device(&current));
  if (current != s.device) {
    fail("DenseExecutor::apply", "the executor was built on device ", s.device, " but device ", current, " is current");
  }
  const void* args = nullptr;
  auto fill        = [&](auto& g) {
    g.in  = in;
    g.out = out;
    for (int a = 0; a < D; ++a) g.in_stride[a] = in_strides[a], g.out_stride[a] = out_strides[a];
    args = &g;
  };
  DenseArgs<1> g1 = s.args1;
  DenseArgs<2> g2 = s.args2;
  DenseArgs<3> g3 = s.args3;
  if (D == 1) fill(g1);
  else if (D == 2) fill(g2);
  else fill(g3);
  switch (s.plan.precision) {
    case Precision::f16: launch_kind<F16>(D, args, s.blocks, s.shared, stream); break;
    case Precision::bf16: launch_kind<BF16>(D, args, s.blocks, s.shared, stream); break;
    default: launch_kind<F64>(D, args, s.blocks, s.shared, stream); break;
  }
}

}  // namespace sparstencil::dense
