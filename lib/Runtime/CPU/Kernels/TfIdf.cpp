//===- TfIdf.cpp - CPU kernel: TfIdfVectorizer ------------------*- C++ -*-===//
//
// Counts the pool's n-grams in each row of integer tokens, as ONNX Runtime
// does: for each skip k in [0, max_skip_count] and each start position, the
// items s, s + (k + 1), s + 2 (k + 1), ... form n-grams of every length in
// [min_gram_length, max_gram_length]; unigrams are counted once, not once
// per skip. The output holds, at ngram_indexes[i] for the i-th pool n-gram,
// its count (TF), 1 or its weight when present (IDF), or count x weight
// (TFIDF). Registered by the Reduce family (CPUKernels.h).
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "Elementwise.h"
#include <algorithm>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

/// One n-gram of the pool: its length, first item in the pool, and the
/// output slot it counts into.
struct PoolGram {
  int64_t Len, Start, Slot;
};

llvm::Error runTfIdf(const KernelContext &C) {
  const TensorRef &X = C.Inputs[0];
  const TensorRef &Out = C.Outputs[0];
  const Node &N = C.N;
  int64_t MinLen = N.getInt("min_gram_length", 1);
  int64_t MaxLen = N.getInt("max_gram_length", 1);
  int64_t MaxSkip = N.getInt("max_skip_count", 0);
  std::string Mode = N.getString("mode", "TF");
  auto Counts = N.getInts("ngram_counts").value_or(std::vector<int64_t>());
  auto Indexes = N.getInts("ngram_indexes").value_or(std::vector<int64_t>());
  auto Pool = N.getInts("pool_int64s");
  const Attribute *Weights = N.attr("weights");
  if (!Pool)
    return C.unsupported("pool_strings (string tensors)");
  if (Mode != "TF" && Mode != "IDF" && Mode != "TFIDF")
    return C.badInput("mode '" + Mode + "'");
  if (MinLen < 1 || MaxLen < MinLen || MaxSkip < 0 || X.Dims.empty() ||
      X.Dims.size() > 2 || Out.Type != ElementType::Float)
    return C.badInput("invalid gram lengths, rank or output type");
  // The pool's n-grams, in order: lengths 1, 2, ... start at Counts[i].
  std::vector<PoolGram> Grams;
  int64_t PoolSize = int64_t(Pool->size()), Ordinal = 0;
  for (size_t I = 0; I < Counts.size(); ++I) {
    int64_t Len = int64_t(I) + 1;
    int64_t End = I + 1 < Counts.size() ? Counts[I + 1] : PoolSize;
    if (Counts[I] < 0 || End > PoolSize || Counts[I] > End)
      return C.badInput("ngram_counts outside the pool");
    for (int64_t S = Counts[I]; S + Len <= End; S += Len, ++Ordinal) {
      if (Ordinal >= int64_t(Indexes.size()))
        return C.badInput("fewer ngram_indexes than pool n-grams");
      Grams.push_back({Len, S, Indexes[size_t(Ordinal)]});
    }
  }
  int64_t Rows = X.Dims.size() == 2 ? X.Dims[0] : 1;
  int64_t Cols = X.Dims.back();
  int64_t Width = Out.Dims.empty() ? 1 : Out.Dims.back();
  for (const PoolGram &G : Grams)
    if (G.Slot < 0 || G.Slot >= Width)
      return C.badInput("ngram_indexes entry outside the output");
  // One output row per input row: an output shaped otherwise (a rank the
  // shape rule gave from attributes the kernel reads differently) would be
  // written past.
  if (Out.numElements() != uint64_t(Rows * Width))
    return C.badInput("an output of " + llvm::Twine(Out.numElements()) +
                      " values for " + llvm::Twine(Rows) + " rows of " +
                      llvm::Twine(Width));
  float *Y = Out.data<float>();
  std::fill(Y, Y + Out.numElements(), 0.0f);
  for (int64_t R = 0; R < Rows; ++R) {
    int64_t Row = R * Cols;
    float *YR = Y + R * Width;
    for (int64_t Skip = 0; Skip <= MaxSkip; ++Skip) {
      int64_t Step = Skip + 1;
      int64_t First = Skip == 0 ? MinLen : std::max<int64_t>(MinLen, 2);
      for (int64_t S = 0; S < Cols; ++S)
        for (const PoolGram &G : Grams) {
          if (G.Len < First || G.Len > MaxLen || S + (G.Len - 1) * Step >= Cols)
            continue;
          bool Match = true;
          for (int64_t K = 0; K < G.Len && Match; ++K) {
            int64_t V = 0;
            readInt(X, uint64_t(Row + S + K * Step), V);
            Match = V == (*Pool)[size_t(G.Start + K)];
          }
          if (Match)
            YR[G.Slot] += 1;
        }
      if (MaxLen == 1)
        break; // Only unigrams: a skip changes nothing.
    }
    for (size_t I = 0; I < Grams.size(); ++I) {
      float &V = YR[Grams[I].Slot];
      float W = Weights && I < Weights->Floats.size()
                    ? float(Weights->Floats[I])
                    : 1.0f;
      if (Mode == "IDF")
        V = V > 0 ? W : 0;
      else if (Mode == "TFIDF")
        V *= W;
    }
  }
  return llvm::Error::success();
}

} // namespace

void registerTfIdfKernels(CPUKernelTable &T) {
  addKernel(
      T, "TfIdfVectorizer",
      Kernel{runTfIdf, nullptr, {ElementType::Int32, ElementType::Int64}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
