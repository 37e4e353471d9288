//===- MiniMallocCSV.cpp - reading and writing MiniMalloc instances -------===//
//
// A line-by-line parser: blank lines are skipped, the header must name the
// columns id,lower,upper,size (and optionally offset) in that order, and
// every row must have as many numeric fields as the header.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Planner/MiniMallocCSV.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

using namespace llvm;

namespace oomplan::planner {

static Error rowError(StringRef FileName, unsigned Line, const Twine &Msg) {
  return makeError(FileName + ":" + Twine(Line) + ": " + Msg);
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
  std::vector<BufferRequest> Requests;
  DenseSet<uint64_t> Ids;
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
    if (!Ids.insert(R->Id).second)
      return rowError(FileName, LineNo, "duplicate id " + Twine(R->Id));
    Requests.push_back(*R);
  }
  if (NumColumns == 0)
    return makeError(FileName + ": empty file, expected header "
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
