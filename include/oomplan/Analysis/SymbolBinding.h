//===- SymbolBinding.h - binding batch, seq and named symbols ---*- C++ -*-===//
//
// Users think in "batch" and "sequence length", models in dim_params with
// exporter-chosen names. This finds which symbols play those roles: the first
// dim of every graph input is the batch; the second dim of an integer (token)
// input is the sequence; symbols literally named batch/seq (and common
// variants) count too. Explicit --dim NAME=VALUE bindings override.
//
// The roles are read from the graph once per request, when binding, and
// travel with the values as one Bindings: the conflict check, the fit's
// batch split, the capacity searches, the report, the parallel planner and
// the server's step shapes all read them there rather than from the graph.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_ANALYSIS_SYMBOLBINDING_H
#define OOMPLAN_ANALYSIS_SYMBOLBINDING_H

#include "oomplan/IR/Graph.h"
#include "llvm/Support/Error.h"
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace oomplan {

/// What the user asked to bind.
struct BindingRequest {
  std::optional<int64_t> Batch; ///< --batch
  std::optional<int64_t> Seq;   ///< --seq
  /// --dim NAME=VALUE, in command-line order.
  std::vector<std::pair<std::string, int64_t>> Named;
};

/// What a symbol stands for.
enum class SymbolRole : uint8_t { Batch, Sequence, Other };

/// The symbols that play the batch and sequence roles in a graph.
struct SymbolRoles {
  std::vector<SymbolId> Batch;
  std::vector<SymbolId> Seq;
  /// Batch when S is among Batch, else Sequence when among Seq, else Other.
  SymbolRole roleOf(SymbolId S) const;
};

/// Finds the batch and sequence symbols of G. The driver calls it once per
/// request (bindSymbols' callers pass its result); everything after
/// binding reads Bindings::Roles instead.
SymbolRoles findSymbolRoles(const Graph &G);

/// Symbol values and their roles, computed once after binding.
struct Bindings {
  /// By SymbolId over G.Symbols (std::nullopt: unbound).
  std::vector<std::optional<int64_t>> Values;
  SymbolRoles Roles; ///< Of the graph bound.
  /// One line per role bound, e.g. "--batch=8 binds 'batch'".
  std::vector<std::string> Notes;
  SymbolRole roleOf(SymbolId S) const { return Roles.roleOf(S); }
};

/// Applies Request to G's symbols, whose roles are Roles (findSymbolRoles).
/// Errors: --dim names a symbol the model does not have (the message lists
/// those it has), --batch/--seq when the model has no such dimension, a
/// value below 1 or above 2^40.
llvm::Expected<Bindings> bindSymbols(const Graph &G, const SymbolRoles &Roles,
                                     const BindingRequest &Request);

/// bindSymbols with G's roles found here: for a program that binds one
/// graph once (a benchmark, a test).
llvm::Expected<Bindings> bindSymbols(const Graph &G,
                                     const BindingRequest &Request);

/// Names of unbound symbols among Names, in order.
std::vector<std::string>
unboundSymbols(llvm::ArrayRef<std::optional<int64_t>> Values,
               llvm::ArrayRef<std::string> Names);

} // namespace oomplan

#endif
