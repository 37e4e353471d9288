//===- Session.h - one run of the driver, shared by its parts ---*- C++ -*-===//
//
// The driver (lib/Driver) turns an api::Request into an api::Result. Its
// parts (model, training, report, fit, CSV) share one Session: the request,
// the result being filled, the output stream, the one diagnostics sink, and
// what the request resolves to (budget, overhead, device). Internal to the
// driver: programs use oomplan/oomplan.h.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_DRIVER_SESSION_H
#define OOMPLAN_DRIVER_SESSION_H

#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Cost/DeviceProfile.h"
#include "oomplan/Plan/Pipeline.h"
#include "oomplan/Plan/PlanPrinter.h"
#include "oomplan/Report/Capacity.h"
#include "oomplan/Report/Diagnosis.h"
#include "oomplan/Schedule/PassInstrumentation.h"
#include "oomplan/Schedule/Schedule.h"
#include "oomplan/Support/Error.h"
#include "oomplan/Transforms/Fusion.h"
#include "oomplan/Transforms/Training.h"
#include "oomplan/oomplan.h"
#include "llvm/Support/raw_ostream.h"
#include <functional>
#include <map>
#include <string>

namespace oomplan {
namespace driver {

/// One transform's output schedule, kept so that --print-after prints the
/// passes of the plan that is kept, not of every candidate tried.
struct PassRecord {
  std::string Pass;
  Schedule Sched;
};
using PassLog = std::vector<PassRecord>;

/// An instrumentation that appends to Log; none when nothing is printed.
struct PassRecorder {
  PassInstrumentation Instr;
  PassLog Log;
  PassRecorder() {
    Instr.AfterPass = [this](llvm::StringRef Pass, const Schedule &S) {
      Log.push_back({Pass.str(), S});
    };
  }
  PassRecorder(const PassRecorder &) = delete;
};

/// What --fuse and --order did to the main plan (DriverFusion.cpp), for the
/// report and --print-after.
struct FusionRecord {
  bool Fuse = false; ///< --fuse=auto ran on the graph.
  FusionStats Stats;
  bool MemoryOrder = false; ///< --order=memory.
  bool Recorded = false;    ///< The main plan's numbers below are set.
  uint64_t FileOrderBound = 0, ChosenOrderBound = 0; ///< Arena lower bounds.
  PassLog Passes; ///< "fusion" and "reorder" schedules of the main plan.
  /// Training: the fused-attention line of the report (see
  /// fusedAttentionAdvice); empty when it does not apply.
  std::string TrainingAdvice;
};

/// What --backend added to the main plan (DriverBackend.cpp), for the
/// report's "backend:" line.
struct BackendRecord {
  bool Cuda = false;                ///< --backend=cuda.
  bool Recorded = false;            ///< The counts below are the main plan's.
  unsigned Convs = 0, Products = 0; ///< Steps given a cuDNN / cuBLAS bound.
  unsigned Recurrent = 0;           ///< RNN/GRU/LSTM steps given their formula.
  /// MatMulNBits steps given a tile of W (a prompt's; a decode step's GEMV
  /// has no workspace).
  unsigned NBitsTiles = 0;
  /// Steps by op type whose op has no CUDA kernel (a CPU one): host steps
  /// of oomplan-run --backend=cuda (CUDAWorkspaces.h's hostStepOp).
  std::map<std::string, unsigned> HostOps;
};

struct Session {
  const api::Request &Req;
  api::Result &Res;
  llvm::raw_string_ostream OS; ///< Into Res.Output.

