//===- Chooser.cpp - the cheapest candidate that fits ---------------------===//
//
// Every candidate is scored the same way: estimated total bytes (regions plus
// arena lower bound) against the budget less a margin, then the simulated
// time. Searches over "how much" (chain prefix, number of streamed weights)
// are binary searches on the estimate, which is close to monotone: more
// recompute or more streaming never keeps more bytes alive at once.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Fit/Chooser.h"
#include "oomplan/Fit/ActivationOffload.h"
#include "oomplan/Fit/InferenceRecompute.h"
#include "oomplan/Fit/OptimizerOffload.h"
#include "oomplan/Fit/Recompute.h"
#include "oomplan/Fit/RematChooser.h"
#include "oomplan/Fit/Reorder.h"
#include "oomplan/Fit/WeightStreaming.h"
#include "oomplan/Schedule/PassRegistry.h"
#include "oomplan/Schedule/ScheduleVerifier.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/Twine.h"
#include <algorithm>
#include <functional>
#include <optional>

using namespace oomplan;

bool oomplan::isTrainingSchedule(const Schedule &S) {
  for (const Step &St : S.Steps)
    if (St.Kind == StepKind::Backward)
      return true;
  return false;
}

namespace {
/// A pass applied before the last one, and the schedule it produced.
using Stage = std::pair<std::string, Schedule>;

struct Candidate {
  Schedule S;
  MemoryEstimate M;
  TimePrediction T;
  std::string Name;
  std::string Pass;           ///< The pass that made S; empty: none.
  std::vector<Stage> Earlier; ///< The passes before it, in order.
};

struct Chooser {
  const CostModel &Cost;
  const FitOptions &Opts;
  uint64_t Target;
  bool Training = false; ///< The schedule has a backward pass.
  /// Candidates that fit when the current levers() call began.
  unsigned LevelStart = 0;
  std::optional<Candidate> Best;
  /// With Opts.PlacementFits: the other candidates that fit by the estimate,
  /// in case Best's placement does not fit (preferPlaced).
  std::vector<Candidate> Others;
  std::optional<Candidate> Smallest;
  std::optional<Schedule> Leanest; ///< Least memory recompute reaches.
  std::string LeanestName;
  /// Prepended to every candidate's name: what the pass applied first.
  std::string Prefix;
  unsigned Fitted = 0; ///< Candidates that fit so far.
  /// The passes every candidate considered now is built on (reorder,
  /// optimizer on the host, the leanest recompute, inference recompute).
  std::vector<std::pair<std::string, const Schedule *>> Context;
  /// The first candidate the schedule verifier rejected (a bug).
  llvm::Error Failure = llvm::Error::success();

  Chooser(const CostModel &C, const FitOptions &O)
      : Cost(C), Opts(O),
        // No margin: the budget itself (UINT64_MAX does not survive a
        // round trip through double).
        Target(O.Margin > 0
                   ? static_cast<uint64_t>(static_cast<double>(O.BudgetBytes) *
                                           (1 - O.Margin))
                   : O.BudgetBytes) {}

  uint64_t total(const Schedule &S) const {
    return estimateMemory(S, Opts.Estimate).totalBytes();
  }

  // Verifies S, made by Pass; false (and Failure set) when it is broken.
  bool check(const Schedule &S, PassId Pass) {
    if (Failure)
      return false;
    Failure = verifyAfter(Pass, S);
    return !Failure;
  }

  // The candidates of every lever that applies to S, in the registry's
  // order; with Until, only the levers before it (those a lever tries on
  // top of its own schedule).
  void levers(const Schedule &S, std::optional<PassId> Until = std::nullopt);

  std::vector<Stage> earlier() const {
    std::vector<Stage> E;
    for (const auto &[P, S] : Context)
      E.push_back({P, *S});
    return E;
  }

  // Weighs S, made by Pass (none: the schedule as given).
  void consider(Schedule S, const std::string &Base,
                std::optional<PassId> Pass) {
    if (Pass && !check(S, *Pass))
      return;
    std::string PassName = Pass ? passName(*Pass).str() : std::string();
    std::string Name = Prefix + Base;
    MemoryEstimate M = estimateMemory(S, Opts.Estimate);
    if (M.totalBytes() > Target) {
      if (Opts.OnCandidate)
        Opts.OnCandidate(Name, M.totalBytes(), -1);
      if (!Smallest || M.totalBytes() < Smallest->M.totalBytes())
        Smallest = Candidate{std::move(S), M, {}, Name, PassName, earlier()};
      return;
    }
    TimePrediction T = simulate(S, Cost);
    if (Opts.OnCandidate)
      Opts.OnCandidate(Name, M.totalBytes(), T.TotalSeconds);
    ++Fitted;
    bool Better = !Best || T.TotalSeconds < Best->T.TotalSeconds;
    if (!Better && !Opts.PlacementFits)
      return;
    // The new candidate goes to Best; the loser of the two (when placement
    // is to be checked) to Others.
    std::optional<Candidate> Prev = std::move(Best);
    Best.reset();
    Best = Candidate{std::move(S), M, T, Name, PassName, earlier()};
    if (!Better)
      std::swap(*Best, *Prev);
    if (Prev && Opts.PlacementFits)
      Others.push_back(std::move(*Prev));
  }

