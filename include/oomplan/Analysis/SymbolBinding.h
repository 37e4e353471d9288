//===- SymbolBinding.h - binding batch, seq and named symbols ---*- C++ -*-===//
//
// Users think in "batch" and "sequence length", models in dim_params with
// exporter-chosen names. This finds which symbols play those roles: the first
// dim of every graph input is the batch; the second dim of an integer (token)
// input is the sequence; symbols literally named batch/seq (and common
// variants) count too. Explicit --dim NAME=VALUE bindings override.
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

/// The symbols that play the batch and sequence roles in a graph.
struct SymbolRoles {
  std::vector<SymbolId> Batch;
  std::vector<SymbolId> Seq;
};

/// Finds the batch and sequence symbols of G.
SymbolRoles findSymbolRoles(const Graph &G);

/// Bindings by SymbolId over G.Symbols (std::nullopt: unbound).
struct SymbolBindings {
  std::vector<std::optional<int64_t>> Values;
  /// One line per role bound, e.g. "--batch=8 binds 'batch'".
  std::vector<std::string> Notes;
};

/// Applies Request to G's symbols. Errors: --dim names a symbol the model does
/// not have (the message lists those it has), --batch/--seq when the model
/// has no such dimension, a value below 1 or above 2^40.
llvm::Expected<SymbolBindings> bindSymbols(const Graph &G,
                                           const BindingRequest &Request);

/// Names of unbound symbols among Names, in order.
std::vector<std::string>
unboundSymbols(llvm::ArrayRef<std::optional<int64_t>> Values,
               llvm::ArrayRef<std::string> Names);

} // namespace oomplan

#endif