  /// Resolved from the request before planning (resolveOptions): the one
  /// budget every verdict is fits() against. Plans carry it in
  /// PlanOptions::Limit (pipelineOptions()).
  Budget Limit;
  DeviceProfile Device; ///< --device (H100-SXM when not given).
  /// The model's symbol roles (Bindings::Roles), read from the graph once
  /// per request, before binding; every part of the driver reads them here.
  SymbolRoles Roles;
  /// --precision=fp16|bf16 without --train: the 16-bit type every fp32
  /// tensor is planned in (Transforms/InferencePrecision.h).
  std::optional<ElementType> InferenceHalf;
  /// The graph --precision=bf16 would plan where it differs from the one
  /// planned (convolutions left unfused), for the "lower precision" remedy;
  /// null: the planned graph.
  std::shared_ptr<const Graph> HalfGraph;
  std::shared_ptr<const ShapeInfo> HalfShapes;
  /// How many ops that conversion keeps in fp32, for the settings line.
  std::shared_ptr<unsigned> KeptInFloat = std::make_shared<unsigned>(0);
  TrainingOptions Train;
  /// The loss each output got ("ce on 'logits' (auto: logits-shaped)"),
  /// set by planTraining for the settings line.
  std::string LossText;
  /// How the training plan's attention blocks run (--attention), and the
  /// other mode's total where it differs by more than 2%; empty without
  /// attention blocks or off --runtime=pytorch-cuda.
  std::string AttentionText;
  /// Copied into pipelineOptions(): the runtime's workspace edit.
  decltype(PipelineOptions::EditSchedule) EditSchedule;
  /// Set by the runtime's entry: the fused op types it has kernels for
  /// (null: all, the planner-only path), and that EditSchedule already adds
  /// every kernel's workspace (else the driver adds the fused attention's).
  std::function<bool(llvm::StringRef)> FusedSupported;
  bool KernelWorkspaces = false;
  /// Planned to be run (planExecutable): an input a kernel would read as
  /// another type is an error, not a warning (TypeCheck.h).
  bool ForRun = false;
  std::shared_ptr<FusionRecord> Fusion = std::make_shared<FusionRecord>();
  std::shared_ptr<BackendRecord> Backend = std::make_shared<BackendRecord>();

  Session(const api::Request &Req, api::Result &Res)
      : Req(Req), Res(Res), OS(Res.Output) {}

