//===- ByteSize.h - parsing and printing byte sizes -------------*- C++ -*-===//
//
// "24G", "24GiB", "1.5T", "512M", "300MB", "4096". Memory is sold and
// reported by GPU tools in binary units, so K/M/G/T and KiB/MiB/GiB/TiB are
// powers of 1024; KB/MB/GB/TB (with the B) are powers of 1000, as SI says.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_SUPPORT_BYTESIZE_H
#define OOMPLAN_SUPPORT_BYTESIZE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <string>

namespace oomplan {

/// Parses a byte size; errors on junk, negative numbers and overflow.
llvm::Expected<uint64_t> parseByteSize(llvm::StringRef Text);

/// "1.50 GiB" style: three significant digits, binary units; a value that
/// would read 1000 or more goes to the next unit ("0.98 GiB").
std::string formatBytes(uint64_t Bytes);

} // namespace oomplan

#endif
