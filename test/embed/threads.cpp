//===- threads.cpp - independent C API calls on several threads at once ---===//
//
// Plans a set of different requests (inference, training with fitting, a
// capacity search, a MiniMalloc CSV, an error) once each on one thread,
// then all of them several times over on eight threads at once, and checks
// that every concurrent result equals the serial one byte for byte. Built
// twice (test/embed/CMakeLists.txt): against liboomplan.so (embed.threads),
// and with the C API and driver compiled under ThreadSanitizer
// (embed.tsan), which fails the test on any data race it sees. Usage:
// embed-threads TEST_DIR (the test/ folder).
//
//===----------------------------------------------------------------------===//
#include "oomplan-c/oomplan.h"

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Job {
  std::string Model;
  std::vector<std::string> Args;
};

struct Outcome {
  int Status = -1;
  unsigned long long Total = 0;
  long long MaxBatch = -1;
  std::string Output, Error;
  bool operator==(const Outcome &O) const {
    return Status == O.Status && Total == O.Total && MaxBatch == O.MaxBatch &&
           Output == O.Output && Error == O.Error;
  }
};

Outcome plan(const Job &J) {
  std::vector<const char *> Argv;
  for (const std::string &A : J.Args)
    Argv.push_back(A.c_str());
  oomplan_result *R = nullptr;
  char *Error = nullptr;
  Outcome O;
  O.Status =
      oomplan_plan(J.Model.c_str(), Argv.data(), int(Argv.size()), &R, &Error);
  O.Total = oomplan_result_total_bytes(R);
  O.MaxBatch = oomplan_result_max_batch(R);
  O.Output = oomplan_result_output(R);
  O.Error = Error ? Error : "";
  oomplan_free_string(Error);
  oomplan_result_free(R);
  return O;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s TEST_DIR\n", argv[0]);
    return 1;
  }
  // Small models, so that the run stays short under ThreadSanitizer.
  std::string M = std::string(argv[1]) + "/models",
              L = argv[1] + std::string("/lit");
  std::string Fit = L + "/fit/recompute.onnxtxt";
  std::vector<Job> Jobs = {
      {M + "/gpt_like.onnx", {"--batch=1", "--seq=16"}},
      {L + "/training/mlp.onnxtxt",
       {"--train", "--batch=4", "--optimizer=adamw"}},
      {Fit, {"--train", "--batch=16", "--align=1", "--budget=34000", "--fit"}},
      {Fit, {"--train", "--align=1", "--budget=34000", "--max-batch"}},
      {Fit, {"--batch=4", "--emit=report", "--budget=1000", "--no-fit"}},
      {L + "/planner/Inputs/three.csv", {"--emit=csv"}},
      {M + "/no-such-model.onnx", {"--batch=1"}},
      {Fit, {"--batch=1", "--no-such-option"}},
  };
  std::vector<Outcome> Serial;
  for (const Job &J : Jobs)
    Serial.push_back(plan(J));

  // Eight threads run every job, each starting at a different one, so that
  // every job runs next to different ones.
  const unsigned Threads = 8;
  std::atomic<unsigned> Mismatches{0};
  std::vector<std::thread> Pool;
  for (unsigned T = 0; T < Threads; ++T)
    Pool.emplace_back([&, T] {
      for (unsigned I = 0; I < Jobs.size(); ++I) {
        size_t K = (T + I) % Jobs.size();
        if (!(plan(Jobs[K]) == Serial[K])) {
          std::fprintf(stderr, "job %zu differs on thread %u\n", K, T);
          ++Mismatches;
        }
      }
    });
  for (std::thread &T : Pool)
    T.join();
  unsigned Fits = 0, Errors = 0;
  for (const Outcome &O : Serial) {
    Fits += O.Status == 0;
    Errors += O.Status == 1;
  }
  std::printf("%zu jobs, %u threads: %u mismatches (%u fit, %u errors)\n",
              Jobs.size(), Threads, Mismatches.load(), Fits, Errors);
  // The error jobs must be errors, the others not.
  return Mismatches == 0 && Errors == 2 ? 0 : 1;
}