  // True when Best's placement fits (or nobody checks placement).
  bool bestPlaces() const {
    return Best && (!Opts.PlacementFits || Opts.PlacementFits(Best->S));
  }

  // Best's placement does not fit: the cheapest other candidate whose
  // placement fits replaces it (otherwise a placement over by fragmentation
  // would make the caller aim lower for every candidate, and a +421% plan
  // could win over a +26% one that places exactly at the budget). When none
  // places, Best stays, and the caller aims lower.
  void preferPlaced() {
    std::stable_sort(Others.begin(), Others.end(),
                     [](const Candidate &A, const Candidate &B) {
                       return A.T.TotalSeconds < B.T.TotalSeconds;
                     });
    for (Candidate &O : Others)
      if (Opts.PlacementFits(O.S)) {
        Best = std::move(O);
        break;
      }
    Others.clear();
  }

  // Smallest K in [Lo, Hi] whose schedule fits, assuming Make(Hi) fits.
  size_t search(size_t Lo, size_t Hi,
                const std::function<Schedule(size_t)> &Make) const {
    while (Lo < Hi) {
      size_t Mid = Lo + (Hi - Lo) / 2;
      if (total(Make(Mid)) <= Target)
        Hi = Mid;
      else
        Lo = Mid + 1;
    }
    return Lo;
  }

  void recompute(const Schedule &S) {
    if (Opts.Remat == RematMode::None)
      return;
    consider(applyRecompute(S, sqrtCheckpoints(S)), "sqrt(n) checkpointing",
             PassId::Recompute);
    if (Opts.Remat == RematMode::Sqrt)
      return;
    std::vector<RematChain> Order = greedyRematOrder(S, Cost.stepTimes(S));
    consider(applyRecompute(S, greedyMarks(S, Order)), "recompute (greedy)",
             PassId::Recompute);
    consider(applyRecompute(S, greedyMarks(S, byFreedSpan(S, Order))),
             "recompute (greedy)", PassId::Recompute);
    // The plain prefix too: a chain that does not help alone may be needed
    // with later ones (a plateau of equal peaks, one per layer).
    auto Make = [&](size_t K) {
      return applyRecompute(S, marksOfPrefix(S, Order, K));
    };
    Schedule All = Make(Order.size());
    uint64_t AllBytes = total(All);
    if (AllBytes > Target)
      consider(All, "recompute (greedy, everything)", PassId::Recompute);
    else
      consider(Make(search(0, Order.size(), Make)), "recompute (greedy)",
               PassId::Recompute);
    // The leaner of "everything" and sqrt(n): where offload starts from when
    // recompute alone does not reach the budget.
    Schedule Sq = applyRecompute(S, sqrtCheckpoints(S));
    bool SqLeaner = total(Sq) < AllBytes;
    Leanest = SqLeaner ? std::move(Sq) : std::move(All);
    LeanestName =
        SqLeaner ? "sqrt(n) checkpointing" : "recompute (greedy, everything)";
  }

  // The same chains weighted by how long the bytes they free stay freed
  // (from the last forward read to the first backward read, in steps), as
  // DTR's staleness does: freeing a tensor that is read again soon rarely
  // lowers the peak, which is usually that read's step.
  static std::vector<RematChain> byFreedSpan(const Schedule &S,
                                             std::vector<RematChain> Order) {
    size_t End = forwardEnd(S);
    std::vector<size_t> LastFwd(S.Tensors.size(), 0),
        FirstPost(S.Tensors.size(), S.Steps.size());
    for (size_t I = 0; I < S.Steps.size(); ++I)
      for (TensorId R : S.Steps[I].Reads) {
        if (I < End)
          LastFwd[R] = I;
        else
          FirstPost[R] = std::min(FirstPost[R], I);
      }
    auto Key = [&](const RematChain &C) {
      size_t Span = 1;
      for (size_t St : C.Steps)
        for (TensorId W : S.Steps[St].Writes)
          if (FirstPost[W] < S.Steps.size())
            Span = std::max(Span, FirstPost[W] - std::max(LastFwd[W], St));
      return static_cast<double>(C.GainBytes) * static_cast<double>(Span) /
             std::max(C.Seconds, 1e-12);
    };
    std::vector<double> Keys;
    for (const RematChain &C : Order)
      Keys.push_back(Key(C));
    std::vector<size_t> Idx(Order.size());
    for (size_t I = 0; I < Idx.size(); ++I)
      Idx[I] = I;
    std::stable_sort(Idx.begin(), Idx.end(),
                     [&](size_t A, size_t B) { return Keys[A] > Keys[B]; });
    std::vector<RematChain> Out;
    for (size_t I : Idx)
      Out.push_back(std::move(Order[I]));
    return Out;
  }

