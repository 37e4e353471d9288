//===- Module.cpp - the _oomplan extension module (pybind11) --------------===//
//
// The native half of the Python package `oomplan` (lib/Python/oomplan): one
// function, run(args), that parses a command line with the library's parser
// (no llvm::cl globals) and plans it with the GIL released, so that Python
// threads plan in parallel. It returns a plain object with the result's
// fields; the package turns errors into exceptions and the JSON into dicts.
//
//===----------------------------------------------------------------------===//
#include "oomplan/CAPI/Arguments.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using namespace oomplan;

namespace {

/// The fields of api::Result that Python reads.
struct PyResult {
  int ExitCode = 1;
  bool Fits = false;
  bool IsJSON = false;
  std::optional<uint64_t> BudgetBytes;
  uint64_t OverheadBytes = 0;
  uint64_t TotalBytes = 0;
  std::string Output;
  std::vector<std::pair<std::string, std::string>> Diagnostics;
  std::optional<std::string> Category;
  std::string ErrorMessage;
  std::optional<py::tuple> MaxBatch, MaxSeq;
  std::optional<std::string> FitStrategy;
  std::optional<double> FitOverheadPercent;
};

const char *categoryKey(api::ErrorCategory C) {
  switch (C) {
  case api::ErrorCategory::BadInput:
    return "input";
  case api::ErrorCategory::Unsupported:
    return "unsupported";
  case api::ErrorCategory::Overflow:
    return "overflow";
  case api::ErrorCategory::Internal:
    return "internal";
  case api::ErrorCategory::IO:
    return "io";
  }
  return "internal";
}

// (max, at_least, bytes_at_max); max is 0 when not even 1 fits.
std::optional<py::tuple> capacity(const std::optional<api::CapacityAnswer> &C) {
  if (!C)
    return std::nullopt;
  return py::make_tuple(C->Max.value_or(0), C->AtLeast, C->BytesAtMax);
}

// Parses and plans with the GIL released; the Python objects are built
// after it is taken back.
PyResult run(const std::vector<std::string> &Args, bool DefaultJSON) {
  api::Arguments A;
  if (DefaultJSON)
    A.Req.Emit = api::EmitKind::JSON;
  api::Result R;
  {
    py::gil_scoped_release Release;
    std::string Error = api::parseArguments(Args, A);
    if (Error.empty()) {
      R = api::runArguments(A);
    } else {
      R.ExitCode = 1;
      R.Category = api::ErrorCategory::BadInput;
      R.ErrorMessage = std::move(Error);
    }
  }
  PyResult P;
  P.ExitCode = R.ExitCode;
  P.Fits = R.ExitCode == 0;
  P.IsJSON = R.ok() && A.Req.Emit == api::EmitKind::JSON && !A.Help &&
             !A.Version && !A.ListAlgorithms;
  P.BudgetBytes = R.BudgetBytes;
  P.OverheadBytes = R.OverheadBytes;
  P.TotalBytes = R.TotalBytes;
  P.Output = std::move(R.Output);
  for (api::Diagnostic &D : R.Diagnostics)
    P.Diagnostics.emplace_back(D.Level == api::Severity::Warning ? "warning"
                                                                 : "note",
                               std::move(D.Message));
  if (R.Category)
    P.Category = categoryKey(*R.Category);
  P.ErrorMessage = std::move(R.ErrorMessage);
  P.MaxBatch = capacity(R.MaxBatch);
  P.MaxSeq = capacity(R.MaxSeq);
  P.FitStrategy = R.FitStrategy;
  P.FitOverheadPercent = R.FitOverheadPercent;
  return P;
}

} // namespace

PYBIND11_MODULE(_oomplan, M) {
  M.doc() = "oomplan's native module; use the `oomplan` package instead.";
  py::class_<PyResult>(M, "Result")
      .def_readonly("exit_code", &PyResult::ExitCode)
      .def_readonly("fits", &PyResult::Fits)
      .def_readonly("is_json", &PyResult::IsJSON)
      .def_readonly("budget_bytes", &PyResult::BudgetBytes)
      .def_readonly("overhead_bytes", &PyResult::OverheadBytes)
      .def_readonly("total_bytes", &PyResult::TotalBytes)
      .def_property_readonly("output",
                             [](const PyResult &R) {
                               // JSON and reports are UTF-8; never fail on
                               // a stray byte from a model's names.
                               PyObject *S = PyUnicode_DecodeUTF8(
                                   R.Output.data(), R.Output.size(), "replace");
                               if (!S)
                                 throw py::error_already_set();
                               return py::reinterpret_steal<py::str>(S);
                             })
      .def_readonly("diagnostics", &PyResult::Diagnostics)
      .def_readonly("category", &PyResult::Category)
      .def_readonly("error_message", &PyResult::ErrorMessage)
      .def_readonly("max_batch", &PyResult::MaxBatch)
      .def_readonly("max_seq", &PyResult::MaxSeq)
      .def_readonly("fit_strategy", &PyResult::FitStrategy)
      .def_readonly("fit_overhead_percent", &PyResult::FitOverheadPercent);
  M.def("run", &run, py::arg("args"), py::arg("default_json") = true,
        "Plans a command line (the model path and the oomplan CLI's "
        "options).");
  M.def("option_names", &api::argumentNames,
        "Every option the command line accepts, without dashes.");
  M.def("version", &api::version);
}
