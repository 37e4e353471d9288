//===- DriverRunInputs.cpp - the inputs one execute() call is given -------===//
//
// Inputs given in memory and by file resolve to one map by name; the
// messages name the file (or "(in memory)"), the input and both shapes.
//
//===----------------------------------------------------------------------===//
#include "RunInputs.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Driver/Import.h"
#include "oomplan/Runtime/RandomInputs.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <cstring>
#include <set>

using namespace llvm;
using namespace oomplan;
using namespace oomplan::driver;

/// How a tensor given in memory is named in messages, where a file's path
/// would be.
static const char *InMemory = "(in memory)";

std::string driver::dimsText(ArrayRef<int64_t> Dims) {
  if (Dims.empty())
    return "scalar";
  std::string S;
  for (size_t I = 0; I < Dims.size(); ++I)
    S += (I ? "x" : "") + std::to_string(Dims[I]);
  return S;
}

static std::string inputNames(const Graph &G) {
  std::vector<std::string> Names;
  for (ValueId I : G.Inputs)
    Names.push_back(G.Values[I].Name);
  return join(Names, ", ");
}

static bool isInput(const Graph &G, StringRef Name) {
  ValueId V = G.findValue(Name);
  return V != NoId && is_contained(G.Inputs, V);
}

Expected<InputSources> RunInputs::sources(const Graph &G) const {
  InputSources Given;
  for (const api::Tensor &T : Mem) {
    if (!isInput(G, T.Name))
      return makeInputError(
          "a tensor given in memory is named '" + T.Name +
          "': the model has no such input (its inputs: " + inputNames(G) + ")");
    Given[T.Name] = {InMemory, &T};
  }
  for (StringRef Arg : Opt.Inputs) {
    auto [Name, File] = Arg.split('=');
    if (Name.empty() || File.empty())
      return makeInputError("--input expects NAME=FILE.pb, got '" + Arg + "'");
    if (!isInput(G, Name))
      return makeInputError("--input " + Arg + ": the model has no input '" +
                            Name + "' (its inputs: " + inputNames(G) + ")");
    InputSource &S = Given[Name];
    if (!S.Tensor) // in memory comes first
      S = {File.str(), nullptr};
  }
  for (size_t I = 0; I < G.Inputs.size() && !Opt.InputsDir.empty(); ++I) {
    const std::string &Name = G.Values[G.Inputs[I]].Name;
    if (Given.count(Name))
      continue;
    SmallString<256> P(Opt.InputsDir);
    sys::path::append(P, "input_" + std::to_string(I) + ".pb");
    if (!sys::fs::exists(P))
      return makeIOError(P + ": no such file (graph input " + Twine(I) + ", '" +
                         Name + "')");
    Given[Name] = {P.str().str(), nullptr};
  }
  return Given;
}

// A file read now, or a tensor in memory checked against its own type and
// dims and copied.
static Expected<TensorFile> load(const InputSource &S) {
  if (!S.Tensor)
    return readTensorFile(S.Path);
  const api::Tensor &T = *S.Tensor;
  TensorFile F;
  F.Name = T.Name;
  for (unsigned N = 1; N <= MaxElementTypeNumber; ++N) {
    ElementType Type;
    if (elementTypeFromNumber(N, Type) && elementTypeName(Type) == T.Type)
      F.Type = Type;
  }
  if (F.Type == ElementType::Undefined || F.Type == ElementType::String)
    return makeInputError(S.Path + ": input '" + T.Name +
                          "' has element type '" + T.Type +
                          "', not one oomplan can run (float, int64, ...)");
  uint64_t Elements = 1, Bytes = 0;
  for (int64_t D : T.Dims) {
    if (D < 0 || !checkedMul(Elements, uint64_t(D), Elements))
      return makeInputError(S.Path + ": input '" + T.Name + "' has dims " +
                            dimsText(T.Dims) + ", not a tensor's");
  }
  if (!packedBytes(F.Type, Elements, Bytes) || Bytes != T.Data.size())
    return makeInputError(S.Path + ": input '" + T.Name + "' holds " +
                          Twine(T.Data.size()) + " bytes, its type and dims (" +
                          T.Type + " " + dimsText(T.Dims) + ") need " +
                          Twine(Bytes));
  F.Dims = T.Dims;
  F.Bytes = T.Data;
  return F;
}

Error RunInputs::bindDims(api::Request &R, std::optional<StringRef> AsWritten,
                          const StringSet<> &Skip) {
  auto G = importModel(R.ModelPath, AsWritten);
  if (!G) {
    consumeError(G.takeError()); // planning says what is wrong with it
    return Error::success();
  }
  const Graph &M = **G;
  ReadForDims.clear();
  auto Given = sources(M);
  if (!Given)
    return Given.takeError();
  // Symbols a dim option binds are skipped here only to read fewer files;
  // the roles (--batch, --seq) are the planner's to apply (bindGivenInputs).
  std::set<SymbolId> Bound;
  for (SymbolId S = 0; S < M.Symbols.size(); ++S)
    if (any_of(R.Dims, [&](const api::SymbolValue &D) {
          return D.Name == M.Symbols[S];
        }))
      Bound.insert(S);
  for (const api::InputShape &In : R.InputShapes) {
    ValueId V = M.findValue(In.Name);
    if (V != NoId)
      for (const DeclaredDim &D : M.Values[V].Shape)
        if (D.K == DeclaredDim::Kind::Symbol)
          Bound.insert(D.Symbol);
  }
  for (ValueId V : M.Inputs) {
    const Value &Val = M.Values[V];
    auto It = Given->find(Val.Name);
    if (It == Given->end() || Skip.contains(Val.Name) ||
        !Val.HasDeclaredShape || none_of(Val.Shape, [&](const DeclaredDim &D) {
          return D.K == DeclaredDim::Kind::Symbol && !Bound.count(D.Symbol);
        }))
      continue;
    const InputSource &S = It->second;
    std::vector<int64_t> Dims;
    if (S.Tensor) {
      Dims = S.Tensor->Dims;
    } else {
      auto T = readTensorFile(S.Path);
      if (!T)
        return T.takeError();
      Dims = T->Dims;
      ReadForDims[S.Path] = std::move(*T);
    }
    R.GivenInputs.push_back({Val.Name, Dims, dimsText(Dims) + " in " + S.Path});
  }
  return Error::success();
}

