//===- CAPI.cpp - include/oomplan-c/oomplan.h over the C++ driver API -----===//
//
// Each C call parses its arguments with the library's own parser (no
// llvm::cl globals), runs the request through api::run (oomplan_execute:
// api::execute), and wraps the result in an opaque handle. No C++ exception
// crosses the C boundary: running out of memory is an error without a result,
// anything else an internal error.
//
//===----------------------------------------------------------------------===//
#include "oomplan-c/oomplan.h"
#include "oomplan/CAPI/Arguments.h"

#include <cstdlib>
#include <cstring>
#include <new>

using namespace oomplan;

struct oomplan_result {
  api::Result Res;
  bool HasJSON = false;
};

static char *copyString(const std::string &S) {
  char *Out = static_cast<char *>(std::malloc(S.size() + 1));
  if (Out)
    std::memcpy(Out, S.c_str(), S.size() + 1);
  return Out;
}

static oomplan_error_category toC(api::ErrorCategory C) {
  switch (C) {
  case api::ErrorCategory::BadInput:
    return OOMPLAN_ERROR_BAD_INPUT;
  case api::ErrorCategory::Unsupported:
    return OOMPLAN_ERROR_UNSUPPORTED;
  case api::ErrorCategory::Overflow:
    return OOMPLAN_ERROR_OVERFLOW;
  case api::ErrorCategory::Internal:
    return OOMPLAN_ERROR_INTERNAL;
  case api::ErrorCategory::IO:
    return OOMPLAN_ERROR_IO;
  }
  return OOMPLAN_ERROR_INTERNAL;
}

static api::Result failure(std::string Message) {
  api::Result R;
  R.ExitCode = 1;
  R.Fits = false;
  R.Category = api::ErrorCategory::BadInput;
  R.ErrorMessage = std::move(Message);
  return R;
}

// The request and the run; any error is in the result.
static oomplan_result *planArguments(const char *ModelPath,
                                     const std::string *Bytes,
                                     const char *const *Argv, int Argc) {
  auto *Out = new oomplan_result();
  if (Argc < 0 || (Argc > 0 && !Argv)) {
    Out->Res = failure("argv is NULL or argc is negative");
    return Out;
  }
  std::vector<std::string> Args;
  for (int I = 0; I < Argc; ++I) {
    if (!Argv[I]) {
      Out->Res = failure("argv[" + std::to_string(I) + "] is NULL");
      return Out;
    }
    Args.emplace_back(Argv[I]);
  }
  api::Arguments A;
  // A program wants the JSON document unless it asks otherwise.
  A.Req.Emit = api::EmitKind::JSON;
  if (ModelPath)
    A.Req.ModelPath = ModelPath;
  if (Bytes)
    A.Req.ModelBytes = *Bytes;
  std::string Error = api::parseArguments(Args, A);
  if (!Error.empty()) {
    Out->Res = failure(std::move(Error));
    return Out;
  }
  Out->Res = api::runArguments(A);
  Out->HasJSON = Out->Res.ok() && A.Req.Emit == api::EmitKind::JSON &&
                 !A.Help && !A.Version && !A.ListAlgorithms;
  return Out;
}

static int finish(oomplan_result *R, oomplan_result **Out, char **Error) {
  int Status = R->Res.ExitCode;
  if (Error)
    *Error = Status == 1 ? copyString(R->Res.ErrorMessage) : nullptr;
  if (Out)
    *Out = R;
  else
    delete R;
  return Status;
}

static int outOfMemory(oomplan_result **Out, char **Error) {
  if (Out)
    *Out = nullptr;
  if (Error)
    *Error = copyString("out of memory");
  return OOMPLAN_ERROR;
}

// Any other exception (the driver throws none; a container might) is an
// internal error, never a C++ exception unwinding through C frames.
static int unexpected(oomplan_result **Out, char **Error) {
  try {
    auto *R = new oomplan_result();
    R->Res = failure("internal error: unexpected C++ exception");
    R->Res.Category = api::ErrorCategory::Internal;
    return finish(R, Out, Error);
  } catch (...) {
    return outOfMemory(Out, Error);
  }
}

