//===- ConvPointwise.cpp - pointwise float convolutions on convGemm -------===//
//
// A pointwise (1x1, stride 1, no padding) convolution's input planes already
// are the columns of its product, so each (image, group) product reads them
// in place. One parallelFor runs every image's tiles, each with its bias or
// residual folded into the product and its epilogue run while it is in
// cache (docs/runtime.md).
//
//===----------------------------------------------------------------------===//
#include "ConvGemm.h"
#include "TensorUtil.h"
#include <algorithm>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

/// Row blocks a product of Rows rows is cut into when its columns are too
/// few to share: two per thread, of at least 24 rows (four of convGemm's
/// register tiles).
int64_t rowBlocks(int64_t Rows, int64_t Threads) {
  return std::max<int64_t>(1, std::min(2 * Threads, Rows / 24));
}

/// Maps of at most this many positions (7 x 7, 10 x 10: fewer columns
/// than convGemm packs A for) are multiplied image after image under one
/// packing of the weights. At 14 x 14 it measured no faster.
constexpr int64_t SmallMap = 127;

} // namespace

void pointwiseConvFloat(const KernelContext &C, int64_t Batch, int64_t Group,
                        int64_t Cg, int64_t Mg, int64_t OutSize,
                        bool Accumulate, ConvTileFn Post,
                        const ConvClamp *Clamp) {
  const float *X = C.Inputs[0].data<const float>();
  const float *W = C.Inputs[1].data<const float>();
  const float *Bias =
      hasInput(C, 2) ? C.Inputs[2].data<const float>() : nullptr;
  float *Y = C.Outputs[0].data<float>();
  const int64_t Threads = int64_t(C.Pool.threads());
  if (OutSize <= SmallMap && Batch > 1) {
    // Few columns an image: a task is a block of rows (a multiple of the
    // six-row tile) over a run of images, its A packed once for them
    // (convGemmImages). About 96 rows a block: fewer left B's packing a
    // tenth of the time (42 rows: 76 GF/s a core, 84 to 120 rows: 83-86);
    // then the images cut into runs until every thread has two tasks.
    const int64_t RB = std::clamp<int64_t>((Mg + 48) / 96, 1, 2 * Threads);
    const int64_t IB = std::min(Batch, (2 * Threads + RB - 1) / RB);
    const int64_t RowStep = ((Mg + RB - 1) / RB + 5) / 6 * 6;
    const int64_t ImgStep = (Batch + IB - 1) / IB;
    C.Pool.parallelFor(Group * RB * IB, 1, [&](int64_t T0, int64_t T1) {
      for (int64_t Task = T0; Task < T1; ++Task) {
        const int64_t Gr = Task / (RB * IB), Block = Task / IB % RB;
        const int64_t N0 = Task % IB * ImgStep,
                      N1 = std::min(Batch, N0 + ImgStep);
        const int64_t M0 = Block * RowStep, M1 = std::min(Mg, M0 + RowStep);
        if (M0 >= M1 || N0 >= N1)
          continue;
        const int64_t Plane0 = (N0 * Group + Gr) * Mg;
        convGemmImages(M1 - M0, OutSize, Cg, W + (Gr * Mg + M0) * Cg, Cg,
                       X + (N0 * Group + Gr) * Cg * OutSize, OutSize,
                       Y + (Plane0 + M0) * OutSize, OutSize,
                       Bias ? Bias + Gr * Mg + M0 : nullptr, Accumulate, Clamp,
                       N1 - N0, Group * Cg * OutSize, Group * Mg * OutSize);
        if (Post && !Clamp)
          for (int64_t N = N0; N < N1; ++N)
            Post((N * Group + Gr) * Mg + M0, (N * Group + Gr) * Mg + M1, 0,
                 OutSize);
      }
    });
    return;
  }
  // Column tiles as wide as the image while the tile's output is at most
  // half a megabyte (so that the epilogue finds it in L2), halved until it
  // is, in multiples of 16 columns: a narrow or ragged tile leaves convGemm
  // edge panels and no room to pack A.
  int64_t Width = OutSize;
  while (Width > 256 && uint64_t(Mg * Width) * sizeof(float) > 512 * 1024)
    Width = ((Width + 1) / 2 + 15) / 16 * 16;
  const int64_t Count = (OutSize + Width - 1) / Width;
  const int64_t Products = Batch * Group;
  const int64_t RB = Products * Count >= 2 * Threads
                         ? 1
                         : rowBlocks(Mg, (2 * Threads + Products * Count - 1) /
                                             (Products * Count));
  const int64_t RowStep = (Mg + RB - 1) / RB;
  const int64_t Tasks = Products * RB * Count;
  C.Pool.parallelFor(Tasks, 1, [&](int64_t T0, int64_t T1) {
    for (int64_t Task = T0; Task < T1; ++Task) {
      const int64_t Tile = Task % Count;
      const int64_t Block = Task / Count % RB;
      const int64_t Prod = Task / (Count * RB);
      const int64_t N = Prod / Group, Gr = Prod % Group;
      const int64_t M0 = Block * RowStep, M1 = std::min(Mg, M0 + RowStep);
      const int64_t N0 = Tile * Width, N1 = std::min(OutSize, N0 + Width);
      if (M0 >= M1)
        continue;
      const float *Xg = X + (N * Group + Gr) * Cg * OutSize;
      const int64_t Plane0 = N * Group * Mg + Gr * Mg;
      convGemm(M1 - M0, N1 - N0, Cg, W + (Gr * Mg + M0) * Cg, Cg, Xg + N0,
               OutSize, Y + (Plane0 + M0) * OutSize + N0, OutSize,
               Bias ? Bias + Gr * Mg + M0 : nullptr, Accumulate, Clamp);
      if (Post && !Clamp)
        Post(Plane0 + M0, Plane0 + M1, N0, N1);
    }
  });
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