  // The chains in greedy order, each kept only if it brings the schedule
  // closer to the budget (excessBytes falls): the greedy's byte estimate
  // does not see when a freed tensor is needed anyway at the peak (its own
  // backward step), and recomputing it then only adds time.
  std::vector<bool> greedyMarks(const Schedule &S,
                                const std::vector<RematChain> &Order) const {
    std::vector<bool> Marks(S.Steps.size(), false);
    std::vector<const RematChain *> Taken;
    uint64_t Cur = excessBytes(S, Opts.Estimate, Target);
    auto Try = [&](const std::vector<const RematChain *> &Set) {
      std::vector<bool> Trial(S.Steps.size(), false);
      for (const RematChain *C : Set)
        for (size_t St : C->Steps)
          Trial[St] = true;
      uint64_t E = excessBytes(applyRecompute(S, Trial), Opts.Estimate, Target);
      if (E >= Cur)
        return false;
      Marks = std::move(Trial);
      Taken = Set;
      Cur = E;
      return true;
    };
    for (const RematChain &C : Order) {
      if (Cur == 0)
        break;
      std::vector<const RematChain *> Set = Taken;
      Set.push_back(&C);
      if (Try(Set))
        continue;
      // Taken chains that read what C writes would make C's copies early
      // (born for their recompute, not for C's backward readers): try C
      // in their place.
      std::vector<bool> Writes(S.Tensors.size(), false);
      for (size_t St : C.Steps)
        for (TensorId W : S.Steps[St].Writes)
          Writes[W] = true;
      auto ReadsC = [&](const RematChain *T) {
        for (size_t St : T->Steps)
          for (TensorId R : S.Steps[St].Reads)
            if (Writes[R])
              return true;
        return false;
      };
      Set.erase(std::remove_if(Set.begin(), Set.end() - 1, ReadsC),
                Set.end() - 1);
      if (Set.size() < Taken.size() + 1)
        Try(Set);
    }
    return Marks;
  }

  // Saved activations to the host: the fewest (most bytes x steps first)
  // that fit, on S as it is (alone, or after recompute).
  void offloadCandidates(const Schedule &S, const std::string &Name) {
    // --remat=sqrt asks for the baseline alone, for comparison.
    if (Opts.Offload != OffloadMode::Auto || Opts.Remat == RematMode::Sqrt)
      return;
    std::vector<TensorId> A = offloadableActivations(S);
    if (A.empty())
      return;
    for (unsigned Ahead : {UINT32_MAX, 4u, 1u, 0u}) {
      auto Make = [&](size_t N) {
        return offloadActivations(S, llvm::makeArrayRef(A).take_front(N), Cost,
                                  Ahead);
      };
      if (total(Make(A.size())) > Target)
        consider(Make(A.size()), Name, PassId::ActivationOffload);
      else
        consider(Make(search(1, A.size(), Make)), Name,
                 PassId::ActivationOffload);
    }
  }

  // Offload of saved activations, and offload on top of the leanest
  // recompute when no candidate of this level fits (recompute's nor
  // offload's alone).
  void activationOffload(const Schedule &S) {
    offloadCandidates(S, "offload saved activations");
    if (Fitted == LevelStart && Leanest && check(*Leanest, PassId::Recompute)) {
      Context.push_back({passName(PassId::Recompute).str(), &*Leanest});
      offloadCandidates(*Leanest, LeanestName + " + offload saved activations");
      Context.pop_back();
    }
  }