int oomplan_plan(const char *model_path, const char *const *argv, int argc,
                 oomplan_result **out, char **error) {
  try {
    return finish(planArguments(model_path, nullptr, argv, argc), out, error);
  } catch (const std::bad_alloc &) {
    return outOfMemory(out, error);
  } catch (...) {
    return unexpected(out, error);
  }
}

int oomplan_plan_buffer(const char *model_name, const void *data, size_t size,
                        const char *const *argv, int argc, oomplan_result **out,
                        char **error) {
  try {
    if (!data && size) {
      oomplan_result *R = new oomplan_result();
      R->Res = failure("data is NULL but size is not 0");
      return finish(R, out, error);
    }
    std::string Bytes(static_cast<const char *>(data), size);
    return finish(planArguments(model_name ? model_name : "model.onnx", &Bytes,
                                argv, argc),
                  out, error);
  } catch (const std::bad_alloc &) {
    return outOfMemory(out, error);
  } catch (...) {
    return unexpected(out, error);
  }
}

int oomplan_result_status(const oomplan_result *r) {
  return r ? r->Res.ExitCode : OOMPLAN_ERROR;
}

int oomplan_result_fits(const oomplan_result *r) {
  return r && r->Res.ExitCode == 0 ? 1 : 0;
}

unsigned long long oomplan_result_total_bytes(const oomplan_result *r) {
  return r && r->Res.ok() ? r->Res.TotalBytes : 0;
}

int oomplan_result_budget_bytes(const oomplan_result *r,
                                unsigned long long *bytes) {
  if (!r || !r->Res.BudgetBytes)
    return 0;
  if (bytes)
    *bytes = *r->Res.BudgetBytes;
  return 1;
}

unsigned long long oomplan_result_overhead_bytes(const oomplan_result *r) {
  return r ? r->Res.OverheadBytes : 0;
}

const char *oomplan_result_json(const oomplan_result *r) {
  return r && r->HasJSON ? r->Res.Output.c_str() : nullptr;
}

const char *oomplan_result_output(const oomplan_result *r) {
  return r ? r->Res.Output.c_str() : "";
}

oomplan_error_category oomplan_result_error_category(const oomplan_result *r) {
  if (!r || !r->Res.Category)
    return r ? OOMPLAN_ERROR_NONE : OOMPLAN_ERROR_BAD_INPUT;
  return toC(*r->Res.Category);
}

const char *oomplan_result_error_message(const oomplan_result *r) {
  return r ? r->Res.ErrorMessage.c_str() : "result is NULL";
}

const char *oomplan_error_category_name(oomplan_error_category c) {
  switch (c) {
  case OOMPLAN_ERROR_NONE:
    return "";
  case OOMPLAN_ERROR_BAD_INPUT:
    return api::errorCategoryName(api::ErrorCategory::BadInput);
  case OOMPLAN_ERROR_UNSUPPORTED:
    return api::errorCategoryName(api::ErrorCategory::Unsupported);
  case OOMPLAN_ERROR_OVERFLOW:
    return api::errorCategoryName(api::ErrorCategory::Overflow);
  case OOMPLAN_ERROR_INTERNAL:
    return api::errorCategoryName(api::ErrorCategory::Internal);
  case OOMPLAN_ERROR_IO:
    return api::errorCategoryName(api::ErrorCategory::IO);
  }
  return "";
}

int oomplan_result_diagnostic_count(const oomplan_result *r) {
  return r ? static_cast<int>(r->Res.Diagnostics.size()) : 0;
}

const char *oomplan_result_diagnostic(const oomplan_result *r, int i,
                                      int *is_warning) {
  if (!r || i < 0 || size_t(i) >= r->Res.Diagnostics.size())
    return nullptr;
  const api::Diagnostic &D = r->Res.Diagnostics[i];
  if (is_warning)
    *is_warning = D.Level == api::Severity::Warning;
  return D.Message.c_str();
}

