//===- SavedTensorRules.cpp - training's reading of the op table ----------===//
//
// The rows themselves are the saved-tensor column of the op table
// (lib/IR/OpTable.cpp; docs/training.md prints them in prose). Here only the
// two decisions that are not rows: an op whose record says Unknown, or that
// has no record, keeps all its inputs (the transform warns), because keeping
// too much wastes budget while keeping too little is an out-of-memory the
// user was told would not happen.
//
//===----------------------------------------------------------------------===//
#include "SavedTensorRules.h"

using namespace oomplan;
using namespace oomplan::training;

namespace {
const SavedRule Fallback = {ops::GradClass::Rule, AllInputs, AllInputs, 0, 0,
                            AuxKind::None,        0};

bool decided(const ops::OpInfo &Op) {
  return Op.Grad.Class == ops::GradClass::Rule ||
         Op.Grad.Class == ops::GradClass::NotDifferentiable;
}
} // namespace

const SavedRule *training::findSavedRule(llvm::StringRef OpType) {
  const ops::OpInfo *Op = ops::lookupOp(OpType);
  return Op && decided(*Op) ? &Op->Grad : nullptr;
}

const SavedRule &training::fallbackSavedRule() { return Fallback; }

unsigned training::numSavedRules() {
  unsigned N = 0;
  for (const ops::OpInfo &Op : ops::allOps())
    N += decided(Op);
  return N;
}