  // The same with the optimizer step on the host (OptimizerOffload.h): it
  // frees the state bytes for the cost of moving gradients and weights over
  // the link, so it is a candidate alone and under every other transform.
  void hostOptimizerCandidates(const Schedule &S) {
    if (Opts.Offload != OffloadMode::Auto || Opts.Remat == RematMode::Sqrt ||
        !hasOptimizerState(S))
      return;
    Schedule H = offloadOptimizerState(S);
    consider(H, "optimizer state on the host", PassId::OptimizerOffload);
    if (Failure)
      return;
    Prefix = "optimizer state on the host + ";
    Context.push_back({passName(PassId::OptimizerOffload).str(), &H});
    levers(H, PassId::OptimizerOffload);
    Context.pop_back();
    Prefix.clear();
  }

  // Inference: cheap long-lived values recomputed before their late reads
  // (InferenceRecompute.h), each kept only if it brings the schedule closer
  // to the budget (freeing a value not live at the peak only adds time), and
  // the shortest prefix of the order that fits. Returns the leanest, which
  // weight streaming is then tried on top of.
  std::optional<Schedule> inferenceRecompute(const Schedule &S) {
    if (Opts.Remat == RematMode::None)
      return std::nullopt;
    std::vector<InferenceRemat> Order = inferenceRematCandidates(
        S, Cost.stepTimes(S), !Opts.Estimate.IOInArena);
    if (Order.empty())
      return std::nullopt;
    std::vector<InferenceRemat> Taken;
    uint64_t Cur = excessBytes(S, Opts.Estimate, Target);
    for (const InferenceRemat &C : Order) {
      if (Cur == 0)
        break;
      Taken.push_back(C);
      uint64_t E =
          excessBytes(applyInferenceRecompute(S, Taken), Opts.Estimate, Target);
      if (E < Cur)
        Cur = E;
      else
        Taken.pop_back();
    }
    const std::string Name = "recompute cheap long-lived values";
    if (!Taken.empty())
      consider(applyInferenceRecompute(S, Taken), Name,
               PassId::InferenceRecompute);
    auto Make = [&](size_t K) {
      return applyInferenceRecompute(S,
                                     llvm::makeArrayRef(Order).take_front(K));
    };
    Schedule All = Make(Order.size());
    if (total(All) > Target)
      consider(All, Name, PassId::InferenceRecompute);
    else
      consider(Make(search(1, Order.size(), Make)), Name,
               PassId::InferenceRecompute);
    if (!check(All, PassId::InferenceRecompute))
      return std::nullopt;
    return All;
  }

  // Inference recompute, alone and under the levers before it (weight
  // streaming).
  void inferenceCandidates(const Schedule &S) {
    std::optional<Schedule> R = inferenceRecompute(S);
    if (!R)
      return;
    Prefix = "recompute cheap long-lived values + ";
    Context.push_back({passName(PassId::InferenceRecompute).str(), &*R});
    levers(*R, PassId::InferenceRecompute);
    Context.pop_back();
    Prefix.clear();
  }

  void streamWeightsCandidates(const Schedule &S) {
    if (Opts.Offload == OffloadMode::None)
      return;
    std::vector<TensorId> W = streamableWeights(S);
    if (W.empty())
      return;
    for (unsigned Ahead : {UINT32_MAX, 8u, 2u, 0u}) {
      auto Make = [&](size_t N) {
        return streamWeights(S, llvm::makeArrayRef(W).take_front(N), Cost,
                             Ahead);
      };
      std::string Name =
          "weight streaming" +
          (Ahead == UINT32_MAX
               ? std::string()
               : " (at most " + std::to_string(Ahead) + " prefetches ahead)");
      if (total(Make(W.size())) > Target) {
        consider(Make(W.size()), Name, PassId::WeightStreaming);
        continue;
      }
      consider(Make(search(1, W.size(), Make)), Name, PassId::WeightStreaming);
    }
  }
};

/// The chooser's side of each fit lever in the pass registry: when it
/// applies, and its cost hook (the candidates it builds and weighs).
/// Reorder is not here: it runs first, on its own, and the others start
/// from its schedule when it lowers the estimate (fitSchedule). Nor is
/// micro-batch: the driver plans each split and runs the chooser on one
/// pass.
struct LeverHook {
  PassId Pass;
  bool (*Applies)(bool Training, const FitOptions &Opts);
  void (Chooser::*Candidates)(const Schedule &S);
};

const LeverHook LeverHooks[] = {
    {PassId::Recompute,
     [](bool Training, const FitOptions &) { return Training; },
     &Chooser::recompute},
    {PassId::ActivationOffload,
     [](bool Training, const FitOptions &) { return Training; },
     &Chooser::activationOffload},
    {PassId::WeightStreaming,
     [](bool Training, const FitOptions &) { return !Training; },
     &Chooser::streamWeightsCandidates},
    {PassId::OptimizerOffload,
     [](bool Training, const FitOptions &) { return Training; },
     &Chooser::hostOptimizerCandidates},
    // --offload=weights asks for weight streaming alone.
    {PassId::InferenceRecompute,
     [](bool Training, const FitOptions &O) {
       return !Training && O.Offload != OffloadMode::Weights;
     },
     &Chooser::inferenceCandidates},
};

void Chooser::levers(const Schedule &S, std::optional<PassId> Until) {
  unsigned OuterStart = LevelStart;
  LevelStart = Fitted;
  Leanest.reset();
  for (const PassInfo &P : schedulePasses()) {
    if (Until && P.Id == *Until)
      break;
    for (const LeverHook &H : LeverHooks)
      if (H.Pass == P.Id && H.Applies(Training, Opts))
        (this->*H.Candidates)(S);
  }
  LevelStart = OuterStart;
}
} // namespace