int oomplan_result_capacity(const oomplan_result *r, oomplan_capacity_kind kind,
                            long long *max, int *at_least,
                            unsigned long long *bytes_at_max) {
  if (!r)
    return 0;
  const std::optional<api::CapacityAnswer> &C =
      kind == OOMPLAN_CAPACITY_SEQ ? r->Res.MaxSeq : r->Res.MaxBatch;
  if (!C || (kind != OOMPLAN_CAPACITY_SEQ && kind != OOMPLAN_CAPACITY_BATCH))
    return 0;
  if (max)
    *max = C->Max.value_or(0);
  if (at_least)
    *at_least = C->AtLeast;
  if (bytes_at_max)
    *bytes_at_max = C->BytesAtMax;
  return 1;
}

long long oomplan_result_max_batch(const oomplan_result *r) {
  long long Max = -1;
  oomplan_result_capacity(r, OOMPLAN_CAPACITY_BATCH, &Max, nullptr, nullptr);
  return Max;
}

long long oomplan_result_max_seq(const oomplan_result *r) {
  long long Max = -1;
  oomplan_result_capacity(r, OOMPLAN_CAPACITY_SEQ, &Max, nullptr, nullptr);
  return Max;
}

const char *oomplan_result_fit_strategy(const oomplan_result *r,
                                        double *percent) {
  if (!r || !r->Res.FitStrategy)
    return nullptr;
  if (percent)
    *percent = r->Res.FitOverheadPercent.value_or(0.0);
  return r->Res.FitStrategy->c_str();
}

struct oomplan_execution {
  api::ExecuteResult Res;
  std::string Report;
  std::vector<std::vector<long long>> Dims; ///< Per output, as C reads it.
};

static oomplan_execution *executionFailure(std::string Message) {
  auto *E = new oomplan_execution();
  E->Res.Category = api::ErrorCategory::BadInput;
  E->Res.ErrorMessage = std::move(Message);
  return E;
}

// The options (oomplan-run's), the inputs in memory, and the run; any error
// is in the execution.
static oomplan_execution *executeArguments(const char *ModelPath,
                                           const char *const *Argv, int Argc,
                                           const oomplan_tensor *Inputs,
                                           int NumInputs) {
  if (Argc < 0 || (Argc > 0 && !Argv))
    return executionFailure("argv is NULL or argc is negative");
  if (NumInputs < 0 || (NumInputs > 0 && !Inputs))
    return executionFailure("inputs is NULL or num_inputs is negative");
  std::vector<std::string> Args;
  for (int I = 0; I < Argc; ++I) {
    if (!Argv[I])
      return executionFailure("argv[" + std::to_string(I) + "] is NULL");
    Args.emplace_back(Argv[I]);
  }
  std::vector<api::Tensor> Given;
  for (int I = 0; I < NumInputs; ++I) {
    const oomplan_tensor &T = Inputs[I];
    std::string Which = "inputs[" + std::to_string(I) + "]";
    if (!T.name || !T.type || T.rank < 0 || (T.rank > 0 && !T.dims) ||
        (T.size > 0 && !T.data))
      return executionFailure(Which + " has a NULL name, type, dims or data, "
                                      "or a negative rank");
    api::Tensor &Out = Given.emplace_back();
    Out.Name = T.name;
    Out.Type = T.type;
    Out.Dims.assign(T.dims, T.dims + T.rank);
    Out.Data.assign(static_cast<const char *>(T.data), T.size);
  }
  api::Arguments A;
  // A program wants the JSON report unless it asks otherwise.
  A.Run.JSON = true;
  if (ModelPath)
    A.Req.ModelPath = ModelPath;
  std::string Error =
      api::parseArguments(Args, A, api::ArgumentsFor::OomplanRun);
  if (!Error.empty())
    return executionFailure(std::move(Error));
  if (A.Help || A.Version || A.Run.ListKernels || !A.Run.CommandsPath.empty())
    return executionFailure("--help, --version, --list-kernels and --commands "
                            "are oomplan-run's own, not oomplan_execute's");
  if (A.Req.ModelPath.empty())
    return executionFailure("no model given (a .onnx or .onnxtxt path)");
  auto *E = new oomplan_execution();
  E->Res = api::execute(A.Req, A.Run, Given);
  E->Report = api::formatRunReport(E->Res, A.Run.JSON);
  for (const api::Tensor &T : E->Res.Outputs)
    E->Dims.emplace_back(T.Dims.begin(), T.Dims.end());
  return E;
}

