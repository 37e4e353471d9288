//===- CUDALowBitOpsTest.cpp - the int4 LLM ops on CUDA against the CPU ---===//
//
// MatMulNBits (both paths), GatherBlockQuantized and GroupQueryAttention
// (a first prompt with rotary, a decode step after a past; a prompt of 1024
// rows and a decode step of 4, one for each attention kernel) run by the CUDA
// backend against the CPU backend (CUDAKernelCompare.h). Without a GPU the
// plan made with the CUDA table must find a device kernel for each step (no
// host step: Executor::create with the table alone), then the test skips.
// Their threads are checked on the host in LowBitThreadTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "CUDAKernelCompare.h"
#include <string>

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::unit;

namespace {

// "{v0, v1, ...}": N pseudo-random values in [0, Mod) (a fixed sequence per
// Seed), as integers, or scaled by Scale and shifted by Shift when either
// is given.
std::string listOf(int N, int Mod, unsigned Seed, double Scale = 1,
                   double Shift = 0) {
  const bool Ints = Scale == 1 && Shift == 0;
  std::string S = "{";
  uint32_t X = Seed;
  for (int I = 0; I < N; ++I) {
    X = X * 1103515245u + 12345u;
    const uint32_t V = (X >> 16) % uint32_t(Mod);
    S += (I ? ", " : "") +
         (Ints ? std::to_string(V) : std::to_string(double(V) * Scale + Shift));
  }
  return S + "}";
}

// MatMulNBits K = 40 (3 blocks of 16, the last padded), N = 3, 4 bits, with
// packed zero points and a bias: 2 rows of A (the GEMV path) and 12 (the
// tiled cuBLAS path); 8 bits with float zero points; GatherBlockQuantized
// of 4-bit rows (16 values, one block; a negative index) feeding an Add.
TEST(CUDAKernels, MatMulNBitsAndGatherBlockQuantized) {
  const std::string Text =
      R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[2,40] a, float[12,40] b, float[2,2,16] e) => (float[2,3] y,
    float[12,3] z, float[2,3] w, float[2,2,16] v)
    <uint8[3,3,8] qb = )" +
      listOf(72, 256, 1) + R"(, float[9] sc = )" + listOf(9, 7, 2, 0.01, 0.01) +
      R"(, uint8[6] zp = )" + listOf(6, 256, 3) + R"(, float[3] bias = )" +
      listOf(3, 5, 4, 0.5, -1) + R"(, uint8[3,3,16] q8 = )" +
      listOf(144, 256, 5) + R"(, float[9] zf = )" + listOf(9, 40, 6, 0.5, 110) +
      R"(, uint8[5,8] emb = )" + listOf(40, 256, 7) + R"(, float[5,1] es = )" +
      listOf(5, 9, 8, 0.02, 0.01) +
      R"(, int64[2,2] ix = {3, -1, 0, 4}> {
  y = com.microsoft.MatMulNBits <K = 40, N = 3, bits = 4, block_size = 16> (a, qb, sc, zp, , bias)
  z = com.microsoft.MatMulNBits <K = 40, N = 3, bits = 4, block_size = 16> (b, qb, sc, zp, , bias)
  w = com.microsoft.MatMulNBits <K = 40, N = 3, bits = 8, block_size = 16> (a, q8, sc, zf)
  g = com.microsoft.GatherBlockQuantized <bits = 4, block_size = 16> (emb, ix, es)
  v = Add(g, e)
})";
  compareBackends(Text.c_str());
}

// GroupQueryAttention, 4 query heads over 2 KV heads of 8: the first prompt
// of 3 tokens with rotary; a decode step after a past of 3 (graph inputs),
// with a local window of 2.
TEST(CUDAKernels, GroupQueryAttention) {
  const std::string Text =
      R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[1,3,32] q, float[1,3,16] k, float[1,3,16] v, float[1,1,32] dq,
   float[1,1,16] dk, float[1,1,16] dv, float[1,2,3,8] pk, float[1,2,3,8] pv)
   => (float[1,3,32] o, float[1,2,3,8] ck, float[1,2,3,8] cv,
       float[1,1,32] d, float[1,2,4,8] nk, float[1,2,4,8] nv)
    <int32[1] sl = {2}, int32[1] tl = {3}, int32[1] dsl = {3},
     int32[1] dtl = {4}, float[6,4] cs = )" +
      listOf(24, 100, 9, 0.02, -1) + R"(, float[6,4] sn = )" +
      listOf(24, 100, 10, 0.02, -1) + R"(> {
  o, ck, cv = com.microsoft.GroupQueryAttention <num_heads = 4, kv_num_heads = 2, do_rotary = 1> (q, k, v, , , sl, tl, cs, sn)
  d, nk, nv = com.microsoft.GroupQueryAttention <num_heads = 4, kv_num_heads = 2, local_window_size = 2> (dq, dk, dv, pk, pv, dsl, dtl)
})";
  compareBackends(Text.c_str());
}

// Both of GroupQueryAttention's attention kernels: a first prompt of 128
// tokens with 8 query heads is 1024 rows, a warp each; a decode step after
// a past of 200 is 4 rows, a block each whose 8 warps take 25 keys apiece
// and merge them.
TEST(CUDAKernels, GroupQueryAttentionBothKernels) {
  const char *Text =
      R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[1,128,64] q, float[1,128,16] k, float[1,128,16] v, float[1,1,32] dq,
   float[1,1,16] dk, float[1,1,16] dv, float[1,2,200,8] pk, float[1,2,200,8] pv)
   => (float[1,128,64] o, float[1,2,128,8] ck, float[1,2,128,8] cv,
       float[1,1,32] d, float[1,2,201,8] nk, float[1,2,201,8] nv)
    <int32[1] sl = {127}, int32[1] tl = {128}, int32[1] dsl = {200},
     int32[1] dtl = {201}> {
  o, ck, cv = com.microsoft.GroupQueryAttention <num_heads = 8, kv_num_heads = 2> (q, k, v, , , sl, tl)
  d, nk, nv = com.microsoft.GroupQueryAttention <num_heads = 4, kv_num_heads = 2> (dq, dk, dv, pk, pv, dsl, dtl)
})";
  compareBackends(Text);
}

} // namespace
