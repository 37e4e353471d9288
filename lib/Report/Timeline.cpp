//===- Timeline.cpp - the memory timeline as SVG or HTML ------------------===//
//
// Draws bytes live per step as stacked areas, one per memory class, with the
// budget, the allocated total and the peak step marked. Areas are step
// functions with runs of equal values merged, so the file stays small even
// for training schedules of thousands of steps. No scripts, fonts or links:
// the file renders anywhere, including headless Chromium.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Report/Timeline.h"
#include "oomplan/Schedule/LiveProfile.h"
#include "oomplan/Support/ByteSize.h"
#include "llvm/Support/Format.h"
#include <cmath>

using namespace oomplan;
using namespace oomplan::report;

std::vector<ClassBytes> report::liveBytesByStep(const Plan &P,
                                                uint64_t OverheadBytes) {
  // The plan's own profile (the one behind its peak step), by tensor kind,
  // folded into the report's memory classes.
  ProfileOptions PO;
  PO.AlignBytes = P.AlignBytes;
  PO.IOInArena = P.IOInArena;
  PO.ByKind = true;
  LiveProfile Profile = computeLiveProfile(P.Life, PO);
  ClassBytes Resident{};
  Resident[unsigned(MemoryClass::Overhead)] = OverheadBytes;
  for (unsigned K = 0; K < NumTensorKinds; ++K)
    Resident[unsigned(memoryClassOf(TensorKind(K)))] +=
        Profile.ResidentByKind[K];
  uint64_t N = std::max<uint64_t>(P.Life.NumSteps, 1);
  std::vector<ClassBytes> Out(N, Resident);
  for (uint64_t S = 0; S < N && S < Profile.ArenaByKind.size(); ++S)
    for (unsigned K = 0; K < NumTensorKinds; ++K)
      Out[S][unsigned(memoryClassOf(TensorKind(K)))] +=
          Profile.ArenaByKind[S][K];
  return Out;
}

static std::string xmlEscape(llvm::StringRef S) {
  std::string Out;
  for (char Ch : S) {
    switch (Ch) {
    case '&':
      Out += "&amp;";
      break;
    case '<':
      Out += "&lt;";
      break;
    case '>':
      Out += "&gt;";
      break;
    case '"':
      Out += "&quot;";
      break;
    default:
      Out += Ch;
    }
  }
  return Out;
}

namespace {
/// Geometry of the plot area (pixels) and its scales.
struct Frame {
  double X0 = 90, X1 = 960, Y0 = 70, Y1 = 560;
  double Steps = 1, YMax = 1;
  double x(double Step) const { return X0 + (X1 - X0) * Step / Steps; }
  double y(double Bytes) const { return Y1 - (Y1 - Y0) * Bytes / YMax; }
};
} // namespace

// Bottom to top of the stack.
static const MemoryClass StackOrder[] = {
    MemoryClass::Overhead,         MemoryClass::Weights,
    MemoryClass::InputsOutputs,    MemoryClass::OptimizerState,
    MemoryClass::OptimizerScratch, MemoryClass::Gradients,
    MemoryClass::Activations};
static const char *ColorOf(MemoryClass K) {
  static const char *Colors[] = {"#4e79a7", "#e15759", "#f28e2b", "#b07aa1",
                                 "#edc948", "#59a14f", "#9e9e9e"};
  return Colors[unsigned(K)];
}

// A stacked step-function area between cumulative Lower and Upper.
static void writeArea(llvm::raw_ostream &OS, const Frame &F,
                      llvm::ArrayRef<uint64_t> Lower,
                      llvm::ArrayRef<uint64_t> Upper, MemoryClass K) {
  OS << "<polygon fill=\"" << ColorOf(K)
     << "\" fill-opacity=\"0.85\" points=\"";
  auto Run = [&](llvm::ArrayRef<uint64_t> V, bool Forward) {
    size_t N = V.size();
    for (size_t I = 0; I < N;) {
      size_t Idx = Forward ? I : N - 1 - I, J = I;
      while (J < N && V[Forward ? J : N - 1 - J] == V[Idx])
        ++J;
      double A = Forward ? I : N - I, B = Forward ? J : N - J;
      OS << llvm::format("%.1f,%.1f %.1f,%.1f ", F.x(A), F.y(V[Idx]), F.x(B),
                         F.y(V[Idx]));
      I = J;
    }
  };
  Run(Upper, true);
  Run(Lower, false);
  OS << "\"/>\n";
}