int oomplan_execute(const char *model_path, const char *const *argv, int argc,
                    const oomplan_tensor *inputs, int num_inputs,
                    oomplan_execution **out, char **error) {
  oomplan_execution *E = nullptr;
  try {
    E = executeArguments(model_path, argv, argc, inputs, num_inputs);
  } catch (const std::bad_alloc &) {
  } catch (...) {
    try {
      E = executionFailure("internal error: unexpected C++ exception");
      E->Res.Category = api::ErrorCategory::Internal;
    } catch (...) {
    }
  }
  if (!E) {
    if (out)
      *out = nullptr;
    if (error)
      *error = copyString("out of memory");
    return OOMPLAN_ERROR;
  }
  int Status = E->Res.ExitCode;
  if (error)
    *error = E->Res.Category ? copyString(E->Res.ErrorMessage) : nullptr;
  if (out)
    *out = E;
  else
    delete E;
  return Status;
}

int oomplan_execution_status(const oomplan_execution *e) {
  return e ? e->Res.ExitCode : OOMPLAN_ERROR;
}

const char *oomplan_execution_report(const oomplan_execution *e) {
  return e ? e->Report.c_str() : "";
}

int oomplan_execution_output_count(const oomplan_execution *e) {
  return e ? static_cast<int>(e->Res.Outputs.size()) : 0;
}

const char *oomplan_execution_output(const oomplan_execution *e, int i,
                                     const char **type, const long long **dims,
                                     int *rank, const void **data,
                                     size_t *size) {
  if (!e || i < 0 || size_t(i) >= e->Res.Outputs.size())
    return nullptr;
  const api::Tensor &T = e->Res.Outputs[i];
  if (type)
    *type = T.Type.c_str();
  if (dims)
    *dims = e->Dims[i].data();
  if (rank)
    *rank = static_cast<int>(T.Dims.size());
  if (data)
    *data = T.Data.data();
  if (size)
    *size = T.Data.size();
  return T.Name.c_str();
}

int oomplan_execution_region_count(const oomplan_execution *e) {
  return e ? static_cast<int>(e->Res.Regions.size()) : 0;
}

const char *oomplan_execution_region(const oomplan_execution *e, int i,
                                     unsigned long long *planned_bytes,
                                     unsigned long long *high_water_bytes) {
  if (!e || i < 0 || size_t(i) >= e->Res.Regions.size())
    return nullptr;
  const api::RegionBytes &R = e->Res.Regions[i];
  if (planned_bytes)
    *planned_bytes = R.PlannedBytes;
  if (high_water_bytes)
    *high_water_bytes = R.HighWaterAlignedBytes;
  return R.Region.c_str();
}

unsigned long long oomplan_execution_plan_bytes(const oomplan_execution *e) {
  return e && !e->Res.Category ? e->Res.PlanTotalBytes : 0;
}

oomplan_error_category
oomplan_execution_error_category(const oomplan_execution *e) {
  if (!e || !e->Res.Category)
    return e ? OOMPLAN_ERROR_NONE : OOMPLAN_ERROR_BAD_INPUT;
  return toC(*e->Res.Category);
}

const char *oomplan_execution_error_message(const oomplan_execution *e) {
  return e ? e->Res.ErrorMessage.c_str() : "execution is NULL";
}

int oomplan_execution_diagnostic_count(const oomplan_execution *e) {
  return e ? static_cast<int>(e->Res.Diagnostics.size()) : 0;
}

const char *oomplan_execution_diagnostic(const oomplan_execution *e, int i,
                                         int *is_warning) {
  if (!e || i < 0 || size_t(i) >= e->Res.Diagnostics.size())
    return nullptr;
  const api::Diagnostic &D = e->Res.Diagnostics[i];
  if (is_warning)
    *is_warning = D.Level == api::Severity::Warning;
  return D.Message.c_str();
}

void oomplan_execution_free(oomplan_execution *e) { delete e; }

void oomplan_result_free(oomplan_result *r) { delete r; }

void oomplan_free_string(char *s) { std::free(s); }

const char *oomplan_version(void) { return api::version(); }
