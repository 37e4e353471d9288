//===- TrainingOptimizer.cpp - the optimizer step of a training step -----===//
//
// The optimizer's state (moments, master weights) and the temporaries of
// its update, as PyTorch's optimizers make them (docs/training.md
// "Optimizer and precision").
//
//===----------------------------------------------------------------------===//
#include "TrainingBuilder.h"

using namespace oomplan;
using namespace oomplan::training;

// Optimizer state is resident (steady state: PyTorch creates it in the first
// step and keeps it); Adam's update makes two temporaries the size of the
// parameter, live one parameter at a time, so the step needs two of the
// largest (fp32, on the master copy under mixed precision).
// Optimizer state of one parameter. In the steady state it is resident (it
// exists before the step); on the first step the optimizer step creates it
// (PyTorch initialises every parameter's state before updating any), so it
// is written there and lives to the end of the step, as an activation would.
void TrainingBuilder::addState(Step &St, std::string Name, uint64_t Bytes) {
  if (Opts.Step == TrainStep::First) {
    St.Writes.push_back(addTensor(std::move(Name), Bytes,
                                  TensorKind::Activation, ElementType::Float));
    return;
  }
  St.Reads.push_back(addTensor(std::move(Name), Bytes,
                               TensorKind::OptimizerState, ElementType::Float));
}

void TrainingBuilder::buildOptimizer() {
  unsigned Moments = 0;
  const char *Prefix[2] = {"", ""};
  switch (Opts.Optimizer) {
  case OptimizerKind::SGD:
    break;
  case OptimizerKind::Momentum:
    Moments = 1, Prefix[0] = "momentum";
    break;
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW:
    Moments = 2, Prefix[0] = "adam.m", Prefix[1] = "adam.v";
    break;
  }
  Step St;
  St.Kind = StepKind::Optimizer;
  St.Op = Opts.Optimizer == OptimizerKind::AdamW ? "AdamW"
          : Moments == 2                         ? "Adam"
          : Moments == 1                         ? "Momentum"
                                                 : "SGD";
  uint64_t Largest = 0, TotalF32 = 0;
  for (ValueId P : Params) {
    if (GradOf[P] == NoTensor)
      continue;
    uint64_t Elems = elementsOf(P);
    // fp32 copies of a 16-bit weight can pass 2^64 bytes: saturate, and the
    // planner rejects the size as past 2^63.
    uint64_t F32Bytes = saturatingMul(4, Elems);
    Sum.TrainableParams += Elems;
    Sum.WeightBytes += S.Tensors[P].SizeBytes;
    Largest = std::max(Largest, F32Bytes);
    St.Reads.push_back(P);
    St.Reads.push_back(GradOf[P]);
    TotalF32 = saturatingAdd(TotalF32, F32Bytes);
    const std::string &Name = G.Values[P].Name;
    for (unsigned M = 0; M < Moments; ++M)
      addState(St, std::string(Prefix[M]) + "(" + Name + ")", F32Bytes);
    if (mixed())
      addState(St, "master(" + Name + ")", F32Bytes);
    Sum.OptimizerBytes =
        saturatingAdd(Sum.OptimizerBytes,
                      saturatingMul(F32Bytes, Moments + (mixed() ? 1 : 0)));
  }
  if (Moments == 2 && Opts.Runtime == TrainRuntime::PyTorchCUDA) {
    // PyTorch 2.x on CUDA defaults to the foreach Adam: _foreach_sqrt makes
    // an fp32 copy of every second moment at once, one tensor each (then
    // divides and adds eps in place). One tensor per parameter, so the
    // allocator can place each in a cached block as PyTorch's does.
    Sum.OptimizerScratch = TotalF32;
    for (ValueId P : Params)
      if (GradOf[P] != NoTensor)
        St.Writes.push_back(
            addTensor(std::string(St.Op) + ".scratch(" + G.Values[P].Name + ")",
                      saturatingMul(4, elementsOf(P)), TensorKind::Activation,
                      ElementType::Float));
  } else if (Moments == 2) {
    // PyTorch 1.13's for-loop: two temporaries of the largest parameter.
    Sum.OptimizerScratch = saturatingMul(2, Largest);
    St.Writes.push_back(addTensor(std::string(St.Op) + ".scratch",
                                  Sum.OptimizerScratch, TensorKind::Activation,
                                  ElementType::Float));
  }
  S.Steps.push_back(std::move(St));
}
