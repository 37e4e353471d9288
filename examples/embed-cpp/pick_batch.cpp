// pick_batch: the largest batch of MODEL that fits an NVIDIA L4 with 2 GiB
// of headroom, through oomplan's C++ API (docs/embedding.md). The request
// is built field by field; `--seq N` and `--train` may follow the model.
// Exits 0 when some batch fits, 2 when none does, 1 on error.
#include <oomplan/oomplan.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL [--seq N] [--train]\n", argv[0]);
    return 1;
  }
  oomplan::api::Request Req;
  Req.ModelPath = argv[1];
  Req.Device = "L4";   // The card: its memory is the budget.
  Req.Overhead = "2G"; // Headroom counted against it.
  Req.Report.MaxBatch = true;
  for (int I = 2; I < argc; ++I) {
    std::string Arg = argv[I];
    if (Arg == "--train")
      Req.Train.Enabled = true;
    else if (Arg == "--seq" && I + 1 < argc)
      Req.Seq = std::strtoll(argv[++I], nullptr, 10);
    else {
      std::fprintf(stderr, "pick_batch: unknown argument '%s'\n", argv[I]);
      return 1;
    }
  }
  oomplan::api::Result Res = oomplan::api::run(Req);
  if (!Res.ok()) {
    std::fprintf(stderr, "pick_batch: %s: %s\n",
                 oomplan::api::errorCategoryName(*Res.Category),
                 Res.ErrorMessage.c_str());
    return 1;
  }
  if (!Res.MaxBatch || !Res.MaxBatch->Max) {
    std::printf("no batch fits an L4 with 2 GiB of headroom\n");
    return 2;
  }
  std::printf("batch %s%lld fits an L4 with 2 GiB of headroom (%llu bytes)\n",
              Res.MaxBatch->AtLeast ? "at least " : "",
              static_cast<long long>(*Res.MaxBatch->Max),
              static_cast<unsigned long long>(Res.MaxBatch->BytesAtMax));
  return 0;
}
