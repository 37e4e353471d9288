//===- TrainingModelsTest.cpp - the training exports against PyTorch -----===//
//
// The training-mode exports of test/models/train/. The four shared models:
// parameter counts equal PyTorch's, model state is exactly 16 bytes per
// parameter for fp32 Adam, and the predicted peak of one training step stays
// within -3%..+10% of PyTorch's measured peak. Twenty-six more architectures
// (torchvision families, our T5/Llama/UNet variants; issue 14; a video
// ResNet, a segmentation head, a GAN generator, two speech encoders, an
// encoder-decoder, a mixture of experts, seven recurrent models): within
// -2%..+5%. The PyTorch numbers were
// measured by utils/bench/measure_torch_peak.py (CPU, steady state,
// docs/training.md) and are recorded here so the test needs no torch.
//
//===----------------------------------------------------------------------===//
#include "TestExpected.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/Plan/TrainingPipeline.h"
#include "gtest/gtest.h"
#include <chrono>

using namespace oomplan;

namespace {
struct Case {
  const char *Model;
  int64_t Batch, Seq;
  uint64_t Params;    ///< Trainable parameters in PyTorch.
  uint64_t TorchPeak; ///< Bytes, measured by utils/bench/measure_torch_peak.py.
  /// Initializers that are buffers, not parameters (--freeze).
  const char *Freeze[2] = {nullptr, nullptr};
};

const Case Cases[] = {
    {"resnet50", 8, 0, 25557032, 1051078324},
    {"mobilenet_v2", 8, 0, 3504872, 677137836},
    {"bert_like", 8, 128, 109482240, 2404827844},
    {"bert_like", 8, 512, 109482240, 8360357572},
    {"gpt_like", 8, 128, 124439808, 3129134776},
    {"gpt_like", 8, 512, 124439808, 10291444408},
};

// One model of eight torchvision families and our own variants (issue 14),
// exported by utils/export/export_train_models.py (graph-only); PyTorch's peaks
// and parameter counts from docs/train-zoo-peaks.json (measure_torch_peak.py
// --zoo: CPU, steady-state fp32 Adam, mean loss). Llama's rotary tables are
// buffers the user freezes.
const Case ZooCases[] = {
    {"alexnet", 4, 0, 61100840, 1282028880},
    {"vgg11", 2, 0, 132863336, 2949111336},
    {"squeezenet1_1", 8, 0, 1235496, 30847992},
    {"resnet18", 8, 0, 11689512, 206372648},
    {"mobilenet_v3_small", 8, 0, 2542856, 49706384},
    {"mnasnet0_5", 8, 0, 2218512, 50208288},
    {"googlenet", 4, 0, 6624904, 114594820},
    {"efficientnet_b0", 4, 0, 5288548, 108265892},
    {"vit_small", 4, 0, 3482856, 72374792},
    {"llama", 4, 128, 5212416, 137839780, {"cos", "sin"}},
    {"t5_encoder", 4, 128, 4172160, 122834572},
    {"unet_gn", 4, 0, 1424835, 54546712},
    // Session 9's unseen families: 3-D convolution, a segmentation head
    // (bilinear Resize), ConvTranspose, Conv1d + transformer.
    {"r3d_18", 2, 0, 33371472, 770130208},
    {"lraspp", 4, 0, 3221538, 86890976},
    {"dcgan", 8, 0, 3576704, 74410724},
    {"speech_encoder", 4, 0, 3469312, 155067652},
    {"wav2vec_like", 4, 0, 2269696, 205829536},
    // An encoder-decoder transformer; a top-2 mixture of experts (TopK and
    // ScatterElements routing).
    {"seq2seq", 4, 64, 5739424, 114236228},
    {"moe", 4, 64, 3602880, 74918316},
    // Recurrent layers: LSTM, GRU and tanh RNN, 1 to 3 layers, uni- and
    // bidirectional, batch_first and time-major (the rule before session 9,
    // "keeps all its inputs", put the first LSTM 25% below PyTorch).
    {"lstm", 8, 0, 602144, 17613256},
    {"gru", 8, 0, 605584, 24386296},
    {"lstm_1layer", 16, 0, 50890, 4514192},
    {"lstm_3bi", 4, 0, 250122, 7560416},
    {"gru_2bi", 6, 0, 435722, 9925824},
    {"rnn_tanh", 8, 0, 208394, 5431248},
    {"lstm_time_major", 8, 0, 563722, 11734640},
};

struct Result {
  Plan P;
  TrainingSummary Sum;
  double Seconds = 0;
};

Result planCase(const Case &C) {
  std::string Path =
      std::string(OOMPLAN_TEST_MODELS_DIR) + "/train/" + C.Model + ".onnx";
  auto G = importModelFile(Path);
  test::stopOnError(G, "G");
  auto Shapes = inferShapes(**G);
  test::stopOnError(Shapes, "Shapes");
  BindingRequest R;
  R.Batch = C.Batch;
  if (C.Seq)
    R.Seq = C.Seq;
  auto Bound = bindSymbols(**G, R);
  test::stopOnError(Bound, "Bound");
  std::vector<std::optional<int64_t>> Bind = Bound->Values;
  Bind.resize(Shapes->SymbolNames.size());
  PipelineOptions PO;
  std::vector<std::string> Warnings;
  Result Res;
  auto T0 = std::chrono::steady_clock::now();
  TrainingOptions TO;
  for (const char *F : C.Freeze)
    if (F)
      TO.Freeze.push_back(F);
  auto P = planTrainingGraph(**G, *Shapes, Bind, PO, TO, Warnings, &Res.Sum);
  Res.Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - T0)
          .count();
  test::stopOnError(P, "P");
  EXPECT_TRUE(Warnings.empty()) << Warnings.front();
  Res.P = std::move(*P);
  return Res;
}
} // namespace

