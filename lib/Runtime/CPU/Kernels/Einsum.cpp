//===- Einsum.cpp - CPU kernel: Einsum as one loop over its letters -------===//
//
// An equation names a label per operand axis; "..." stands for the leading
// broadcast axes. The kernel gives every label a size and, for each
// operand, a stride (repeated labels add their strides: a diagonal), then
// sums the product of the operands over the labels missing from the output.
// Any equation ONNX allows runs this way, at a cost of the product of all
// label sizes, fine for the small contractions it is used for here. The
// CUDA kernel runs the same loop from the same setup (einsumSetup).
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "TensorUtil.h"
#include <map>
#include <string>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

/// A label: a letter, or 256 + j for the j-th broadcast axis of "...".
using Label = int;

struct ParsedTerm {
  std::vector<Label> Labels;
  bool Ellipsis = false;
};

/// Parses one term for an operand of rank Rank (-1 for the output, whose
/// ellipsis rank is EllRank). False on a malformed term.
bool parseTerm(llvm::StringRef S, int64_t Rank, int64_t EllRank,
               ParsedTerm &T) {
  size_t Dots = S.find("...");
  int64_t Letters = int64_t(S.size()) - (Dots == llvm::StringRef::npos ? 0 : 3);
  int64_t E = Dots == llvm::StringRef::npos ? 0
              : Rank < 0                    ? EllRank
                                            : Rank - Letters;
  if (E < 0 || (Rank >= 0 && Dots == llvm::StringRef::npos && Letters != Rank))
    return false;
  for (size_t I = 0; I < S.size(); ++I) {
    if (I == Dots) {
      T.Ellipsis = true;
      for (int64_t J = 0; J < E; ++J)
        T.Labels.push_back(256 + int(EllRank - E + J));
      I += 2;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(S[I])))
      return false;
    T.Labels.push_back(S[I]);
  }
  return true;
}

template <typename T>
void einsumTyped(const KernelContext &C, const EinsumSetup &E) {
  const size_t NOp = C.Inputs.size();
  const DimVector &OutDims = E.OutDims, &SumDims = E.SumDims;
  const std::vector<DimVector> &OS = E.OutStrides, &SS = E.SumStrides;
  const int64_t NOut = productOf(OutDims, 0, OutDims.size());
  const int64_t NSum = productOf(SumDims, 0, SumDims.size());
  T *Y = C.Outputs[0].data<T>();
  DimVector Base(NOp), Off(NOp);
  for (int64_t O = 0; O < NOut; ++O) {
    int64_t Rem = O;
    std::fill(Base.begin(), Base.end(), 0);
    for (int64_t K = int64_t(OutDims.size()) - 1; K >= 0; --K) {
      int64_t X = Rem % OutDims[K];
      Rem /= OutDims[K];
      for (size_t P = 0; P < NOp; ++P)
        Base[P] += X * OS[P][K];
    }
    T Acc = T(0);
    for (int64_t S = 0; S < NSum; ++S) {
      int64_t R = S;
      Off = Base;
      for (int64_t K = int64_t(SumDims.size()) - 1; K >= 0; --K) {
        int64_t X = R % SumDims[K];
        R /= SumDims[K];
        for (size_t P = 0; P < NOp; ++P)
          Off[P] += X * SS[P][K];
      }
      T Prod = T(1);
      for (size_t P = 0; P < NOp; ++P)
        Prod = T(Prod * C.Inputs[P].data<const T>()[Off[P]]);
      Acc = T(Acc + Prod);
    }
    Y[O] = Acc;
  }
}

} // namespace

