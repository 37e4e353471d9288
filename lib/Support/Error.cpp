//===- Error.cpp - typed llvm::Error values -------------------------------===//
//
// Class ids for the error categories, and the helpers that read a category
// without consuming the error or re-wrap an error with more context while
// keeping its category.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

using namespace oomplan;

char OomplanError::ID = 0;
char InputError::ID = 0;
char UnsupportedError::ID = 0;
char OverflowError::ID = 0;
char InternalError::ID = 0;
char IOError::ID = 0;

void OomplanError::log(llvm::raw_ostream &OS) const { OS << Msg; }

std::error_code OomplanError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

llvm::StringRef oomplan::errorCategoryName(ErrorCategory C) {
  switch (C) {
  case ErrorCategory::Input:
    return "input";
  case ErrorCategory::Unsupported:
    return "unsupported";
  case ErrorCategory::Overflow:
    return "overflow";
  case ErrorCategory::Internal:
    return "internal";
  case ErrorCategory::IO:
    return "io";
  }
  return "internal";
}

llvm::Error oomplan::makeTypedError(ErrorCategory C, const llvm::Twine &Msg) {
  switch (C) {
  case ErrorCategory::Input:
    return makeInputError(Msg);
  case ErrorCategory::Unsupported:
    return makeUnsupportedError(Msg);
  case ErrorCategory::Overflow:
    return makeOverflowError(Msg);
  case ErrorCategory::IO:
    return makeIOError(Msg);
  case ErrorCategory::Internal:
    break;
  }
  return makeInternalError(Msg);
}

ErrorCategory oomplan::errorCategory(const llvm::Error &E) {
  // Error::isA reads the payload's class id without marking E checked.
  if (E.isA<InputError>())
    return ErrorCategory::Input;
  if (E.isA<UnsupportedError>())
    return ErrorCategory::Unsupported;
  if (E.isA<OverflowError>())
    return ErrorCategory::Overflow;
  if (E.isA<IOError>())
    return ErrorCategory::IO;
  return ErrorCategory::Internal;
}

ErrorParts oomplan::takeErrorParts(llvm::Error E) {
  ErrorParts P;
  P.Category = errorCategory(E);
  P.Message = llvm::toString(std::move(E));
  return P;
}

llvm::Error oomplan::prependContext(llvm::Error E, const llvm::Twine &Prefix) {
  if (!E)
    return E;
  ErrorParts P = takeErrorParts(std::move(E));
  return makeTypedError(P.Category, Prefix + P.Message);
}