// A folded input becomes a weight of the tensor's dims, so readInput's
// check against the plan never sees it: the declared static dims are
// enforced here (a [1, 3] input given 1x4 values is a wrong file).
static Error checkDeclaredDims(const Graph &G, const Value &Val,
                               const TensorFile &T, StringRef Path) {
  if (!Val.HasDeclaredShape)
    return Error::success();
  bool Agree = Val.Shape.size() == T.Dims.size();
  std::string Declared;
  for (size_t A = 0; A < Val.Shape.size(); ++A) {
    const DeclaredDim &D = Val.Shape[A];
    bool Static = D.K == DeclaredDim::Kind::Static;
    Declared += (A ? "x" : "") + (Static ? std::to_string(D.Size)
                                  : D.K == DeclaredDim::Kind::Symbol
                                      ? G.Symbols[D.Symbol]
                                      : std::string("?"));
    if (Static && Agree && T.Dims[A] != D.Size)
      Agree = false;
  }
  if (Agree)
    return Error::success();
  return makeInputError(Path + ": input '" + Val.Name + "' has shape " +
                        dimsText(T.Dims) + ", the model declares " + Declared);
}

Error RunInputs::fold(api::Request &R, InputSources &Sources,
                      StringSet<> &Folded) {
  auto G = importModelFile(R.ModelPath, importOptions());
  if (!G)
    return G.takeError();
  auto Given = sources(**G);
  if (!Given)
    return Given.takeError();
  std::vector<std::pair<std::string, TensorFile>> Fold;
  for (ValueId V : (*G)->Inputs) {
    auto It = Given->find((*G)->Values[V].Name);
    if (It == Given->end())
      continue;
    auto T = load(It->second);
    if (!T)
      return T.takeError();
    if (Error E = checkDeclaredDims(**G, (*G)->Values[V], *T, It->second.Path))
      return E;
    uint64_t N = 1;
    for (int64_t D : T->Dims)
      N *= uint64_t(D);
    if ((isIntegerLike(T->Type) && N <= 1024) ||
        (isFloatingPoint(T->Type) && N <= 8))
      Fold.push_back({It->first().str(), std::move(*T)});
  }
  auto Bytes = foldInputsIntoModel(R.ModelPath, Fold);
  if (!Bytes)
    return Bytes.takeError();
  R.ModelBytes = std::move(*Bytes);
  for (const auto &F : Fold) {
    Given->erase(F.first);
    Folded.insert(F.first);
  }
  Sources = std::move(*Given);
  return Error::success();
}

Expected<TensorFile> RunInputs::read(const InputSource &S) {
  auto Kept = S.Tensor ? ReadForDims.end() : ReadForDims.find(S.Path);
  if (Kept == ReadForDims.end())
    return load(S);
  TensorFile F = std::move(Kept->second);
  ReadForDims.erase(Kept);
  return F;
}

Error RunInputs::readInput(const Executable &X, ArrayRef<runtime::TensorRef> In,
                           size_t I, const InputSource &S) {
  const std::string &Name = X.G->Values[X.G->Inputs[I]].Name;
  const runtime::TensorRef &T = In[I];
  if (!T.present())
    return makeUnsupportedError("input '" + Name + "' has no known shape");
  auto F = read(S);
  if (!F)
    return F.takeError();
  if (F->Type != T.Type)
    return makeInputError(S.Path + ": input '" + Name + "' is " +
                          elementTypeName(F->Type) + ", the model needs " +
                          elementTypeName(T.Type));
  if (ArrayRef<int64_t>(F->Dims) != ArrayRef<int64_t>(T.Dims))
    return makeInputError(
        S.Path + ": input '" + Name + "' has shape " + dimsText(F->Dims) +
        ", the plan is for " + dimsText(T.Dims) +
        " (bind the dims with --batch, --seq, --dim or --input-shape)");
  std::memcpy(T.Data, F->Bytes.data(), F->Bytes.size());
  return Error::success();
}

Error RunInputs::set(const Executable &X, const runtime::Executor &Ex,
                     ArrayRef<runtime::TensorRef> In,
                     const InputSources &Sources) {
  const Graph &G = *X.G;
  for (size_t I = 0; I < G.Inputs.size(); ++I) {
    ValueId V = G.Inputs[I];
    auto It = Sources.find(G.Values[V].Name);
    if (It != Sources.end()) {
      if (Error E = readInput(X, In, I, It->second))
        return E;
      continue;
    }
    int64_t Bound = runtime::integerInputBound(
        G, V, [&](ValueId W) { return Ex.tensor(W); });
    runtime::fillRandom(In[I], Opt.Seed, I, Bound);
  }
  return Error::success();
}
