//===- Error.h - typed llvm::Error values -----------------------*- C++ -*-===//
//
// The library reports every failure as an llvm::Error carrying one line of
// text; only tools print and exit. Each error also has a category, so that a
// program embedding the library can tell the user's bad model (fix the input)
// from a limit of oomplan (unsupported), a size past 64 bits (overflow), a
// file that cannot be read (I/O) and a bug (internal) without reading the
// message. The category is the error's dynamic type: one ErrorInfo subclass
// per category, all derived from OomplanError.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_SUPPORT_ERROR_H
#define OOMPLAN_SUPPORT_ERROR_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include <string>

namespace oomplan {

/// What kind of failure an error reports. Switch on it; the message is for
/// people.
enum class ErrorCategory {
  Input,       ///< The model, a file or an option is malformed or invalid.
  Unsupported, ///< Valid input that oomplan cannot handle yet.
  Overflow,    ///< A size or count does not fit in 64 (or 63) bits.
  Internal,    ///< A bug in oomplan: a check of our own result failed.
  IO,          ///< A file could not be read or written.
};

/// "input", "unsupported", "overflow", "internal" or "io".
llvm::StringRef errorCategoryName(ErrorCategory C);

/// The base of every error the library creates; one line of text, no
/// trailing period.
class OomplanError : public llvm::ErrorInfo<OomplanError> {
public:
  static char ID;
  explicit OomplanError(std::string Msg) : Msg(std::move(Msg)) {}
  virtual ErrorCategory category() const = 0;
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override;

private:
  std::string Msg;
};

// One subclass per category, so that handleErrors can select on the type.
/// The model, a file's contents or an option is wrong.
class InputError : public llvm::ErrorInfo<InputError, OomplanError> {
public:
  static char ID;
  using ErrorInfo::ErrorInfo;
  ErrorCategory category() const override { return ErrorCategory::Input; }
};
/// Valid input beyond what oomplan handles.
class UnsupportedError
    : public llvm::ErrorInfo<UnsupportedError, OomplanError> {
public:
  static char ID;
  using ErrorInfo::ErrorInfo;
  ErrorCategory category() const override { return ErrorCategory::Unsupported; }
};
/// A size, count or product past what 64-bit arithmetic holds.
class OverflowError : public llvm::ErrorInfo<OverflowError, OomplanError> {
public:
  static char ID;
  using ErrorInfo::ErrorInfo;
  ErrorCategory category() const override { return ErrorCategory::Overflow; }
};
/// A failed check of oomplan's own work: a bug, never the user's fault.
class InternalError : public llvm::ErrorInfo<InternalError, OomplanError> {
public:
  static char ID;
  using ErrorInfo::ErrorInfo;
  ErrorCategory category() const override { return ErrorCategory::Internal; }
};
/// A file that cannot be opened, read or written.
class IOError : public llvm::ErrorInfo<IOError, OomplanError> {
public:
  static char ID;
  using ErrorInfo::ErrorInfo;
  ErrorCategory category() const override { return ErrorCategory::IO; }
};

/// An error of category C with the message Msg.
llvm::Error makeTypedError(ErrorCategory C, const llvm::Twine &Msg);

/// The model, a file's contents or an option is wrong.
inline llvm::Error makeInputError(const llvm::Twine &Msg) {
  return llvm::make_error<InputError>(Msg.str());
}
/// Valid input beyond what oomplan handles.
inline llvm::Error makeUnsupportedError(const llvm::Twine &Msg) {
  return llvm::make_error<UnsupportedError>(Msg.str());
}
/// A size, count or product past what 64-bit arithmetic holds.
inline llvm::Error makeOverflowError(const llvm::Twine &Msg) {
  return llvm::make_error<OverflowError>(Msg.str());
}
/// A failed check of oomplan's own work: a bug, never the user's fault.
inline llvm::Error makeInternalError(const llvm::Twine &Msg) {
  return llvm::make_error<InternalError>(Msg.str());
}
/// A file that cannot be opened, read or written.
inline llvm::Error makeIOError(const llvm::Twine &Msg) {
  return llvm::make_error<IOError>(Msg.str());
}

/// The category of E without consuming or checking it. Errors that oomplan
/// did not create (and lists of several errors) are Internal: every error
/// the library returns is typed, so anything else is a bug.
ErrorCategory errorCategory(const llvm::Error &E);

/// An error's category and message, for printing or storing.
struct ErrorParts {
  ErrorCategory Category = ErrorCategory::Internal;
  std::string Message;
};
/// Consumes E (which must be a failure) and returns its category and text.
ErrorParts takeErrorParts(llvm::Error E);

/// E with "Prefix" put in front of its message, keeping E's category; for
/// adding the file or value an error is about as it travels up.
llvm::Error prependContext(llvm::Error E, const llvm::Twine &Prefix);

} // namespace oomplan

#endif
