//===- ParallelSpec.cpp - the --parallel option's spelling ----------------===//
//
// Parses and prints a configuration: "dp=2,tp=8,sp,pp=4,zero=1,
// micro-batches=8,recompute=selective,offload=optimizer". Errors name the
// item and the accepted spelling; the device count must be dp * tp * pp.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Parallel/Parallel.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace oomplan;
using namespace oomplan::parallel;

static llvm::Error specError(const llvm::Twine &Msg) {
  return makeInputError("--parallel: " + Msg +
                        " (expected dp=D,tp=T,pp=P,zero=0|1|2|3,sp,"
                        "micro-batches=M,recompute=none|selective|full,"
                        "offload=optimizer|params|both)");
}

static llvm::Error parseCount(llvm::StringRef Key, llvm::StringRef Val,
                              unsigned &Out) {
  unsigned N;
  if (Val.getAsInteger(10, N) || N < 1 || N > 65536)
    return specError("'" + Key + "=" + Val +
                     "' is not a count from 1 to 65536");
  Out = N;
  return llvm::Error::success();
}

llvm::Expected<ParallelSpec>
parallel::parseParallelSpec(llvm::StringRef Text,
                            std::optional<unsigned> Devices) {
  ParallelSpec S;
  bool DPGiven = false;
  llvm::SmallVector<llvm::StringRef, 8> Items;
  Text.split(Items, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef Item : Items) {
    auto [Key, Val] = Item.trim().split('=');
    llvm::Error E = llvm::Error::success();
    if (Key == "sp" && Val.empty())
      S.SP = true;
    else if (Key == "dp")
      E = parseCount(Key, Val, S.DP), DPGiven = true;
    else if (Key == "tp")
      E = parseCount(Key, Val, S.TP);
    else if (Key == "pp")
      E = parseCount(Key, Val, S.PP);
    else if (Key == "micro-batches")
      E = parseCount(Key, Val, S.MicroBatches);
    else if (Key == "zero") {
      if (Val.size() != 1 || Val[0] < '0' || Val[0] > '3')
        return specError("'zero=" + Val + "' is not a stage 0-3");
      S.Zero = unsigned(Val[0] - '0');
    } else if (Key == "recompute") {
      if (Val == "none")
        S.Recompute = RecomputeKind::None;
      else if (Val == "selective")
        S.Recompute = RecomputeKind::Selective;
      else if (Val == "full")
        S.Recompute = RecomputeKind::Full;
      else
        return specError("'recompute=" + Val + "' is not none|selective|full");
    } else if (Key == "offload") {
      S.OffloadOptimizer = Val == "optimizer" || Val == "both";
      S.OffloadParams = Val == "params" || Val == "both";
      if (!S.OffloadOptimizer && !S.OffloadParams)
        return specError("'offload=" + Val + "' is not optimizer|params|both");
    } else {
      return specError("unknown item '" + Item + "'");
    }
    if (E)
      return std::move(E);
  }
  if (S.SP && S.TP < 2)
    return specError("sp needs tp=2 or more");
  if (S.OffloadParams && S.Zero != 3)
    return specError("offload=params needs zero=3 (DeepSpeed's offload_param)");
  if (S.Zero > 0 && S.PP > 1 && S.Zero > 1)
    return specError("zero=" + llvm::Twine(S.Zero) +
                     " does not combine with pp (DeepSpeed's pipeline engine "
                     "supports ZeRO stage 0 and 1)");
  // Each count is at most 65536 (parseCount); so is their product, which
  // would otherwise wrap in unsigned arithmetic (to 0 at tp=pp=65536).
  uint64_t Product = uint64_t(S.DP) * S.TP * S.PP;
  if (Product > 65536)
    return specError("dp*tp*pp = " + llvm::Twine(Product) +
                     " is more than 65536 devices");
  if (Devices) {
    unsigned TPPP = S.TP * S.PP;
    if (!DPGiven) {
      if (*Devices % TPPP)
        return specError("--devices=" + llvm::Twine(*Devices) +
                         " is not a multiple of tp*pp = " + llvm::Twine(TPPP));
      S.DP = *Devices / TPPP;
    }
    if (S.devices() != *Devices)
      return specError("dp*tp*pp = " + llvm::Twine(S.devices()) +
                       " but --devices=" + llvm::Twine(*Devices));
  }
  return S;
}

std::string parallel::formatSpec(const ParallelSpec &S) {
  std::string Out = "dp=" + std::to_string(S.DP);
  if (S.TP > 1)
    Out += ",tp=" + std::to_string(S.TP);
  if (S.SP)
    Out += ",sp";
  if (S.PP > 1)
    Out += ",pp=" + std::to_string(S.PP);
  Out += ",zero=" + std::to_string(S.Zero);
  if (S.MicroBatches > 1)
    Out += ",micro-batches=" + std::to_string(S.MicroBatches);
  if (S.Recompute == RecomputeKind::Selective)
    Out += ",recompute=selective";
  if (S.Recompute == RecomputeKind::Full)
    Out += ",recompute=full";
  if (S.OffloadOptimizer || S.OffloadParams)
    Out += std::string(",offload=") + (S.OffloadOptimizer && S.OffloadParams
                                           ? "both"
                                       : S.OffloadOptimizer ? "optimizer"
                                                            : "params");
  return Out;
}