TEST(TrainingModels, ParametersAndModelState) {
  for (const Case &C : Cases) {
    if (C.Seq == 512)
      continue; // same parameters as seq 128
    Result R = planCase(C);
    EXPECT_EQ(R.Sum.TrainableParams, C.Params) << C.Model;
    EXPECT_EQ(R.Sum.modelStateBytes(), 16 * C.Params) << C.Model;
  }
}

TEST(TrainingModels, PeakWithinBarOfPyTorch) {
  for (const Case &C : Cases) {
    Result R = planCase(C);
    uint64_t Ours = R.P.totalBytes();
    std::printf("%-13s b=%lld s=%-4lld ours=%llu torch=%llu err=%+.2f%% "
                "lb=%llu plan=%.2fs\n",
                C.Model, (long long)C.Batch, (long long)C.Seq,
                (unsigned long long)Ours, (unsigned long long)C.TorchPeak,
                C.TorchPeak ? 100.0 * (double(Ours) - C.TorchPeak) / C.TorchPeak
                            : 0.0,
                (unsigned long long)(R.P.WeightBytes + R.P.IOBytes +
                                     R.P.ArenaLowerBound),
                R.Seconds);
    if (!C.TorchPeak)
      continue;
    EXPECT_GE(double(Ours), 0.97 * C.TorchPeak) << C.Model << " " << C.Seq;
    EXPECT_LE(double(Ours), 1.10 * C.TorchPeak) << C.Model << " " << C.Seq;
  }
}

// The issue-14 bar: within -2% / +5% of PyTorch (never more than 2% low),
// the parameters PyTorch trains, and no warning (the eval-export warning
// must not fire on Llama's RMSNorm/SwiGLU or the GroupNorm UNet).
TEST(TrainingModels, ArchitecturesWithinBarOfPyTorch) {
  for (const Case &C : ZooCases) {
    Result R = planCase(C);
    uint64_t Ours = R.P.totalBytes();
    std::printf("%-18s ours=%llu torch=%llu ratio=%.4f plan=%.2fs\n", C.Model,
                (unsigned long long)Ours, (unsigned long long)C.TorchPeak,
                double(Ours) / double(C.TorchPeak), R.Seconds);
    EXPECT_EQ(R.Sum.TrainableParams, C.Params) << C.Model;
    EXPECT_GE(double(Ours), 0.98 * C.TorchPeak) << C.Model;
    EXPECT_LE(double(Ours), 1.05 * C.TorchPeak) << C.Model;
  }
}
