//===- QuantizedMatMul.cu - MatMulInteger and QLinearMatMul ---------------===//
//
// Products of 8-bit operands less their zero points: |a - za|, |b - zb| <=
// 255, so each product fits an int32 and a tile's 16 of them too; the
// tiles' sums go to an int64, exact as the CPU kernel's double sums are
// (to 2^53), so both backends give the same integers. A 16 x 16 block of
// outputs per thread block, the operands' tiles in shared memory with
// their zero points subtracted (taken along the operand's flat index, as
// the CPU widens them); grid-stride over row tiles, column tiles and
// batches. cuBLAS's int8 GEMM would take neither the zero points nor the
// broadcast batches. QLinearMatMul requantizes in the epilogue with the
// CPU's formula in double (rint: half to even). The operands' and the
// epilogue's index math is ThreadMath.h's, emulated on the host by
// ThreadMathTest.cpp with this kernel's tiles.
//
//===----------------------------------------------------------------------===//
#include "Launching.cuh"
#include "ThreadMath.h"
#include <cstdint>
#include <cuda_runtime.h>

namespace oomplan {
namespace runtime {
namespace cuda {

namespace {
constexpr int Tile = 16;

__global__ void __launch_bounds__(Tile *Tile) qMatMulKernel(QMatMulArgs P) {
  __shared__ int32_t As[Tile][Tile + 1], Bs[Tile][Tile + 1];
  const int Tx = threadIdx.x, Ty = threadIdx.y;
  const int64_t RowTiles = (P.M + Tile - 1) / Tile,
                ColTiles = (P.N + Tile - 1) / Tile;
  for (int64_t Bt = blockIdx.z; Bt < P.Batches; Bt += gridDim.z) {
    int64_t AOff, BOff;
    thread::qBatchOffsets(P, Bt, AOff, BOff);
    for (int64_t RT = blockIdx.y; RT < RowTiles; RT += gridDim.y)
      for (int64_t CT = blockIdx.x; CT < ColTiles; CT += gridDim.x) {
        const int64_t Row = RT * Tile + Ty, Col = CT * Tile + Tx;
        int64_t Acc = 0;
        for (int64_t K0 = 0; K0 < P.K; K0 += Tile) {
          thread::qTileLoad(P, AOff, BOff, Row, Col, K0, Tx, Ty, As[Ty][Tx],
                            Bs[Ty][Tx]);
          __syncthreads();
          int32_t Part = 0; // 16 products of at most 255^2: no overflow
          for (int KK = 0; KK < Tile; ++KK)
            Part += As[Ty][KK] * Bs[KK][Tx];
          Acc += Part;
          __syncthreads();
        }
        if (Row < P.M && Col < P.N)
          thread::qStore(P, (Bt * P.M + Row) * P.N + Col, Acc);
      }
  }
}
} // namespace

int quantizedMatMul(const QMatMulArgs &P, cudaStream_t Stream) {
  if (P.M == 0 || P.N == 0 || P.Batches == 0)
    return 0;
  auto Cap = [](int64_t V) { return unsigned(V < 65535 ? V : 65535); };
  const dim3 Grid(Cap((P.N + Tile - 1) / Tile), Cap((P.M + Tile - 1) / Tile),
                  Cap(P.Batches));
  qMatMulKernel<<<Grid, dim3(Tile, Tile), 0, Stream>>>(P);
  return lastError();
}

} // namespace cuda
} // namespace runtime
} // namespace oomplan