static std::string whyNot(const Schedule &S, const MemoryEstimate &M,
                          const std::string &Name) {
  std::string Op = M.PeakStep < S.Steps.size() ? S.Steps[M.PeakStep].Op : "";
  return "the smallest plan found (" + Name + ") needs " +
         std::to_string(M.totalBytes()) + " bytes: weights " +
         std::to_string(M.WeightBytes) + ", io " + std::to_string(M.IOBytes) +
         ", arena " + std::to_string(M.ArenaPeak) + " at step " +
         std::to_string(M.PeakStep) + (Op.empty() ? "" : " (" + Op + ")");
}

// Tells Instr the passes that made C's schedule, in order.
static void replayPasses(const PassInstrumentation *Instr, const Candidate &C) {
  if (!Instr)
    return;
  for (const Stage &St : C.Earlier)
    Instr->after(St.first, St.second);
  if (!C.Pass.empty())
    Instr->after(C.Pass, C.S);
}

llvm::Expected<FitResult> oomplan::fitSchedule(const Schedule &In,
                                               const CostModel &Cost,
                                               const FitOptions &Opts) {
  if (llvm::Error E = verifySchedule(In))
    return prependContext(std::move(E), "the schedule given to the chooser: ");
  FitResult R;
  R.BaseMem = estimateMemory(In, Opts.Estimate);
  R.Base = simulate(In, Cost);
  Chooser C(Cost, Opts);
  // --remat=sqrt and --offload=weights ask for that transform, for
  // comparison: the untransformed schedule is then not a candidate.
  bool Forced =
      Opts.Remat == RematMode::Sqrt || Opts.Offload == OffloadMode::Weights;
  Schedule S = In;
  bool Reordered = false;
  if (Opts.Reorder) {
    Schedule O = reorderForMemory(In, Opts.Estimate);
    if (!C.check(O, PassId::Reorder))
      return std::move(C.Failure);
    if ((Reordered = C.total(O) < C.total(In)))
      S = std::move(O);
  }
  llvm::StringRef ReorderName = passName(PassId::Reorder);
  if (!Forced)
    C.consider(S, Reordered ? ReorderName.str() : "none",
               Reordered ? std::optional<PassId>(PassId::Reorder)
                         : std::nullopt);
  if (Reordered)
    C.Context.push_back({ReorderName.str(), &S});
  // The plan as it is fits only when its placement does too; else the
  // transforms are candidates, and it is not one.
  bool Placed = C.bestPlaces();
  if (!Placed)
    C.Best.reset();
  if (!Placed || Forced) {
    C.Training = isTrainingSchedule(S);
    C.levers(S);
  }
  if (C.Failure)
    return std::move(C.Failure);
  if (!Placed && !C.bestPlaces() && C.Best && Opts.PlacementFits)
    C.preferPlaced();
  if (C.Best) {
    replayPasses(Opts.Instr, *C.Best);
    R.Fits = true;
    R.Sched = std::move(C.Best->S);
    R.Mem = C.Best->M;
    R.Time = C.Best->T;
    R.Strategy = C.Best->Name;
    return std::move(R);
  }
  if (C.Smallest)
    replayPasses(Opts.Instr, *C.Smallest);
  R.Sched = C.Smallest ? C.Smallest->S : In;
  R.Mem = C.Smallest ? C.Smallest->M : R.BaseMem;
  R.Time = simulate(R.Sched, Cost);
  R.Strategy = C.Smallest ? C.Smallest->Name : "none";
  R.SmallestBytes = R.Mem.totalBytes();
  R.Why = whyNot(R.Sched, R.Mem, R.Strategy);
  return std::move(R);
}
