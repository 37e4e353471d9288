//===- FuzzONNXRuntime.cpp - libFuzzer target: models planned and run -----===//
//
// Plans a model as oomplan-run does (driver::planExecutable) and runs it on
// the CPU executor, whose regions AddressSanitizer watches byte by byte in
// this build (lib/Runtime/ArenaShadow.h): a kernel reading past an operand,
// or a shape check that lets a mismatched input through to a kernel, is a
// report, not garbage in an output. The first four bytes say how to run;
// the rest is the model:
//   byte 0: bit 0 ONNX text (else binary); bit 1 graph inputs and outputs
//           in the arena; bit 2 no in-place writes; bit 3 --poison; bit 4
//           the staged device (the CUDA path of the executor, on host
//           memory); bit 5 a second run;
//   byte 1: which declared input dim (counting over the inputs' axes in
//           order) is changed; past the last, none is;
//   byte 2: its new size, 0 to 7;
//   byte 3: the seed of the input values, of weights a model names but does
//           not hold, and of the sizes of symbols and unknown dims (1 to 3).
// Seeds: ONNX's node tests and the models under test/ (utils/ci/fuzz.sh).
// Models that are merely big or long are skipped (MaxRunBytes,
// MaxRunFlops), so that a timeout or an out-of-memory is a finding.
//
//===----------------------------------------------------------------------===//
#include "FuzzModel.h"
#include "oomplan/Cost/CostModel.h"
#include "oomplan/Driver/Executable.h"
#include "oomplan/Driver/Import.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/Runtime/Backend.h"
#include "oomplan/Runtime/Device.h"
#include "oomplan/Runtime/RandomInputs.h"

using namespace oomplan;

namespace {
/// Plans whose regions add up to more are not run: a run's time grows with
/// its bytes, and 16 MiB keeps every op of ONNX's node tests well under a
/// second even under the sanitizers.
constexpr uint64_t MaxRunBytes = 16 << 20;
/// And plans of more operations than this (the cost model's count, a
/// window's reads included): the kernels' general N-D loops run about 1 us
/// per operation under the sanitizers at -O1, so this is a few seconds at
/// most, where a 3-D MaxPool of 11 million window reads took 10 s. ONNX's
/// node tests stay far below it.
constexpr double MaxRunFlops = 4e6;
constexpr size_t HeaderBytes = 4;

// Every input's declared dims, symbols and unknown dims at 1..3 from the
// seed, and the one that byte 1 picks changed to byte 2's size.
std::vector<api::InputShape> inputShapes(const Graph &G, const uint8_t *H) {
  std::vector<api::InputShape> Shapes;
  unsigned Axis = 0;
  for (ValueId V : G.Inputs) {
    const Value &Val = G.Values[V];
    if (!Val.HasDeclaredShape)
      continue;
    api::InputShape S;
    S.Name = Val.Name;
    for (const DeclaredDim &D : Val.Shape) {
      int64_t Size =
          D.K == DeclaredDim::Kind::Static ? D.Size : 1 + (H[3] + Axis) % 3;
      if (Axis++ == H[1])
        Size = H[2] % 8;
      S.Dims.push_back(Size);
    }
    Shapes.push_back(std::move(S));
  }
  return Shapes;
}

void runModel(llvm::StringRef Model, const uint8_t *H) {
  bool Text = H[0] & 1;
  const char *Path = Text ? "fuzz.onnxtxt" : "fuzz.onnx";
  auto G = Text ? importModelText(Model, Path, driver::importOptions())
                : importModelBinary(Model, Path, driver::importOptions());
  if (!G)
    return fuzz::checkError(G.takeError(), "import");
  if ((*G)->Nodes.size() > fuzz::MaxNodes ||
      (*G)->Values.size() > fuzz::MaxValues)
    return;
  api::Request R;
  R.ModelPath = Path;
  R.ModelBytes = Model.str();
  R.InputShapes = inputShapes(**G, H);
  R.IOInArena = H[0] & 2;
  R.InPlace = !(H[0] & 4);
  // As FuzzModel.cpp: the placement without the searches.
  R.Algorithm = "multi-ordering";
  R.TimeLimitSeconds = 0.25;
  const runtime::KernelTable &Kernels =
      *cantFail(runtime::backendKernels("cpu"));
  auto X = driver::planExecutable(R, Kernels);
  if (!X)
    return fuzz::checkError(X.takeError(), "plan");
  if (X->P.totalBytes() > MaxRunBytes || X->Passes != 1)
    return;
  // Work, not only bytes: a 3-D pooling or a window that a mutation grew
  // makes a plan of a few megabytes run for tens of seconds under the
  // sanitizers, a timeout that says nothing about the runtime's safety.
  const ConcreteDims Dims = evaluateDims(*X->G, X->Shapes, X->Bindings);
  double Flops = 0;
  for (NodeId N = 0; N < NodeId(X->G->Nodes.size()); ++N)
    Flops += nodeFlops(*X->G, Dims, N);
  if (!(Flops <= MaxRunFlops))
    return;
  runtime::ExecOptions O;
  O.Poison = H[0] & 8;
  if (H[0] & 16)
    O.Dev = &runtime::stagedHostDevice();
  auto Ex = runtime::Executor::create(*X->G, X->P, X->Info, Kernels, O);
  if (!Ex)
    return fuzz::checkError(Ex.takeError(), "executor");
  if (llvm::Error E = (*Ex)->loadWeights(R.ModelPath, llvm::StringRef(Model),
                                         /*RandomMissingSeed=*/H[3]))
    return fuzz::checkError(std::move(E), "weights");
  const Graph &Gr = *X->G;
  for (size_t I = 0; I < Gr.Inputs.size(); ++I) {
    runtime::TensorRef T = (*Ex)->tensor(Gr.Inputs[I]);
    if (!T.present())
      continue;
    int64_t Bound = runtime::integerInputBound(
        Gr, Gr.Inputs[I], [&](ValueId W) { return (*Ex)->tensor(W); });
    runtime::fillRandom(T, H[3], I, Bound);
  }
  for (int Run = 0; Run < (H[0] & 32 ? 2 : 1); ++Run)
    if (llvm::Error E = (*Ex)->run())
      return fuzz::checkError(std::move(E), "run");
  // The caller reads every output: each byte must be addressable.
  uint8_t Sum = 0;
  for (ValueId V : Gr.Outputs) {
    runtime::TensorRef T = (*Ex)->tensor(V);
    if (T.present())
      for (uint64_t B = 0; B < T.bytes(); ++B)
        Sum += T.data<uint8_t>()[B];
  }
  asm volatile("" : : "r"(Sum)); // keep the reads
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size < HeaderBytes || Size > fuzz::MaxInputBytes)
    return -1;
  llvm::StringRef Model(reinterpret_cast<const char *>(Data) + HeaderBytes,
                        Size - HeaderBytes);
  runModel(Model, Data);
  return 0;
}
