//===- ConvGeometry.h - kernel, stride, dilation and pads of a window op -===//
//
// Conv, ConvTranspose and the pools read the same attributes (kernel_shape,
// strides, dilations, pads, auto_pad) and must agree on them; the workspace
// function and the kernel must agree too, or the im2col buffer would be
// sized for one geometry and filled for another. This header computes them
// once from the node and the (already inferred) input and output dims.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_CONVGEOMETRY_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_CONVGEOMETRY_H

#include "PoolPoint.h"
#include "TensorUtil.h"
#include <string>

namespace oomplan {
namespace runtime {
namespace cpu {

/// Per spatial axis: input size In, output size Out, kernel K, stride S,
/// dilation D, and the padding at the beginning and end (the end matters
/// only to AveragePool's count_include_pad).
struct WindowGeometry {
  DimVector In, Out, K, S, D, PadBegin, PadEnd;
  size_t rank() const { return In.size(); }
  int64_t inSize() const { return productOf(In, 0, In.size()); }
  int64_t outSize() const { return productOf(Out, 0, Out.size()); }
  int64_t kernelSize() const { return productOf(K, 0, K.size()); }
};

/// Kernel offsets of kernel index KIdx, per axis.
inline void kernelOffsets(const WindowGeometry &G, int64_t KIdx,
                          DimVector &KK) {
  KK.resize(G.rank());
  for (int64_t I = int64_t(G.rank()) - 1; I >= 0; --I) {
    KK[I] = KIdx % G.K[I];
    KIdx /= G.K[I];
  }
}

/// Fills G from node N for spatial input dims In, output dims Out and the
/// kernel dims KernelFromW (W's trailing dims; empty for the pools, which
/// need kernel_shape). Transposed: ConvTranspose's padding rules. Returns an
/// empty string or what is wrong.
inline std::string windowGeometry(const Node &N, llvm::ArrayRef<int64_t> In,
                                  llvm::ArrayRef<int64_t> Out,
                                  llvm::ArrayRef<int64_t> KernelFromW,
                                  bool Transposed, WindowGeometry &G) {
  const size_t R = In.size();
  if (Out.size() != R)
    return "output rank differs from the input's";
  G.In.assign(In.begin(), In.end());
  G.Out.assign(Out.begin(), Out.end());
  auto Ints = [&](llvm::StringRef Name, int64_t Default, DimVector &V) {
    if (auto A = N.getInts(Name))
      V.assign(A->begin(), A->end());
    else
      V.assign(R, Default);
  };
  if (auto A = N.getInts("kernel_shape"))
    G.K.assign(A->begin(), A->end());
  else
    G.K.assign(KernelFromW.begin(), KernelFromW.end());
  Ints("strides", 1, G.S);
  Ints("dilations", 1, G.D);
  DimVector Pads, OutPad;
  Ints("output_padding", 0, OutPad);
  if (auto A = N.getInts("pads"))
    Pads.assign(A->begin(), A->end());
  else
    Pads.assign(2 * R, 0);
  if (G.K.size() != R || G.S.size() != R || G.D.size() != R ||
      Pads.size() != 2 * R || OutPad.size() != R)
    return "kernel_shape, strides, dilations, pads or output_padding do not "
           "match the spatial rank";
  for (size_t I = 0; I < R; ++I)
    if (G.K[I] <= 0 || G.S[I] <= 0 || G.D[I] <= 0)
      return "kernel, stride and dilation must be positive";
  std::string AutoPad = N.getString("auto_pad", "NOTSET");
  G.PadBegin.assign(R, 0);
  G.PadEnd.assign(R, 0);
  for (size_t I = 0; I < R; ++I) {
    const int64_t Extent = (G.K[I] - 1) * G.D[I] + 1;
    if (AutoPad == "SAME_UPPER" || AutoPad == "SAME_LOWER" ||
        (Transposed && N.attr("output_shape") && AutoPad != "VALID")) {
      int64_t Total =
          Transposed
              ? G.S[I] * (In[I] - 1) + OutPad[I] + Extent - Out[I]
              : std::max<int64_t>(0, (Out[I] - 1) * G.S[I] + Extent - In[I]);
      // The odd pixel goes to the end for SAME_UPPER, to the beginning
      // otherwise (ConvTranspose with output_shape and no auto_pad too).
      // Floor division, as ONNX's numpy reference: an output_shape past
      // the natural size gives a negative total, padded at the end.
      int64_t Half = Total >= 0 ? Total / 2 : -((1 - Total) / 2);
      G.PadBegin[I] = AutoPad == "SAME_UPPER" ? Half : Total - Half;
      G.PadEnd[I] = Total - G.PadBegin[I];
    } else if (AutoPad == "NOTSET") {
      G.PadBegin[I] = Pads[I];
      G.PadEnd[I] = Pads[R + I];
    } else if (AutoPad != "VALID") {
      return "auto_pad '" + AutoPad + "'";
    }
  }
  return "";
}

/// A Conv's (Transposed: a ConvTranspose's) geometry from its refs: X
/// (Inputs[0]), W (Inputs[1]) and Y of one rank, at least 3, W's spatial
/// dims the kernel's. Returns an empty string or what is wrong (Conv.cpp;
/// the CUDA quantized convolution reads a node so too).
std::string convGeometry(const Node &N, llvm::ArrayRef<TensorRef> Inputs,
                         llvm::ArrayRef<TensorRef> Outputs, bool Transposed,
                         WindowGeometry &G);
/// Conv's channels: X [N, C, ...], W [M, C / group, ...], Y [N, M, ...],
/// C and M divisible by group. Returns an empty string or what is wrong.
std::string convChannels(const Node &N, const TensorRef &X, const TensorRef &W,
                         const TensorRef &Y);

/// G as PoolPoint.h's window (row- and column-major input strides), with
/// the node's count_include_pad, storage_order and p; false when its rank
/// is above pool::Window::MaxRank. Shared by the CPU's generic pool path
/// and CUDA's own pool kernel.
inline bool poolWindow(const WindowGeometry &G, const Node &N,
                       pool::Window &W) {
  if (G.rank() > size_t(pool::Window::MaxRank))
    return false;
  W.Rank = int(G.rank());
  int64_t Row = 1, Col = 1;
  for (int I = W.Rank - 1; I >= 0; --I) {
    W.InStride[I] = Row;
    Row *= G.In[I];
  }
  for (int I = 0; I < W.Rank; ++I) {
    W.ColStride[I] = Col;
    Col *= G.In[I];
    W.In[I] = G.In[I];
    W.Out[I] = G.Out[I];
    W.K[I] = G.K[I];
    W.S[I] = G.S[I];
    W.D[I] = G.D[I];
    W.PadBegin[I] = G.PadBegin[I];
    W.PadEnd[I] = G.PadEnd[I];
  }
  W.KernelSize = G.kernelSize();
  W.CountPad = N.getInt("count_include_pad", 0) != 0;
  W.ColumnMajor = N.getInt("storage_order", 0) != 0;
  W.P = double(N.getInt("p", 2));
  return true;
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan

#endif