// A "nice" step (1, 2 or 5 times a power of ten) near Range / 5.
static double niceStep(double Range) {
  double Raw = Range / 5, Pow = std::pow(10.0, std::floor(std::log10(Raw)));
  double M = Raw / Pow;
  return (M < 1.5 ? 1 : M < 3.5 ? 2 : M < 7.5 ? 5 : 10) * Pow;
}

static void writeAxes(llvm::raw_ostream &OS, const Frame &F) {
  OS << "<g font-family=\"sans-serif\" font-size=\"12\" fill=\"#333\">\n";
  double Unit = 1;
  while (F.YMax / Unit >= 1024)
    Unit *= 1024;
  double YStep = niceStep(F.YMax / Unit) * Unit;
  for (double V = 0; V <= F.YMax; V += YStep) {
    OS << llvm::format("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                       "stroke=\"#ddd\"/>\n",
                       F.X0, F.X1, F.y(V), F.y(V));
    OS << llvm::format("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
                       F.X0 - 6, F.y(V) + 4)
       << xmlEscape(formatBytes(uint64_t(V))) << "</text>\n";
  }
  double XStep = std::max(1.0, std::round(niceStep(F.Steps)));
  for (double S = 0; S <= F.Steps; S += XStep)
    OS << llvm::format("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
                       "%.0f</text>\n",
                       F.x(S), F.Y1 + 18, S);
  OS << llvm::format("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
                     "schedule step</text>\n",
                     (F.X0 + F.X1) / 2, F.Y1 + 40);
  OS << llvm::format("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                     "height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n</g>\n",
                     F.X0, F.Y0, F.X1 - F.X0, F.Y1 - F.Y0);
}

static void hline(llvm::raw_ostream &OS, const Frame &F, double Bytes,
                  llvm::StringRef Color, llvm::StringRef Label) {
  OS << llvm::format("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                     "stroke=\"",
                     F.X0, F.X1, F.y(Bytes), F.y(Bytes))
     << Color << "\" stroke-width=\"2\" stroke-dasharray=\"8,4\"/>\n"
     << llvm::format("<text x=\"%.1f\" y=\"%.1f\" font-family=\"sans-serif\" "
                     "font-size=\"12\" fill=\"",
                     F.X1 - 4, F.y(Bytes) - 5)
     << Color << "\" text-anchor=\"end\">" << xmlEscape(Label) << "</text>\n";
}

static void writeLegend(llvm::raw_ostream &OS, const Frame &F,
                        const MemoryReport &R) {
  OS << "<g font-family=\"sans-serif\" font-size=\"13\" fill=\"#333\">\n";
  double Y = F.Y0;
  for (auto It = std::rbegin(StackOrder); It != std::rend(StackOrder); ++It) {
    OS << llvm::format("<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"14\" "
                       "fill=\"%s\"/>\n",
                       F.X1 + 20, Y, ColorOf(*It));
    OS << llvm::format("<text x=\"%.1f\" y=\"%.1f\">", F.X1 + 40, Y + 12)
       << xmlEscape(memoryClassName(*It)) << " "
       << xmlEscape(formatBytes(R.Classes.bytes(*It))) << "</text>\n";
    Y += 24;
  }
  OS << "</g>\n";
}

