#pragma once
/// The dense backend's fragment layer: for each matrix instruction it uses, which element
/// of A (M x K), B (K x N) and C (M x N) each lane holds in each of its values (each
/// vendor's lane layout described here and nowhere else), and in device code the
/// instruction itself. The kernel body (SparStencil_DenseKernel.hpp) is written against
/// these members only; the host emulator runs the same body with each instruction's
/// documented semantics (SparStencil_DenseEmulator.hpp).
///
///   NvidiaF16  mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16} (sm_80+), PTX ISA
///              "Matrix fragments for mma.m16n8k16": g = lane / 4, t = lane % 4.
///   NvidiaTF32 mma.sync.aligned.m16n8k8.row.col.f32.tf32 (sm_80+), "Matrix fragments for
///              mma.m16n8k8" (.tf32): A (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4);
///              B (t, g), (t + 4, g); C as f16's. AMD's gfx90a MFMA has no tf32 form.
///   NvidiaF64  mma.sync.aligned.m8n8k4.row.col.f64 (sm_80+), "mma.m8n8k4 .f64": half of
///              sm_90's f64 rate.
///   NvidiaF64Sm90  mma.sync.aligned.m16n8k4.row.col.f64 (sm_90+), "mma.m16n8k4 .f64":
///              A (g, t), (g + 8, t); B (t, g); C as f16's.
///   AmdF16     v_mfma_f32_16x16x16f16 / _16x16x16bf16_1k (CDNA2 gfx90a+, 64-lane waves),
///              AMD's matrix instruction calculator (--architecture cdna2).
///   AmdF64     v_mfma_f64_16x16x4f64 (CDNA2 gfx90a+).
/// Values are numbered as the instruction takes them: NVIDIA's f16 A values a0..a7 sit in
/// four 32-bit registers, two a register, a0 in the low half of the first. `b_run`: B
/// values come in runs of this many consecutive k of one column, the first at a k that is
/// a multiple of it (the kernel loads a run at once from the image).
#if defined(__CUDACC__) || defined(__HIPCC__)
#define SPARSTENCIL_FRAGMENT_HD __host__ __device__
#else
#define SPARSTENCIL_FRAGMENT_HD
#endif

namespace sparstencil::dense {

/// Where a lane's value sits in its matrix: (row, k) of A, (k, column) of B, (row, column) of C.
struct Element {
  int row, col;
};

struct NvidiaF16 {
  static constexpr const char* instruction = "mma.sync m16n8k16 f16/bf16 -> f32";
  static constexpr int lanes = 32, m = 16, n = 8, k = 16;
  static constexpr int a_values = 8, b_values = 4, c_values = 4;
  static constexpr int b_run = 2;
  SPARSTENCIL_FRAGMENT_HD static constexpr Element a(int lane, int i) {
    return {lane / 4 + 8 * ((i / 2) % 2), 2 * (lane % 4) + i % 2 + 8 * (i / 4)};
  }
  SPARSTENCIL_FRAGMENT_HD static constexpr Element b(int lane, int i) {
    return {2 * (lane % 4) + i % 2 + 8 * (i / 2), lane / 4};
  }
  SPARSTENCIL_FRAGMENT_HD static constexpr Element c(int lane, int i) {
    return {lane / 4 + 8 * (i / 2), 2 * (lane % 4) + i % 2};
  }
};

struct NvidiaTF32 {
  static constexpr const char* instruction = "mma.sync m16n8k8 tf32 -> f32";
  static constexpr int lanes = 32, m = 16, n = 8, k = 8;
  static constexpr int a_values = 4, b_values = 2, c_values = 4;
  static constexpr int b_run = 1;
  SPARSTENCIL_FRAGMENT_HD static constexpr Element a(int lane, int i) {
    return {lane / 4 + 8 * (i % 2), lane % 4 + 4 * (i / 2)};
  }
  SPARSTENCIL_FRAGMENT_HD static constexpr Element b(int lane, int i) { return {lane % 4 + 4 * i, lane / 4}; }
  SPARSTENCIL_FRAGMENT_HD static constexpr Element c(int lane, int i) {
    return {lane / 4 + 8 * (i / 2), 2 * (lane % 4) + i % 2};
  }
};

struct NvidiaF64 {
  static constexpr const char* instruction = "mma.sync m8n8k4 f64";
  static constexpr int lanes = 32, m = 8, n = 8, k = 4;
  static constexpr int a_values = 1, b_values = 1, c_values = 2;
  static constexpr int b_run = 1;
  SPARSTENCIL_FRAGMENT_HD static constexpr Element a(int lane, int) { return {lane / 4, lane % 4}; }
  SPARSTENCIL_FRAGMENT_HD static constexpr Element b(int lane, int) { return {lane % 4, lane / 4}; }
  SPARSTENCIL_FRAGMENT_HD static constexpr Element c(int lane, int i) { return {lane / 4, 2 * (lane % 4) + i}; }
};

struct NvidiaF64Sm90 {
  static constexpr const char* instruction = "mma.sync m16n8k4 f64";
  static constexpr int lanes = 32, m = 16, n = 8, k = 4;
  static constexpr int a_values = 2, b_values = 1, c_values = 4;
  static constexpr int b_run = 1;
  SPARSTENCIL_FRAGMENT_HD static constexpr Element a(int lane, int i) { return {lane / 4 + 8 * i, lane % 4}; }
  SPARSTENCIL_FRAGMENT_HD static constexpr Element b(int lane, int) { return {lane % 4, lane / 4}; }
  SPARSTENCIL_FRAGMENT_HD static constexpr Element c(int lane, int i) {
    return {lane / 4 + 8 * (i / 2), 2 * (lane % 4) + i % 2};
  }
};

struct AmdF16 {
  static constexpr const char* instruction = "v_mfma_f32_16x16x16 f16/bf16 -> f32";
  static constexpr int lanes = 64, m = 16, n = 16, k = 16;
  static constexpr int a_values = 4, b_values = 4, c_values = 4;
  static constexpr int b_run = 4;
  SPARSTENCIL_FRAGMENT_HD static constexpr Element a(int lane, int i) { return {lane % 16, 4 * (lane / 16) + i}; }
  SPARSTENCIL_FRAGMENT_HD static constexpr Element b(int lane, int i) { return {4 * (lane / 16) + i, lane % 16}; }
  SPARSTENCIL_FRAGMENT_HD static constexpr Element c(int lane, int i) { return {4 * (lane / 16) + i, lane % 16}; }
};

struct AmdF64 {
  static constexpr const char* instruction = "v_mfma_f64_16x16x4 f64";
  static constexpr int lanes = 64, m = 16, n = 16, k = 4;
  static constexpr int a_values = 1, b_values = 1, c_values = 4;
  static constexpr int b_run = 1;
  SPARSTENCIL_FRAGMENT_HD static constexpr Element a(int lane, int) { return {lane % 16, lane / 16}; }
  SPARSTENCIL_FRAGMENT_HD static constexpr Element b(int lane, int) { return {lane / 16, lane % 16}; }
  SPARSTENCIL_FRAGMENT_HD static constexpr Element c(int lane, int i) { return {lane / 16 + 4 * i, lane % 16}; }
};

}  // namespace sparstencil::dense