llvm::Error einsumSetup(const KernelContext &C, EinsumSetup &E) {
  std::string Eq;
  for (char Ch : C.N.getString("equation", ""))
    if (Ch != ' ')
      Eq.push_back(Ch);
  llvm::StringRef EqRef(Eq);
  auto [Lhs, Rhs] = EqRef.split("->");
  bool Explicit = EqRef.contains("->");
  llvm::SmallVector<llvm::StringRef, 4> Terms;
  Lhs.split(Terms, ',');
  if (Terms.size() != C.Inputs.size())
    return C.badInput("equation has " + llvm::Twine(Terms.size()) +
                      " operands, the node " + llvm::Twine(C.Inputs.size()));
  int64_t EllRank = 0;
  for (size_t P = 0; P < Terms.size(); ++P)
    if (Terms[P].contains("..."))
      EllRank = std::max<int64_t>(EllRank, int64_t(C.Inputs[P].Dims.size()) -
                                               int64_t(Terms[P].size() - 3));
  std::map<Label, int64_t> Size, Count;
  std::vector<std::map<Label, int64_t>> Strides(Terms.size());
  for (size_t P = 0; P < Terms.size(); ++P) {
    const TensorRef &In = C.Inputs[P];
    ParsedTerm T;
    if (!parseTerm(Terms[P], int64_t(In.Dims.size()), EllRank, T) ||
        T.Labels.size() != In.Dims.size())
      return C.badInput("term '" + Terms[P] + "' does not fit operand " +
                        llvm::Twine(P));
    DimVector S = stridesOf(In.Dims);
    for (size_t K = 0; K < T.Labels.size(); ++K) {
      Label L = T.Labels[K];
      int64_t D = In.Dims[K];
      ++Count[L];
      if (D == 1) { // broadcasts: stride 0, whatever size others give it
        Size.emplace(L, 1);
        continue;
      }
      auto It = Size.find(L);
      if (It != Size.end() && It->second != D && It->second != 1)
        return C.badInput("label sizes differ between operands");
      Size[L] = D;
      Strides[P][L] += S[K];
    }
  }
  std::vector<Label> Out, Summed;
  if (Explicit) {
    ParsedTerm T;
    if (!parseTerm(Rhs, -1, EllRank, T))
      return C.badInput("malformed output term '" + Rhs + "'");
    Out = T.Labels;
  } else {
    for (int64_t J = 0; J < EllRank; ++J)
      Out.push_back(256 + int(J));
    for (auto &[L, N] : Count) // std::map: letters in alphabetical order
      if (L < 256 && N == 1)
        Out.push_back(L);
  }
  for (auto &[L, N] : Size)
    if (std::find(Out.begin(), Out.end(), L) == Out.end())
      Summed.push_back(L);
  if (Out.size() != C.Outputs[0].Dims.size())
    return C.badInput("output rank disagrees with the equation");
  for (size_t K = 0; K < Out.size(); ++K)
    if (!Size.count(Out[K]) || Size[Out[K]] != C.Outputs[0].Dims[K])
      return C.badInput("output dims disagree with the equation");
  for (const TensorRef &In : C.Inputs)
    if (In.Type != C.Outputs[0].Type)
      return C.badInput("operand types differ");
  // Per operand: its stride per output axis and per summed axis.
  E = EinsumSetup();
  for (Label L : Out)
    E.OutDims.push_back(Size.at(L));
  for (Label L : Summed)
    E.SumDims.push_back(Size.at(L));
  E.OutStrides.resize(Terms.size());
  E.SumStrides.resize(Terms.size());
  for (size_t P = 0; P < Terms.size(); ++P) {
    for (Label L : Out)
      E.OutStrides[P].push_back(Strides[P].count(L) ? Strides[P].at(L) : 0);
    for (Label L : Summed)
      E.SumStrides[P].push_back(Strides[P].count(L) ? Strides[P].at(L) : 0);
  }
  return llvm::Error::success();
}

llvm::Error runEinsum(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 0))
    return E;
  EinsumSetup E;
  if (llvm::Error Err = einsumSetup(C, E))
    return Err;
  if (!visitNumeric(C.Outputs[0].Type,
                    [&](auto Tag) { einsumTyped<decltype(Tag)>(C, E); }))
    return C.unsupported("Einsum of type " +
                         elementTypeName(C.Outputs[0].Type));
  return llvm::Error::success();
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
