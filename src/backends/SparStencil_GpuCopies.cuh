#pragma once
/// Copies between a grid in device memory and a kernel's shared memory (NVIDIA, sm_80+):
/// the asynchronous copies (cp.async) both matrix-core executors use, and 16-byte runs of
/// a grid row whatever the row's alignment, which the dense executor uses where rows are
/// not whole 16-byte units (a 16-bit grid of odd or 2 mod 8 width, say): such rows start
/// on 2-, 4- or 8-byte boundaries, their runs go by the copy engine in the widest pieces
/// the boundary allows, and only runs on a 2-byte boundary through registers
/// (measured: perf_tests/RESULTS.md, 2026-11-29).
#include <cstdint>

namespace sparstencil::gpu {

/// Asynchronous copies to shared memory by 32-bit shared address. The 16-byte forms ask
/// L2 to fetch whole 128-byte lines: a warp's copies of a row touch a line in 16-byte
/// pieces, and the sparse row-run kernel's 2-D single steps are bound by their data path.
__device__ __forceinline__ void cp_async_16(unsigned shared, const void* global) {
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(shared), "l"(global));
}
/// 16 bytes of `source_bytes` (16 or 0) from `global`, the rest zeros: zeros written by the
/// copy engine (0: nothing copied; `global` must still be a valid address, whose line L2
/// may fetch).
__device__ __forceinline__ void cp_async_16(unsigned shared, const void* global, unsigned source_bytes) {
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(shared), "l"(global),
               "r"(source_bytes));
}
/// 8- and 4-byte copies (through L1: the .cg form takes 16 bytes only).
__device__ __forceinline__ void cp_async_8(unsigned shared, const void* global) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(shared), "l"(global));
}
__device__ __forceinline__ void cp_async_4(unsigned shared, const void* global) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(shared), "l"(global));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

/// The four 32-bit words of 16 bytes at `from`, a 2-byte boundary that is not a 4-byte one:
/// a 16-bit value, three aligned words and a 16-bit value, shifted together. Reads nothing
/// outside the 16 bytes.
__device__ __forceinline__ uint4 load_16_bytes_at_2(const unsigned char* from) {
  const unsigned first = *reinterpret_cast<const unsigned short*>(from);
  const unsigned a = *reinterpret_cast<const unsigned*>(from + 2), b = *reinterpret_cast<const unsigned*>(from + 6),
                 c    = *reinterpret_cast<const unsigned*>(from + 10);
  const unsigned last = *reinterpret_cast<const unsigned short*>(from + 14);
  return make_uint4(first | a << 16, a >> 16 | b << 16, b >> 16 | c << 16, c >> 16 | last << 16);
}

/// 16 contiguous bytes of a grid at `global` (a 2-byte boundary at least) into 16-byte
/// aligned shared memory at `shared`: asynchronous (complete at the caller's wait) in
/// pieces of 16, 8 or 4 bytes as the boundary allows, else stored before return.
__device__ __forceinline__ void copy_16_bytes(unsigned shared, const void* global) {
  const auto from = static_cast<const unsigned char*>(global);
  const auto at   = reinterpret_cast<std::uintptr_t>(global);
  if ((at & 15u) == 0) {
    cp_async_16(shared, from);
  } else if ((at & 7u) == 0) {
    cp_async_8(shared, from);
    cp_async_8(shared + 8, from + 8);
  } else if ((at & 3u) == 0) {
#pragma unroll
    for (int i = 0; i < 16; i += 4) cp_async_4(shared + i, from + i);
  } else {
    const uint4 v = load_16_bytes_at_2(from);
    asm volatile("st.shared.v4.u32 [%0], {%1,%2,%3,%4};\n" ::"r"(shared), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
  }
}

/// A 16-byte global store (the compiler splits a uint4 store through a pointer it cannot
/// prove aligned into four).
__device__ __forceinline__ void st_global_v4(void* address, uint4 v) {
  asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};\n" ::"l"(address), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

/// 16 bytes `v` to a grid at `global` (a 2-byte boundary at least): one store where the
/// boundary is a 16-byte one, else the widest pieces it allows.
__device__ __forceinline__ void store_16_bytes(void* global, uint4 v) {
  const auto to = static_cast<unsigned char*>(global);
  const auto at = reinterpret_cast<std::uintptr_t>(global);
  if ((at & 15u) == 0) {
    st_global_v4(to, v);
  } else if ((at & 7u) == 0) {
    asm volatile("st.global.v2.u32 [%0], {%1,%2};\n" ::"l"(to), "r"(v.x), "r"(v.y) : "memory");
    asm volatile("st.global.v2.u32 [%0], {%1,%2};\n" ::"l"(to + 8), "r"(v.z), "r"(v.w) : "memory");
  } else if ((at & 3u) == 0) {
    asm volatile("st.global.u32 [%0], %1;\n" ::"l"(to), "r"(v.x) : "memory");
    asm volatile("st.global.u32 [%0], %1;\n" ::"l"(to + 4), "r"(v.y) : "memory");
    asm volatile("st.global.u32 [%0], %1;\n" ::"l"(to + 8), "r"(v.z) : "memory");
    asm volatile("st.global.u32 [%0], %1;\n" ::"l"(to + 12), "r"(v.w) : "memory");
  } else {
    const unsigned short first = static_cast<unsigned short>(v.x), last = static_cast<unsigned short>(v.w >> 16);
    asm volatile("st.global.u16 [%0], %1;\n" ::"l"(to), "h"(first) : "memory");
    asm volatile("st.global.u32 [%0], %1;\n" ::"l"(to + 2), "r"(v.x >> 16 | v.y << 16) : "memory");
    asm volatile("st.global.u32 [%0], %1;\n" ::"l"(to + 6), "r"(v.y >> 16 | v.z << 16) : "memory");
    asm volatile("st.global.u32 [%0], %1;\n" ::"l"(to + 10), "r"(v.z >> 16 | v.w << 16) : "memory");
    asm volatile("st.global.u16 [%0], %1;\n" ::"l"(to + 14), "h"(last) : "memory");
  }
}

}  // namespace sparstencil::gpu
