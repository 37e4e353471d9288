//===- Region.cpp - the one region rule -----------------------------------===//
//
// See Region.h: every layer that sizes regions asks this function.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Schedule/Region.h"

using namespace oomplan;

llvm::StringRef oomplan::regionName(Region R) {
  switch (R) {
  case Region::Weights:
    return "weights";
  case Region::IO:
    return "io";
  case Region::Arena:
    return "arena";
  case Region::Host:
    return "host";
  }
  return "?";
}

Region oomplan::regionFor(TensorKind K, bool IOInArena) {
  switch (K) {
  case TensorKind::Weight:
  case TensorKind::Constant:
    return Region::Weights;
  case TensorKind::GraphInput:
  case TensorKind::GraphOutput:
    return IOInArena ? Region::Arena : Region::IO;
  default:
    return Region::Arena;
  }
}
