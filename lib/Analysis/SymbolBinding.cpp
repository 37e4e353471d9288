//===- SymbolBinding.cpp - binding batch, seq and named symbols -----------===//
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace oomplan;

// Values above this are typos, not batch sizes; they would also overflow
// byte counts of large tensors.
static constexpr int64_t MaxBinding = int64_t(1) << 40;

static void addUnique(std::vector<SymbolId> &L, SymbolId S) {
  if (!llvm::is_contained(L, S))
    L.push_back(S);
}

SymbolRole SymbolRoles::roleOf(SymbolId S) const {
  if (llvm::is_contained(Batch, S))
    return SymbolRole::Batch;
  if (llvm::is_contained(Seq, S))
    return SymbolRole::Sequence;
  return SymbolRole::Other;
}

SymbolRoles oomplan::findSymbolRoles(const Graph &G) {
  SymbolRoles R;
  for (SymbolId S = 0; S < G.Symbols.size(); ++S) {
    std::string L = llvm::StringRef(G.Symbols[S]).lower();
    if (L == "batch" || L == "batch_size" || L == "n" || L == "bs")
      addUnique(R.Batch, S);
    if (L == "seq" || L == "seq_len" || L == "sequence" ||
        L == "sequence_length" || L == "seqlen")
      addUnique(R.Seq, S);
  }
  // A tensor has one batch axis: an input with a batch-named symbol at
  // another axis (a KV cache [layers, batch, heads, past, dim], a
  // sequence-first [time, batch, features]) does not have it at axis 0.
  std::vector<SymbolId> NamedBatch = R.Batch;
  auto NamedBatchAfterAxis0 = [&](const Value &V) {
    return llvm::any_of(llvm::drop_begin(V.Shape), [&](const DeclaredDim &D) {
      return D.K == DeclaredDim::Kind::Symbol &&
             llvm::is_contained(NamedBatch, D.Symbol);
    });
  };
  for (ValueId Id : G.Inputs) {
    const Value &V = G.Values[Id];
    if (!V.HasDeclaredShape || V.Shape.empty())
      continue;
    if (V.Shape[0].K == DeclaredDim::Kind::Symbol &&
        !llvm::is_contained(R.Seq, V.Shape[0].Symbol) &&
        !NamedBatchAfterAxis0(V))
      addUnique(R.Batch, V.Shape[0].Symbol);
    bool Tokens = isIntegerLike(V.Type) && V.Type != ElementType::Bool;
    if (Tokens && V.Shape.size() >= 2 &&
        V.Shape[1].K == DeclaredDim::Kind::Symbol &&
        !llvm::is_contained(R.Batch, V.Shape[1].Symbol))
      addUnique(R.Seq, V.Shape[1].Symbol);
  }
  return R;
}

static std::string joinNames(const Graph &G, llvm::ArrayRef<SymbolId> Ids) {
  std::vector<std::string> Names;
  for (SymbolId S : Ids)
    Names.push_back("'" + G.Symbols[S] + "'");
  return llvm::join(Names, ", ");
}

static llvm::Error checkRange(llvm::StringRef What, int64_t V) {
  if (V < 1 || V > MaxBinding)
    return makeInputError(What + "=" + llvm::Twine(V) +
                          " is out of range (1 to 2^40)");
  return llvm::Error::success();
}

llvm::Expected<Bindings> oomplan::bindSymbols(const Graph &G,
                                              const BindingRequest &Request) {
  return bindSymbols(G, findSymbolRoles(G), Request);
}

llvm::Expected<Bindings> oomplan::bindSymbols(const Graph &G,
                                              const SymbolRoles &Roles,
                                              const BindingRequest &Request) {
  Bindings B;
  B.Values.assign(G.Symbols.size(), std::nullopt);
  B.Roles = Roles;
  auto BindRole = [&](llvm::StringRef Flag, std::optional<int64_t> V,
                      llvm::ArrayRef<SymbolId> Syms,
                      llvm::StringRef Role) -> llvm::Error {
    if (!V)
      return llvm::Error::success();
    if (llvm::Error E = checkRange(Flag, *V))
      return E;
    if (Syms.empty())
      return makeInputError(G.SourcePath + ": " + Flag +
                            " given, but the model has no symbolic " + Role +
                            " dimension (its symbols: " +
                            (G.Symbols.empty() ? std::string("none")
                                               : llvm::join(G.Symbols, ", ")) +
                            "); use --dim NAME=VALUE");
    for (SymbolId S : Syms)
      B.Values[S] = *V;
    B.Notes.push_back(Flag.str() + "=" + std::to_string(*V) + " binds " +
                      joinNames(G, Syms));
    return llvm::Error::success();
  };
  if (llvm::Error E = BindRole("--batch", Request.Batch, Roles.Batch, "batch"))
    return E;
  if (llvm::Error E = BindRole("--seq", Request.Seq, Roles.Seq, "sequence"))
    return E;
  for (const auto &[Name, V] : Request.Named) {
    SymbolId S = G.findSymbol(Name);
    if (S == NoId)
      return makeInputError(G.SourcePath + ": --dim " + Name +
                            ": the model has no symbol '" + Name +
                            "' (its symbols: " +
                            (G.Symbols.empty() ? std::string("none")
                                               : llvm::join(G.Symbols, ", ")) +
                            ")");
    if (llvm::Error E = checkRange("--dim " + Name, V))
      return E;
    B.Values[S] = V;
  }
  return B;
}

std::vector<std::string>
oomplan::unboundSymbols(llvm::ArrayRef<std::optional<int64_t>> Values,
                        llvm::ArrayRef<std::string> Names) {
  std::vector<std::string> Out;
  for (size_t I = 0; I < Names.size(); ++I)
    if (I >= Values.size() || !Values[I])
      Out.push_back(Names[I]);
  return Out;
}
