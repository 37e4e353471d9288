//===- ByteSize.cpp - parsing and printing byte sizes ---------------------===//
#include "oomplan/Support/ByteSize.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>

using namespace oomplan;

llvm::Expected<uint64_t> oomplan::parseByteSize(llvm::StringRef Text) {
  llvm::StringRef S = Text.trim();
  size_t NumEnd = 0;
  while (NumEnd < S.size() && (llvm::isDigit(S[NumEnd]) || S[NumEnd] == '.'))
    ++NumEnd;
  llvm::StringRef Num = S.substr(0, NumEnd), Unit = S.substr(NumEnd).trim();
  auto Bad = [&](const char *Why) {
    return makeInputError("invalid size '" + Text + "': " + Why +
                          " (examples: 24G, 24GiB, 1.5T, 512M, 300MB, 4096)");
  };
  if (Num.empty() || Num.count('.') > 1 || Num == ".")
    return Bad("expected a non-negative number followed by an optional unit");
  double Mult = llvm::StringSwitch<double>(Unit.lower())
                    .Cases("", "b", 1.0)
                    .Cases("k", "ki", "kib", 1024.0)
                    .Cases("m", "mi", "mib", 1048576.0)
                    .Cases("g", "gi", "gib", 1073741824.0)
                    .Cases("t", "ti", "tib", 1099511627776.0)
                    .Case("kb", 1e3)
                    .Case("mb", 1e6)
                    .Case("gb", 1e9)
                    .Case("tb", 1e12)
                    .Default(-1.0);
  if (Mult < 0)
    return Bad("unknown unit");
  if (!Num.contains('.')) {
    // Exact integer path: no floating-point rounding for plain byte counts.
    uint64_t N;
    if (Num.getAsInteger(10, N))
      return Bad("number too large");
    uint64_t M = static_cast<uint64_t>(Mult), Out;
    if (__builtin_mul_overflow(N, M, &Out))
      return Bad("too large for 64 bits");
    return Out;
  }
  // Round half up in double; 2^64 itself does not fit, and llround would
  // overflow above 2^63, so convert as unsigned after the range check.
  double V = std::floor(std::strtod(Num.str().c_str(), nullptr) * Mult + 0.5);
  if (!(V < 18446744073709551616.0))
    return Bad("too large for 64 bits");
  return static_cast<uint64_t>(V);
}

std::string oomplan::formatBytes(uint64_t Bytes) {
  static const char *Units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  if (Bytes < 1000) {
    OS << Bytes << " B";
    return OS.str();
  }
  // Three significant digits in every unit: a value that would print as 1000
  // or more moves to the next unit, so 1008 MiB reads "0.98 GiB" beside the
  // other GiB figures, never "1000 MiB" or "1008 MiB". The precision is
  // chosen on the rounded value: 9.998 GiB is "10.0 GiB", not "10.00 GiB".
  double V = static_cast<double>(Bytes);
  unsigned U = 0;
  while (V >= 999.5 && U < 6) {
    V /= 1024.0;
    ++U;
  }
  OS << llvm::format(V >= 99.95   ? "%.0f"
                     : V >= 9.995 ? "%.1f"
                                  : "%.2f",
                     V)
     << ' ' << Units[U];
  return OS.str();
}