  void note(const llvm::Twine &Msg) {
    Res.Diagnostics.push_back({api::Severity::Note, Msg.str()});
  }
  void warn(const llvm::Twine &Msg) {
    Res.Diagnostics.push_back({api::Severity::Warning, Msg.str()});
  }
  bool training() const { return Req.Train.Enabled; }
  /// True when --print-after or --print-after-all asks for a schedule.
  bool printsPasses() const {
    return Req.PrintAfterAll || !Req.PrintAfter.empty();
  }
  /// Makes Edit run after the schedule edits installed so far.
  void appendScheduleEdit(decltype(PipelineOptions::EditSchedule) Edit) {
    auto Prev = std::move(EditSchedule);
    EditSchedule = [Prev, Edit](const Graph &G, const ShapeInfo &Shapes,
                                llvm::ArrayRef<std::optional<int64_t>> B,
                                Schedule &Sched) -> llvm::Error {
      if (Prev)
        if (llvm::Error E = Prev(G, Shapes, B, Sched))
          return E;
      return Edit(G, Shapes, B, Sched);
    };
  }
  /// Prints the records --print-after asks for, each headed
  /// "*** Schedule after PASS ***".
  void printPasses(const Graph &G, llvm::ArrayRef<PassRecord> Log);
  /// The pipeline options the request asks for.
  PipelineOptions pipelineOptions() const;
};

/// --fuse and --order (DriverFusion.cpp): fuses G in place (re-inferring
/// Shapes) and installs the order and the fused attention's workspace in
/// S.EditSchedule. Call after shape inference, before planning.
llvm::Error prepareModel(Session &S, std::unique_ptr<Graph> &G,
                         ShapeInfo &Shapes);
/// The report's "fusion:" and "order:" lines, when they are on (the
/// defaults for inference).
void printFusionSettings(Session &S);
/// Training: plans G with its attention fused as PyTorch's flash attention
/// runs it (output and log-sum-exp kept, scores recomputed in the backward)
/// at Bindings and searches the longest sequence that fits the budget, into
/// S.Fusion->TrainingAdvice (the report prints it), or a note when AsNote
/// (the fit's output has no settings lines). Errors become a warning.
void fusedAttentionAdvice(Session &S, const Graph &G, const ShapeInfo &Shapes,
                          llvm::ArrayRef<std::optional<int64_t>> Bindings,
                          const PipelineOptions &PO, bool AsNote);

/// --backend (DriverBackend.cpp): checks it and installs its workspaces in
/// S.EditSchedule. Call after resolveOptions, before a model is planned.
llvm::Error installBackend(Session &S);
/// The report's "backend:" line, when --backend is given.
void printBackendSettings(Session &S);
/// The JSON plan's "backend" attribute: null without --backend.
void writeBackendJSON(Session &S, llvm::json::OStream &J);

/// Checks the request's options against each other (17.6) and resolves
/// budget, overhead, device and training options into S.
llvm::Error resolveOptions(Session &S);

/// A MiniMalloc CSV instance: place, verify, print. Returns the exit code.
llvm::Expected<int> runCSV(Session &S);
/// A model: import, bind, plan, and emit what the request asks for.
llvm::Expected<int> runModel(Session &S);

/// Plans one training step with the request's training options. Quiet drops
/// warnings (capacity searches re-plan many times). AccumPasses, when not 0,
/// replaces --grad-accum (micro-batching accumulates over its passes).
llvm::Expected<Plan>
planTraining(Session &S, const Graph &G, const ShapeInfo &Shapes,
             llvm::ArrayRef<std::optional<int64_t>> Bindings,
             const PipelineOptions &PO, bool Quiet = false,
             unsigned AccumPasses = 0);

/// --devices/--parallel: per-device plans of a training step, or the
/// engine's configuration (--emit=deepspeed|fsdp|megatron). Returns the
/// exit code (0 fits, 2 does not).
llvm::Expected<int> runParallel(Session &S, const Graph &G,
                                const ShapeInfo &Shapes,
                                llvm::ArrayRef<std::optional<int64_t>> B);

/// --serve (DriverServe.cpp): the KV cache an LLM server gets beside the
/// weights and one engine step; fuses G like prepareModel after reading
/// its attention. Returns the exit code (0 the server starts, 2 not).
llvm::Expected<int> runServe(Session &S, std::unique_ptr<Graph> &G,
                             ShapeInfo &Shapes);
/// --emit=shapes --train: the tensors the training step adds.
llvm::Error printTrainingShapes(Session &S, const Graph &G,
                                const ShapeInfo &Shapes,
                                llvm::ArrayRef<std::optional<int64_t>> B);

/// The report (text, or the JSON plan with its report), the pictures, the
/// capacity answers; returns the exit code (0 fits, 2 does not).
llvm::Expected<int> runReport(Session &S, const PlanContext &C, const Plan &P,
                              const PipelineOptions &PO,
                              const report::PlanFn &PlanAt, bool JSON,
                              const report::FitFn &Fit);

/// Plans at other bindings as one of K passes (training accumulates
/// gradients over them).
using PassesPlanFn = std::function<llvm::Expected<Plan>(
    llvm::ArrayRef<std::optional<int64_t>>, unsigned K)>;

/// --fit: fits Base into the budget, places, verifies and prints the result;
/// returns the exit code (0 fits, 2 nothing fits).
/// MainLog: the passes that made Base (training), printed first.
llvm::Expected<int> runFit(Session &S, const PlanContext &C, const Plan &Base,
                           const PipelineOptions &PO,
                           const report::PlanFn &PlanAt,
                           const PassesPlanFn &PlanPasses,
                           const PassLog &MainLog);

/// The report's "what would help" row for fitting: the fit the default
/// path runs (fitPlan: transforms and micro-batches, the allocator's reserve
/// included) against the request's budget, so the row and the default
/// answer agree. PlanAt and PlanPasses must outlive the function.
report::FitFn makeFitRemedy(Session &S, const PlanContext &C, const Plan &Base,
                            const PipelineOptions &PO,
                            const report::PlanFn &PlanAt,
                            const PassesPlanFn &PlanPasses);

/// The report options given ("--max-batch", ...), for modes that do not
/// honour them and must say so.
std::vector<std::string> reportOptionsGiven(const api::Request &R);

/// An error's category as api::Result and api::ExecuteResult give it.
api::ErrorCategory apiCategory(oomplan::ErrorCategory C);

} // namespace driver
} // namespace oomplan

#endif
