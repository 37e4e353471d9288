//===- RunInputs.h - the inputs one execute() call is given -----*- C++ -*-===//
//
// A run knows its inputs before it plans, and api::execute uses them three
// ways: their files' dims bind the model's free symbols, their values fold
// into the model when a shape depends on them, and their bytes fill the
// graph inputs. An input is given in memory (execute's Inputs), by --input
// NAME=FILE.pb, or by --inputs-dir's input_<i>.pb; this class resolves them
// by name and reads each file once. Internal to the driver.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_DRIVER_RUNINPUTS_H
#define OOMPLAN_LIB_DRIVER_RUNINPUTS_H

#include "oomplan/Driver/Executable.h"
#include "oomplan/Frontend/WeightLoader.h"
#include "oomplan/oomplan.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include <optional>

namespace oomplan {
namespace driver {

/// Where one graph input's values come from: a TensorProto file, or a
/// tensor in memory (Tensor set; Path then only names it in messages).
struct InputSource {
  std::string Path;
  const api::Tensor *Tensor = nullptr;
};
using InputSources = llvm::StringMap<InputSource>;

class RunInputs {
public:
  RunInputs(const api::RunOptions &Opt, const std::vector<api::Tensor> &Mem)
      : Opt(Opt), Mem(Mem) {}

  /// True when any input is given (in memory, --input or --inputs-dir).
  bool any() const {
    return !Mem.empty() || !Opt.Inputs.empty() || !Opt.InputsDir.empty();
  }

  /// The source of each graph input of G that is given, by name; G is the
  /// model as written, before any input is folded. Errors: a name G has no
  /// input of, --input without NAME=FILE, a missing input_<i>.pb.
  llvm::Expected<InputSources> sources(const Graph &G) const;

  /// Records in R.GivenInputs the dims of each given input whose declared
  /// dims have a symbol no --dim or --input-shape binds; planning binds
  /// those the options leave free from them (as --dim NAME=VALUE would, with
  /// a note), so that a run plans the size its inputs have. AsWritten: the
  /// model's bytes before any input is folded (from the file, its weights
  /// referenced in place), else R.ModelPath is read. Skip: folded inputs.
  llvm::Error bindDims(api::Request &R,
                       std::optional<llvm::StringRef> AsWritten,
                       const llvm::StringSet<> &Skip);

  /// --fold-inputs: the given inputs shapes may depend on (integers of up
  /// to 1024 elements, floats of up to 8, such as Resize scales) become
  /// initializers, and R plans the folded model. Sources: the inputs left
  /// to set; Folded: the folded inputs' names.
  llvm::Error fold(api::Request &R, InputSources &Sources,
                   llvm::StringSet<> &Folded);

  /// Every graph input of X: its given values (type and dims checked
  /// against the plan), or seeded random values. In: the slots the run
  /// reads (the executor's, or the whole batch's buffers); Ex gives the
  /// tensors integerInputBound reads.
  llvm::Error set(const Executable &X, const runtime::Executor &Ex,
                  llvm::ArrayRef<runtime::TensorRef> In,
                  const InputSources &Sources);

private:
  /// The tensor of S: a file kept by bindDims (handed over once), read
  /// now, or the tensor in memory checked and copied.
  llvm::Expected<TensorFile> read(const InputSource &S);
  llvm::Error readInput(const Executable &X,
                        llvm::ArrayRef<runtime::TensorRef> In, size_t I,
                        const InputSource &S);

  const api::RunOptions &Opt;
  const std::vector<api::Tensor> &Mem;
  /// Files bindDims read for their dims, by path, until set() reads their
  /// values (a run's inputs can be large).
  llvm::StringMap<TensorFile> ReadForDims;
};

/// "8x3x224x224", "scalar" for rank 0.
std::string dimsText(llvm::ArrayRef<int64_t> Dims);

} // namespace driver
} // namespace oomplan

#endif
