#pragma once
/// SPARSTENCIL_UNROLL before a loop: unrolled fully where its count is a constant (every
/// kernel's loops over a stencil's terms or a thread's outputs), on each compiler's pragma.
#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__clang__)
#define SPARSTENCIL_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define SPARSTENCIL_UNROLL _Pragma("GCC unroll 64")
#else
#define SPARSTENCIL_UNROLL
#endif
