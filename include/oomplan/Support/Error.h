//===- Error.h - making llvm::Error values ----------------------*- C++ -*-===//
//
// The library reports every failure as an llvm::Error carrying one line of
// text; only tools print and exit. These helpers keep call sites short.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_SUPPORT_ERROR_H
#define OOMPLAN_SUPPORT_ERROR_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace oomplan {

/// An llvm::Error with the message Msg (one line, no trailing period).
inline llvm::Error makeError(const llvm::Twine &Msg) {
  return llvm::make_error<llvm::StringError>(Msg,
                                             llvm::inconvertibleErrorCode());
}

} // namespace oomplan

#endif
