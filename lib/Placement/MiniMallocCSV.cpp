//===- MiniMallocCSV.cpp - reading and writing MiniMalloc instances -------===//
//
// A line-by-line parser: blank lines are skipped, the header must name the
// columns id,lower,upper,size (and optionally offset) in that order, and
// every row must have as many numeric fields as the header. Sizes and steps
// above 2^63 are rejected here, naming the line, so that no later sum of
// sizes (alignment rounding, offset + size, the arena) can wrap, and no
// arena can reach UINT64_MAX, which the algorithms use as "no solution".
//
//===----------------------------------------------------------------------===//
#include "oomplan/Placement/MiniMallocCSV.h"
#include "oomplan/Support/CheckedMath.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/SmallVector.h"
#include <unordered_map>

using namespace llvm;

namespace oomplan::planner {

static Error rowError(StringRef FileName, unsigned Line, const Twine &Msg,
                      ErrorCategory C = ErrorCategory::Input) {
  return makeTypedError(C, FileName + ":" + Twine(Line) + ": " + Msg);
}

static void splitFields(StringRef Line, SmallVectorImpl<StringRef> &Fields) {
  Fields.clear();
  Line.split(Fields, ',');
  for (StringRef &F : Fields)
    F = F.trim();
}

static Expected<BufferRequest> parseRow(ArrayRef<StringRef> Fields,
                                        StringRef FileName, unsigned Line,
                                        uint64_t AlignBytes) {
  static const char *const Names[] = {"id", "lower", "upper", "size"};
  uint64_t Values[4];
  for (unsigned K = 0; K < 4; ++K)
    if (Fields[K].getAsInteger(10, Values[K]))
      return rowError(FileName, Line,
                      Twine(Names[K]) + " '" + Fields[K] +
                          "' is not a non-negative integer");
  // The same limit as tensor sizes: a size past 2^63 is an error, never a
  // number that wraps later.
  constexpr uint64_t MaxValue = uint64_t(1) << 63;
  for (unsigned K = 1; K < 4; ++K)
    if (Values[K] > MaxValue)
      return rowError(FileName, Line,
                      "buffer " + Twine(Values[0]) + ": " + Names[K] + " " +
                          Twine(Values[K]) + " exceeds 2^63",
                      ErrorCategory::Overflow);
  uint64_t Footprint = 0;
  if (!checkedAlignUp(Values[3], AlignBytes, Footprint) || Footprint > MaxValue)
    return rowError(FileName, Line,
                    "buffer " + Twine(Values[0]) + ": size " +
                        Twine(Values[3]) + " rounded up to alignment " +
                        Twine(AlignBytes) + " exceeds 2^63",
                    ErrorCategory::Overflow);
  if (Values[2] <= Values[1])
    return rowError(FileName, Line,
                    "buffer " + Twine(Values[0]) + ": upper " +
                        Twine(Values[2]) + " is not above lower " +
                        Twine(Values[1]));
  BufferRequest R;
  R.Id = Values[0];
  R.StartStep = Values[1];
  R.EndStep = Values[2];
  R.SizeBytes = Values[3];
  R.AlignBytes = AlignBytes;
  return R;
}

Expected<std::vector<BufferRequest>>
parseMiniMallocCSV(StringRef Text, StringRef FileName, uint64_t AlignBytes) {
  if (AlignBytes == 0 || (AlignBytes & (AlignBytes - 1)) != 0)
    return makeInputError(FileName + ": alignment " + Twine(AlignBytes) +
                          " is not a power of two");
  std::vector<BufferRequest> Requests;
  // Id -> line of first use. Not a DenseSet: its reserved empty and
  // tombstone keys (2^64 - 1, 2^64 - 2) are valid ids.
  std::unordered_map<uint64_t, unsigned> Ids;
  SmallVector<StringRef, 8> Fields;
  size_t NumColumns = 0;
  unsigned LineNo = 0;
  while (!Text.empty()) {
    StringRef Line;
    std::tie(Line, Text) = Text.split('\n');
    ++LineNo;
    Line = Line.trim();
    if (Line.empty())
      continue;
    splitFields(Line, Fields);
    if (NumColumns == 0) {
      bool Ok = (Fields.size() == 4 || Fields.size() == 5) &&
                Fields[0] == "id" && Fields[1] == "lower" &&
                Fields[2] == "upper" && Fields[3] == "size" &&
                (Fields.size() == 4 || Fields[4] == "offset");
      if (!Ok)
        return rowError(FileName, LineNo,
                        "expected header 'id,lower,upper,size[,offset]', "
                        "got '" +
                            Line + "'");
      NumColumns = Fields.size();
      continue;
    }
    if (Fields.size() != NumColumns)
      return rowError(FileName, LineNo,
                      "expected " + Twine(NumColumns) + " fields, got " +
                          Twine(Fields.size()));
    Expected<BufferRequest> R = parseRow(Fields, FileName, LineNo, AlignBytes);
    if (!R)
      return R.takeError();
    auto [It, New] = Ids.emplace(R->Id, LineNo);
    if (!New)
      return rowError(FileName, LineNo,
                      "duplicate id " + Twine(R->Id) + " (first on line " +
                          Twine(It->second) + ")");
    Requests.push_back(*R);
  }
  if (NumColumns == 0)
    return makeInputError(FileName + ": empty file, expected header "
                                     "'id,lower,upper,size'");
  return Requests;
}

void writeMiniMallocCSV(raw_ostream &OS, ArrayRef<BufferRequest> Requests,
                        const Placement &Result) {
  OS << "id,lower,upper,size,offset\n";
  for (size_t I = 0; I < Requests.size(); ++I) {
    const BufferRequest &R = Requests[I];
    OS << R.Id << ',' << R.StartStep << ',' << R.EndStep << ',' << R.SizeBytes
       << ',' << Result.Offsets[I] << '\n';
  }
}

} // namespace oomplan::planner
