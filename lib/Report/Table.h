//===- Table.h - aligned text columns (private to lib/Report) ----*- C++
//-*-===//
//
// The report's tables: rows of cells, each column as wide as its widest cell,
// numbers right-aligned, text left-aligned, two spaces between columns.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_REPORT_TABLE_H
#define OOMPLAN_LIB_REPORT_TABLE_H

#include "llvm/Support/raw_ostream.h"
#include <string>
#include <vector>

namespace oomplan {
namespace report {

class Table {
public:
  /// Right[I]: column I is right-aligned.
  explicit Table(std::vector<bool> Right) : Right(std::move(Right)) {}
  void row(std::vector<std::string> Cells) { Rows.push_back(std::move(Cells)); }
  /// Prints every row after Indent spaces; the last column is not padded.
  void print(llvm::raw_ostream &OS, unsigned Indent = 2) const {
    std::vector<size_t> W(Right.size(), 0);
    for (const auto &R : Rows)
      for (size_t I = 0; I < R.size() && I < W.size(); ++I)
        W[I] = std::max(W[I], R[I].size());
    for (const auto &R : Rows) {
      std::string Line(Indent, ' ');
      for (size_t I = 0; I < R.size(); ++I) {
        bool Last = I + 1 == R.size();
        size_t Pad =
            I < W.size() && W[I] > R[I].size() ? W[I] - R[I].size() : 0;
        if (I < Right.size() && Right[I])
          Line += std::string(Pad, ' ') + R[I];
        else
          Line += R[I] + (Last ? "" : std::string(Pad, ' '));
        if (!Last)
          Line += "  ";
      }
      while (!Line.empty() && Line.back() == ' ')
        Line.pop_back();
      OS << Line << '\n';
    }
  }

private:
  std::vector<bool> Right;
  std::vector<std::vector<std::string>> Rows;
};

} // namespace report
} // namespace oomplan

#endif
