//===- Module.cpp - the _oomplan extension module (pybind11) --------------===//
//
// The native half of the Python package `oomplan` (lib/Python/oomplan):
// run(args), that parses a command line with the library's parser (no
// llvm::cl globals) and plans it with the GIL released, so that Python
// threads plan in parallel, and execute(args, inputs), oomplan-run's
// api::execute likewise. It returns a plain object with the result's
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

/// The fields of api::ExecuteResult that Python reads. Tensors are
/// (name, type, dims, bytes); regions (name, planned bytes, high-water,
/// high-water rounded up to the alignment).
struct PyExecution {
  int ExitCode = 1;
  bool Ran = false;
  std::string Report;
  std::vector<py::tuple> Outputs, Regions;
  uint64_t PlanTotalBytes = 0;
  std::optional<uint64_t> BudgetBytes;
  bool Fits = true, Fitted = false;
  unsigned Passes = 1;
  double PlanSeconds = 0, LoadSeconds = 0, RunSeconds = 0;
  std::vector<std::pair<std::string, std::string>> Diagnostics;
  std::optional<std::string> Category;
  std::string ErrorMessage;
};

// Parses oomplan-run's options and runs them with the GIL released. Inputs:
// (name, type, dims, bytes) tuples, copied before the GIL is let go.
PyExecution execute(const std::vector<std::string> &Args,
                    const std::vector<py::tuple> &Inputs, bool DefaultJSON) {
  std::vector<api::Tensor> Given;
  for (const py::tuple &T : Inputs) {
    if (T.size() != 4)
      throw py::value_error("an input is (name, type, dims, bytes)");
    api::Tensor &In = Given.emplace_back();
    In.Name = T[0].cast<std::string>();
    In.Type = T[1].cast<std::string>();
    In.Dims = T[2].cast<std::vector<int64_t>>();
    In.Data = T[3].cast<py::bytes>();
  }
  api::Arguments A;
  A.Run.JSON = DefaultJSON;
  api::ExecuteResult R;
  std::string Report;
  {
    py::gil_scoped_release Release;
    std::string Error =
        api::parseArguments(Args, A, api::ArgumentsFor::OomplanRun);
    if (Error.empty() && (A.Help || A.Version || A.Run.ListKernels ||
                          !A.Run.CommandsPath.empty()))
      Error = "--help, --version, --list-kernels and --commands are "
              "oomplan-run's own, not execute()'s";
    if (Error.empty()) {
      R = api::execute(A.Req, A.Run, Given);
      Report = api::formatRunReport(R, A.Run.JSON);
    } else {
      R.Category = api::ErrorCategory::BadInput;
      R.ErrorMessage = std::move(Error);
    }
  }
  PyExecution P;
  P.ExitCode = R.ExitCode;
  P.Ran = R.Ran;
  P.Report = std::move(Report);
  for (const api::Tensor &T : R.Outputs)
    P.Outputs.push_back(
        py::make_tuple(T.Name, T.Type, T.Dims, py::bytes(T.Data)));
  for (const api::RegionBytes &U : R.Regions)
    P.Regions.push_back(py::make_tuple(
        U.Region, U.PlannedBytes, U.HighWaterBytes, U.HighWaterAlignedBytes));
  P.PlanTotalBytes = R.PlanTotalBytes;
  P.BudgetBytes = R.BudgetBytes;
  P.Fits = R.Fits;
  P.Fitted = R.Fitted;
  P.Passes = R.Passes;
  P.PlanSeconds = R.PlanSeconds;
  P.LoadSeconds = R.LoadSeconds;
  P.RunSeconds = R.RunSeconds;
  for (api::Diagnostic &D : R.Diagnostics)
    P.Diagnostics.emplace_back(D.Level == api::Severity::Warning ? "warning"
                                                                 : "note",
                               std::move(D.Message));
  if (R.Category)
    P.Category = categoryKey(*R.Category);
  P.ErrorMessage = std::move(R.ErrorMessage);
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
  py::class_<PyExecution>(M, "Execution")
      .def_readonly("exit_code", &PyExecution::ExitCode)
      .def_readonly("ran", &PyExecution::Ran)
      .def_readonly("report", &PyExecution::Report)
      .def_readonly("outputs", &PyExecution::Outputs)
      .def_readonly("regions", &PyExecution::Regions)
      .def_readonly("plan_total_bytes", &PyExecution::PlanTotalBytes)
      .def_readonly("budget_bytes", &PyExecution::BudgetBytes)
      .def_readonly("fits", &PyExecution::Fits)
      .def_readonly("fitted", &PyExecution::Fitted)
      .def_readonly("passes", &PyExecution::Passes)
      .def_readonly("plan_seconds", &PyExecution::PlanSeconds)
      .def_readonly("load_seconds", &PyExecution::LoadSeconds)
      .def_readonly("run_seconds", &PyExecution::RunSeconds)
      .def_readonly("diagnostics", &PyExecution::Diagnostics)
      .def_readonly("category", &PyExecution::Category)
      .def_readonly("error_message", &PyExecution::ErrorMessage);
  M.def("execute", &execute, py::arg("args"), py::arg("inputs"),
        py::arg("default_json") = true,
        "Plans and runs a command line (the model path and oomplan-run's "
        "options) on (name, type, dims, bytes) inputs.");
  M.def("option_names", &api::argumentNames,
        "Every option the command line accepts, without dashes.");
  M.def("version", &api::version);
}