static void writeTitle(llvm::raw_ostream &OS, const PlanContext &C,
                       const MemoryReport &R) {
  std::string Title = "oomplan: " + C.G.SourcePath + " ";
  for (size_t I = 0; I < C.Shapes.SymbolNames.size(); ++I)
    if (I < C.Bindings.size() && C.Bindings[I])
      Title +=
          " " + C.Shapes.SymbolNames[I] + "=" + std::to_string(*C.Bindings[I]);
  std::string Sub = "needs " + describeBytes(R.DeviceBytes);
  if (R.Limit.CapacityBytes)
    Sub += R.Fits ? ": fits the budget of " : ": DOES NOT FIT the budget of ";
  if (R.Limit.CapacityBytes)
    Sub += formatBytes(*R.Limit.CapacityBytes);
  OS << "<text x=\"90\" y=\"28\" font-family=\"sans-serif\" font-size=\"18\" "
        "fill=\"#111\">"
     << xmlEscape(Title) << "</text>\n"
     << "<text x=\"90\" y=\"50\" font-family=\"sans-serif\" font-size=\"14\" "
        "fill=\""
     << (R.Fits ? "#2a7d2a" : "#c0392b") << "\">" << xmlEscape(Sub)
     << "</text>\n";
}

void report::writeTimelineSVG(llvm::raw_ostream &OS, const Plan &P,
                              const PlanContext &C, const MemoryReport &R) {
  std::vector<ClassBytes> Live = liveBytesByStep(P, R.Limit.OverheadBytes);
  Frame F;
  F.Steps = double(Live.size());
  uint64_t Max = R.DeviceBytes;
  if (R.Limit.CapacityBytes)
    Max = std::max(Max, *R.Limit.CapacityBytes);
  F.YMax = std::max(1.0, double(Max) * 1.08);
  OS << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1200\" "
        "height=\"620\" viewBox=\"0 0 1200 620\">\n"
     << "<rect width=\"1200\" height=\"620\" fill=\"#ffffff\"/>\n";
  writeTitle(OS, C, R);
  writeAxes(OS, F);
  std::vector<uint64_t> Lower(Live.size(), 0), Upper(Live.size());
  for (MemoryClass K : StackOrder) {
    bool Any = false;
    for (size_t S = 0; S < Live.size(); ++S) {
      Upper[S] = Lower[S] + Live[S][unsigned(K)];
      Any |= Live[S][unsigned(K)] != 0;
    }
    if (Any)
      writeArea(OS, F, Lower, Upper, K);
    Lower = Upper;
  }
  hline(OS, F, double(R.DeviceBytes), "#555",
        "allocated " + formatBytes(R.DeviceBytes));
  if (R.Limit.CapacityBytes)
    hline(OS, F, double(*R.Limit.CapacityBytes), "#c0392b",
          "budget " + formatBytes(*R.Limit.CapacityBytes));
  double PX = F.x(double(R.Peak.Step) + 0.5);
  OS << llvm::format("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                     "stroke=\"#111\" stroke-dasharray=\"3,3\"/>\n",
                     PX, PX, F.Y0, F.Y1)
     << llvm::format("<text x=\"%.1f\" y=\"%.1f\" font-family=\"sans-serif\" "
                     "font-size=\"12\" fill=\"#111\">",
                     PX + 4, F.Y0 + 14)
     << "peak: step " << R.Peak.Step << " " << xmlEscape(R.Peak.Op)
     << "</text>\n";
  writeLegend(OS, F, R);
  OS << "</svg>\n";
}

void report::writeTimelineHTML(llvm::raw_ostream &OS, const Plan &P,
                               const PlanContext &C, const MemoryReport &R) {
  OS << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>oomplan "
        "timeline: "
     << xmlEscape(C.G.SourcePath)
     << "</title></head>\n<body style=\"margin:0;background:#fff\">\n";
  std::string Svg;
  llvm::raw_string_ostream SOS(Svg);
  writeTimelineSVG(SOS, P, C, R);
  llvm::StringRef Body = SOS.str();
  Body = Body.drop_front(Body.find("<svg")); // no XML declaration in HTML
  OS << Body << "</body></html>\n";
}
