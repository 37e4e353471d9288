//===- Arguments.cpp - the oomplan CLI's options, parsed without globals --===//
//
// One table row per option of the oomplan tool (tools/oomplan/Options.cpp):
// its name, how many values it takes, and how its value lands in the
// api::Request. Values are read exactly as llvm::cl reads them (integers in
// any radix, bools as true/false/1/0, doubles via strtod), so that a command
// line means the same here as in the tool. No global state: each call parses
// into its own Arguments, which makes the C API safe to call from several
// threads at once.
//
//===----------------------------------------------------------------------===//
#include "oomplan/CAPI/Arguments.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using namespace llvm;
using namespace oomplan;
using namespace oomplan::api;

namespace {

/// How an option takes values, as llvm::cl would.
enum class Arity {
  Flag,      ///< No value, or --name=true|false.
  Value,     ///< One value (--name=V or --name V), at most once.
  List,      ///< Repeatable, one value each time.
  CommaList, ///< Repeatable, and each value may hold several, comma-separated.
  Generic,   ///< --help and friends: a flag the caller handles.
};

using Setter = Error (*)(Arguments &, StringRef Value);

struct OptionSpec {
  const char *Name;
  Arity Kind;
  const char *ValueDesc; ///< For argumentsHelp().
  Setter Set;
};

// Value readers with llvm::cl's rules and messages that name the option.
Error badValue(StringRef Name, StringRef Value, StringRef Kind) {
  return makeInputError("--" + Name + ": '" + Value + "' is not " + Kind);
}

template <typename T> Expected<T> readInteger(StringRef Name, StringRef V) {
  T Out;
  // Radix 0, as llvm::cl: 0x.. hex, 0b.. binary, 0.. octal.
  if (V.getAsInteger(0, Out))
    return badValue(Name, V, "an integer in range");
  return Out;
}

Expected<bool> readBool(StringRef Name, StringRef V) {
  if (V == "true" || V == "TRUE" || V == "True" || V == "1")
    return true;
  if (V == "false" || V == "FALSE" || V == "False" || V == "0")
    return false;
  return badValue(Name, V, "true or false");
}

Expected<double> readDouble(StringRef Name, StringRef V) {
  double D;
  if (!to_float(V, D))
    return badValue(Name, V, "a number");
  return D;
}

// An enum option's value: one of Names, else an error that lists them.
template <typename E, size_t N>
Expected<E> readEnum(StringRef Name, StringRef V,
                     const std::pair<const char *, E> (&Values)[N]) {
  std::vector<std::string> Names;
  for (const auto &[Spelling, Value] : Values) {
    if (V == Spelling)
      return Value;
    Names.push_back(Spelling);
  }
  return makeInputError("invalid value '" + V + "' for --" + Name +
                        "; valid values: " + join(Names, ", "));
}

// Assigns an Expected's value or passes its error on.
template <typename T, typename U> Error assign(U &Dst, Expected<T> V) {
  if (!V)
    return V.takeError();
  Dst = std::move(*V);
  return Error::success();
}

template <typename T, typename U> Error append(std::vector<U> &Dst, T V) {
  Dst.push_back(std::move(V));
  return Error::success();
}

const std::pair<const char *, RematChoice> RematValues[] = {
    {"auto", RematChoice::Auto},
    {"sqrt", RematChoice::Sqrt},
    {"none", RematChoice::None}};
const std::pair<const char *, OffloadChoice> OffloadValues[] = {
    {"auto", OffloadChoice::Auto},
    {"weights", OffloadChoice::Weights},
    {"none", OffloadChoice::None}};
const std::pair<const char *, EmitKind> EmitValues[] = {
    {"graph", EmitKind::Graph},
    {"shapes", EmitKind::Shapes},
    {"lifetimes", EmitKind::Lifetimes},
    {"report", EmitKind::Report},
    {"plan", EmitKind::Plan},
    {"json", EmitKind::JSON},
    {"csv", EmitKind::CSV},
    {"schedule", EmitKind::Schedule},
    {"deepspeed", EmitKind::DeepSpeed},
    {"fsdp", EmitKind::FSDP},
    {"megatron", EmitKind::Megatron},
    {"vllm", EmitKind::VLLM}};

#define FLAG(FIELD)                                                            \
  [](Arguments &A, StringRef V) -> Error {                                     \
    return assign(A.FIELD, readBool("", V));                                   \
  }
#define NOT_FLAG(FIELD)                                                        \
  [](Arguments &A, StringRef V) -> Error {                                     \
    auto B = readBool("", V);                                                  \
    if (!B)                                                                    \
      return B.takeError();                                                    \
    A.FIELD = !*B;                                                             \
    return Error::success();                                                   \
  }
#define STRING(FIELD)                                                          \
  [](Arguments &A, StringRef V) -> Error {                                     \
    A.FIELD = V.str();                                                         \
    return Error::success();                                                   \
  }
#define STRINGS(FIELD)                                                         \
  [](Arguments &A, StringRef V) -> Error { return append(A.FIELD, V.str()); }
#define INTEGER(TYPE, NAME, FIELD)                                             \
  [](Arguments &A, StringRef V) -> Error {                                     \
    return assign(A.FIELD, readInteger<TYPE>(NAME, V));                        \
  }
#define ENUM(NAME, FIELD, VALUES)                                              \
  [](Arguments &A, StringRef V) -> Error {                                     \
    return assign(A.FIELD, readEnum(NAME, V, VALUES));                         \
  }

// Every option of tools/oomplan/Options.cpp, in its order, then llvm::cl's
// generic ones. Keep in step with it: test/embed checks both lists match.
const OptionSpec Options[] = {
    // Model and shapes.
    {"batch", Arity::Value, "N", INTEGER(int64_t, "batch", Req.Batch)},
    {"seq", Arity::Value, "N", INTEGER(int64_t, "seq", Req.Seq)},
    {"dim", Arity::CommaList, "NAME=VALUE",
     [](Arguments &A, StringRef D) -> Error {
       auto [Name, Val] = D.split('=');
       int64_t V;
       if (Name.empty() || Val.getAsInteger(10, V))
         return makeInputError("--dim expects NAME=VALUE, got '" + D + "'");
       return append(A.Req.Dims, SymbolValue{Name.str(), V});
     }},
    {"input-shape", Arity::List, "NAME=8x3x224x224",
     [](Arguments &A, StringRef V) -> Error {
       std::string Why;
       auto In = parseInputShape(V.str(), Why);
       if (!In)
         return makeInputError(Why);
       return append(A.Req.InputShapes, std::move(*In));
     }},
    // Budget and device.
    {"budget", Arity::Value, "SIZE", STRING(Req.Budget)},
    {"overhead", Arity::Value, "SIZE", STRING(Req.Overhead)},
    {"device", Arity::Value, "NAME|FILE.json", STRING(Req.Device)},
    {"backend", Arity::Value, "cuda", STRING(Req.Backend)},
    // Training.
    {"train", Arity::Flag, "", FLAG(Req.Train.Enabled)},
    {"optimizer", Arity::Value, "sgd|momentum|adam|adamw",
     STRING(Req.Train.Optimizer)},
    {"precision", Arity::Value,
     "fp32|fp16-mixed|bf16-mixed|bf16-autocast|fp16-autocast",
     STRING(Req.Train.Precision)},
    {"grad-accum", Arity::Value, "K",
     INTEGER(unsigned, "grad-accum", Req.Train.GradAccum)},
    {"freeze", Arity::List, "PATTERN", STRINGS(Req.Train.Freeze)},
    {"tied", Arity::List, "A,B", STRINGS(Req.Train.Tied)},
    {"loss", Arity::Value, "auto|ce|mean|none", STRING(Req.Train.Loss)},
    {"step", Arity::Value, "steady|first", STRING(Req.Train.Step)},
    {"zero-grad", Arity::Value, "none|zero", STRING(Req.Train.ZeroGrad)},
    {"runtime", Arity::Value, "pytorch-cuda|pytorch-cpu|oomplan",
     STRING(Req.Train.Runtime)},
    {"attention", Arity::Value, "auto|sdpa|eager", STRING(Req.Train.Attention)},
    {"dropout", Arity::Value, "P", STRING(Req.Train.Dropout)},
    {"keep-output", Arity::Flag, "", FLAG(Req.Train.KeepOutput)},
    {"cuda-alloc-conf", Arity::Value,
     "max_split_size_mb:N,expandable_segments:True",
     STRING(Req.Train.CudaAllocConf)},
    {"devices", Arity::Value, "N|auto", STRING(Req.Parallel.Devices)},
    {"parallel", Arity::Value, "SPEC|auto", STRING(Req.Parallel.Spec)},
    // Fitting.
    {"fit", Arity::Flag, "", FLAG(Req.Fit.Fit)},
    {"no-fit", Arity::Flag, "", FLAG(Req.Fit.NoFit)},
    {"remat", Arity::Value, "auto|sqrt|none",
     ENUM("remat", Req.Fit.Remat, RematValues)},
    {"offload", Arity::Value, "auto|weights|none",
     ENUM("offload", Req.Fit.Offload, OffloadValues)},
    {"reorder", Arity::Flag, "", FLAG(Req.Fit.Reorder)},
    {"micro-batches", Arity::Value, "K",
     INTEGER(unsigned, "micro-batches", Req.Fit.MicroBatches)},
    {"fit-show-plan", Arity::Flag, "", FLAG(Req.Fit.ShowPlan)},
    {"tf32", Arity::Flag, "", FLAG(Req.Fit.TF32)},
    // Serving an LLM.
    {"serve", Arity::Flag, "", FLAG(Req.Serve.Enabled)},
    {"max-model-len", Arity::Value, "N",
     INTEGER(int64_t, "max-model-len", Req.Serve.MaxModelLen)},
    {"max-batched-tokens", Arity::Value, "N",
     INTEGER(int64_t, "max-batched-tokens", Req.Serve.MaxBatchedTokens)},
    {"max-num-seqs", Arity::Value, "N",
     INTEGER(int64_t, "max-num-seqs", Req.Serve.MaxNumSeqs)},
    {"block-size", Arity::Value, "N",
     INTEGER(int64_t, "block-size", Req.Serve.BlockSize)},
    {"kv-dtype", Arity::Value, "auto|fp16|bf16|fp8|int8",
     STRING(Req.Serve.KVDtype)},
    {"gpu-memory-utilization", Arity::Value, "F",
     STRING(Req.Serve.GpuMemoryUtilization)},
    // Output.
    {"emit", Arity::Value,
     "graph|shapes|lifetimes|report|plan|json|csv|schedule|deepspeed|fsdp|"
     "megatron|vllm",
     ENUM("emit", Req.Emit, EmitValues)},
    {"print-after", Arity::List, "PASS", STRINGS(Req.PrintAfter)},
    {"print-after-all", Arity::Flag, "", FLAG(Req.PrintAfterAll)},
    {"o", Arity::Value, "FILE", STRING(OutputPath)},
    {"max-batch", Arity::Flag, "", FLAG(Req.Report.MaxBatch)},
    {"max-seq", Arity::Flag, "", FLAG(Req.Report.MaxSeq)},
    {"sweep", Arity::Flag, "", FLAG(Req.Report.Sweep)},
    {"timeline", Arity::Value, "FILE.svg|.html",
     STRING(Req.Report.TimelinePath)},
    {"trace", Arity::Value, "FILE.json", STRING(Req.Report.TracePath)},
    // Algorithms.
    {"algo", Arity::Value, "NAME", STRING(Req.Algorithm)},
    {"list-algos", Arity::Flag, "", FLAG(ListAlgorithms)},
    {"align", Arity::Value, "BYTES",
     INTEGER(uint64_t, "align", Req.AlignBytes)},
    {"no-inplace", Arity::Flag, "", NOT_FLAG(Req.InPlace)},
    {"fuse", Arity::Value, "auto|none", STRING(Req.Fuse)},
    {"order", Arity::Value, "memory|file", STRING(Req.Order)},
    {"io-in-arena", Arity::Flag, "", FLAG(Req.IOInArena)},
    {"time-limit", Arity::Value, "SECONDS",
     [](Arguments &A, StringRef V) -> Error {
       return assign(A.Req.TimeLimitSeconds, readDouble("time-limit", V));
     }},
    // llvm::cl's own options that the tool shows in --help-hidden.
    {"h", Arity::Generic, "", FLAG(Help)},
    {"help", Arity::Generic, "", FLAG(Help)},
    {"help-hidden", Arity::Generic, "", FLAG(Help)},
    {"help-list", Arity::Generic, "", FLAG(Help)},
    {"help-list-hidden", Arity::Generic, "", FLAG(Help)},
    {"print-all-options", Arity::Generic, "", FLAG(Help)},
    {"print-options", Arity::Generic, "", FLAG(Help)},
    {"version", Arity::Generic, "", FLAG(Version)},
};

#undef FLAG
#undef NOT_FLAG
#undef STRING
#undef STRINGS
#undef INTEGER
#undef ENUM

const OptionSpec *findOption(StringRef Name) {
  for (const OptionSpec &O : Options)
    if (Name == O.Name)
      return &O;
  return nullptr;
}

// The option closest to Name by edit distance, as the tool suggests.
std::string closestOption(StringRef Name) {
  std::string Best;
  unsigned BestDist = std::max<unsigned>(2, Name.size() / 3) + 1;
  for (const OptionSpec &O : Options) {
    unsigned D = Name.edit_distance(O.Name, true, BestDist);
    if (D < BestDist) {
      BestDist = D;
      Best = O.Name;
    }
  }
  return Best;
}

bool takesValue(Arity K) {
  return K == Arity::Value || K == Arity::List || K == Arity::CommaList;
}

// One option with its value (HasValue: "=V" or the next argument).
Error applyOption(Arguments &A, const OptionSpec &O, StringRef Value,
                  bool HasValue, unsigned &Count) {
  // llvm::cl refuses a second occurrence of a single-valued option.
  if (++Count > 1 && (O.Kind == Arity::Value || O.Kind == Arity::Flag))
    return makeInputError("--" + StringRef(O.Name) +
                          " may only occur zero or one times");
  if (!takesValue(O.Kind)) {
    auto B = readBool(O.Name, HasValue ? Value : "true");
    if (!B)
      return B.takeError();
    return O.Set(A, *B ? "true" : "false");
  }
  if (!HasValue)
    return makeInputError("--" + StringRef(O.Name) + " needs a value (" +
                          O.ValueDesc + ")");
  if (O.Kind != Arity::CommaList)
    return O.Set(A, Value);
  SmallVector<StringRef, 4> Parts;
  Value.split(Parts, ',');
  for (StringRef P : Parts)
    if (Error E = O.Set(A, P))
      return E;
  return Error::success();
}

Error parse(ArrayRef<std::string> Args, Arguments &A) {
  std::vector<unsigned> Counts(std::size(Options), 0);
  bool SeenModel = false, OptionsEnded = false;
  for (size_t I = 0; I < Args.size(); ++I) {
    StringRef Arg = Args[I];
    if (!OptionsEnded && Arg == "--") {
      OptionsEnded = true;
      continue;
    }
    if (OptionsEnded || !Arg.startswith("-") || Arg == "-") {
      if (SeenModel || !A.Req.ModelPath.empty())
        return makeInputError("unexpected argument '" + Arg +
                              "' (the model is already given)");
      A.Req.ModelPath = Arg.str();
      SeenModel = true;
      continue;
    }
    StringRef Body = Arg.drop_front(Arg.startswith("--") ? 2 : 1);
    auto [Name, Value] = Body.split('=');
    bool HasValue = Body.contains('=');
    const OptionSpec *O = findOption(Name);
    if (!O) {
      std::string Msg = "unknown option '" + Arg.split('=').first.str() + "'";
      std::string Near = closestOption(Name);
      return makeInputError(
          Near.empty() ? Msg : Msg + "; did you mean '--" + Near + "'?");
    }
    // As llvm::cl: a required value may be the next argument, even one that
    // starts with a dash ("--batch -1").
    if (!HasValue && takesValue(O->Kind) && I + 1 < Args.size()) {
      Value = Args[++I];
      HasValue = true;
    }
    if (Error E = applyOption(A, *O, Value, HasValue, Counts[O - Options]))
      return E;
  }
  return Error::success();
}

} // namespace

std::string api::parseArguments(const std::vector<std::string> &Args,
                                Arguments &Out) {
  if (Error E = parse(Args, Out))
    return toString(std::move(E));
  return "";
}

std::vector<std::string> api::argumentNames() {
  std::vector<std::string> Names;
  for (const OptionSpec &O : Options)
    Names.push_back(O.Name);
  llvm::sort(Names);
  return Names;
}

std::string api::argumentsHelp() {
  std::string Out = "oomplan options (oomplan --help describes each):\n";
  for (const OptionSpec &O : Options) {
    Out += "  --" + std::string(O.Name);
    if (takesValue(O.Kind))
      Out += "=<" + std::string(O.ValueDesc) + ">";
    if (O.Kind == Arity::List || O.Kind == Arity::CommaList)
      Out += " (repeatable)";
    Out += "\n";
  }
  return Out;
}
