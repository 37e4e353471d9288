//===- ScheduleBuilder.h - hand-written schedules for unit tests -*- C++
//-*-===//
//
// Tests of the schedule verifier and of single fit transforms build small
// schedules by hand, tensor by tensor and step by step, so that every byte
// and step index in an expectation can be checked by reading the test.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TEST_UNIT_SCHEDULEBUILDER_H
#define OOMPLAN_TEST_UNIT_SCHEDULEBUILDER_H

#include "oomplan/Schedule/Schedule.h"
#include <string>
#include <vector>

namespace oomplan {
namespace test {

struct ScheduleBuilder {
  Schedule S;
  /// Give each step a node id equal to its index (transforms that look up
  /// a step's node, such as recompute, need one); NoId otherwise.
  bool NumberNodes = false;

  /// A tensor; a GraphOutput is also marked as returned to the caller.
  TensorId tensor(const std::string &Name, uint64_t Bytes,
                  TensorKind K = TensorKind::Activation, bool Host = false) {
    ScheduleTensor T;
    T.Name = Name;
    T.SizeBytes = Bytes;
    T.Kind = K;
    T.IsGraphOutput = K == TensorKind::GraphOutput;
    T.HostHome = Host;
    S.Tensors.push_back(T);
    return static_cast<TensorId>(S.Tensors.size() - 1);
  }
  Step &step(StepKind K, const std::string &Op, std::vector<TensorId> Reads,
             std::vector<TensorId> Writes) {
    Step St;
    St.Kind = K;
    St.Op = Op;
    if (NumberNodes)
      St.Node = static_cast<NodeId>(S.Steps.size());
    St.Reads = std::move(Reads);
    St.Writes = std::move(Writes);
    S.Steps.push_back(std::move(St));
    return S.Steps.back();
  }
};

} // namespace test
} // namespace oomplan

#endif
