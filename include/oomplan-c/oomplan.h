/*===- oomplan-c/oomplan.h - the C API of liboomplan -------------*- C -*-===*\
|*                                                                            *|
|* The whole oomplan tool as one C call, for programs that embed it (a       *|
|* deployment pipeline, a training launcher, another language's bindings).   *|
|* Following libclang, oomplan_plan takes the command-line options that      *|
|* follow the model path, so every option of the oomplan CLI works here      *|
|* (docs/embedding.md). A result is an opaque handle read with accessors;    *|
|* nothing is printed. Independent calls may run on different threads at     *|
|* once; one result may be read from several threads.                        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef OOMPLAN_C_OOMPLAN_H
#define OOMPLAN_C_OOMPLAN_H

#include <stddef.h>

#if defined(__GNUC__)
#define OOMPLAN_C_EXPORT __attribute__((visibility("default")))
#else
#define OOMPLAN_C_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What oomplan_plan returns, the oomplan CLI's exit codes. */
enum {
  OOMPLAN_FITS = 0,         /* The plan fits the budget (or there is none). */
  OOMPLAN_ERROR = 1,        /* Bad input, unsupported model, ...: see below. */
  OOMPLAN_DOES_NOT_FIT = 2, /* Planned, but over the budget. */
};

/* What kind of failure an error is, for programs that switch on it. */
typedef enum oomplan_error_category {
  OOMPLAN_ERROR_NONE = 0,        /* No error. */
  OOMPLAN_ERROR_BAD_INPUT = 1,   /* The model, an option or a value is wrong. */
  OOMPLAN_ERROR_UNSUPPORTED = 2, /* Valid input oomplan cannot handle (yet). */
  OOMPLAN_ERROR_OVERFLOW = 3,    /* A size does not fit 64 bits. */
  OOMPLAN_ERROR_INTERNAL = 4,    /* A bug in oomplan. */
  OOMPLAN_ERROR_IO = 5,          /* A file could not be read or written. */
} oomplan_error_category;

/* The capacity searches: --max-batch and --max-seq. */
typedef enum oomplan_capacity_kind {
  OOMPLAN_CAPACITY_BATCH = 0,
  OOMPLAN_CAPACITY_SEQ = 1,
} oomplan_capacity_kind;

typedef struct oomplan_result oomplan_result;

/* Plans MODEL_PATH (.onnx, .onnxtxt or a MiniMalloc .csv) with the CLI
   options ARGV[0..ARGC) that follow the model path, for example
   {"--batch", "8", "--budget", "24G"}. Unlike the CLI, the output defaults to
   --emit=json. MODEL_PATH may be NULL when ARGV holds the model path.
   Returns OOMPLAN_FITS (0), OOMPLAN_DOES_NOT_FIT (2) or OOMPLAN_ERROR (1).
   When OUT is not NULL, *OUT is set to a result in every case, errors too
   (it holds the error's category and message), except when memory runs out
   (then NULL, which every accessor accepts); free it with
   oomplan_result_free. When ERROR is not NULL, *ERROR is set to a copy of
   the error message on error and to NULL otherwise; free it with
   oomplan_free_string. */
OOMPLAN_C_EXPORT int oomplan_plan(const char *model_path,
                                  const char *const *argv, int argc,
                                  oomplan_result **out, char **error);

/* oomplan_plan for a model held in memory: DATA[0..SIZE) is the file's
   contents and MODEL_NAME only names it (its extension says the format). */
OOMPLAN_C_EXPORT int oomplan_plan_buffer(const char *model_name,
                                         const void *data, size_t size,
                                         const char *const *argv, int argc,
                                         oomplan_result **out, char **error);

/* The value oomplan_plan returned: 0, 1 or 2. */
OOMPLAN_C_EXPORT int oomplan_result_status(const oomplan_result *r);
/* 1 when the plan fits the budget (or there is none), 0 otherwise. */
OOMPLAN_C_EXPORT int oomplan_result_fits(const oomplan_result *r);
/* The plan's device bytes: weights + inputs/outputs + arena (0 on error). */
OOMPLAN_C_EXPORT unsigned long long
oomplan_result_total_bytes(const oomplan_result *r);
/* 1 and *BYTES set when a budget was given (--budget or --device). */
OOMPLAN_C_EXPORT int oomplan_result_budget_bytes(const oomplan_result *r,
                                                 unsigned long long *bytes);
/* The --overhead allowance counted against the budget (0 without one). */
OOMPLAN_C_EXPORT unsigned long long
oomplan_result_overhead_bytes(const oomplan_result *r);

/* The --emit=json document (docs/plan-json.md), or NULL when the options
   asked for another --emit or the call failed. */
OOMPLAN_C_EXPORT const char *oomplan_result_json(const oomplan_result *r);
/* What --emit asked for (the JSON document by default); on error, what was
   produced before it. Never NULL. */
OOMPLAN_C_EXPORT const char *oomplan_result_output(const oomplan_result *r);

/* The error's category (OOMPLAN_ERROR_NONE without error) and message ("").
 */
OOMPLAN_C_EXPORT oomplan_error_category
oomplan_result_error_category(const oomplan_result *r);
OOMPLAN_C_EXPORT const char *
oomplan_result_error_message(const oomplan_result *r);
/* "bad input", "unsupported", "overflow", "internal error", "I/O error"
   ("" for OOMPLAN_ERROR_NONE). */
OOMPLAN_C_EXPORT const char *
oomplan_error_category_name(oomplan_error_category c);

/* The notes and warnings the CLI prints to standard error, in order. The
   I-th message (NULL when I is out of range); *IS_WARNING, when not NULL, is
   set to 1 for a warning and 0 for a note. */
OOMPLAN_C_EXPORT int oomplan_result_diagnostic_count(const oomplan_result *r);
OOMPLAN_C_EXPORT const char *oomplan_result_diagnostic(const oomplan_result *r,
                                                       int i, int *is_warning);

/* The capacity search's answer, when the options asked for it (--max-batch,
   --max-seq). Returns 1 when the search ran, else 0. *MAX is the largest
   value that fits (0: not even 1 fits); *AT_LEAST is 1 when the search's
   cap fits, so that larger values may fit too; *BYTES_AT_MAX the device
   bytes (plan + overhead) at *MAX. Any output pointer may be NULL. */
OOMPLAN_C_EXPORT int oomplan_result_capacity(const oomplan_result *r,
                                             oomplan_capacity_kind kind,
                                             long long *max, int *at_least,
                                             unsigned long long *bytes_at_max);
/* Shorthands: the largest batch (sequence) that fits, 0 when none does, -1
   when the search did not run. */
OOMPLAN_C_EXPORT long long oomplan_result_max_batch(const oomplan_result *r);
OOMPLAN_C_EXPORT long long oomplan_result_max_seq(const oomplan_result *r);

/* The fit chooser's decision ("recompute 12 values", ...) or NULL when it
   did not run; *PERCENT its predicted added step time. */
OOMPLAN_C_EXPORT const char *
oomplan_result_fit_strategy(const oomplan_result *r, double *percent);

/* Running a plan: oomplan-run as one call. */
typedef struct oomplan_execution oomplan_execution;

/* A tensor given to oomplan_execute: its graph-input name, its element type
   as ONNX's text format spells it ("float", "int64", "float16", ...), its
   RANK dims and its SIZE bytes, packed little-endian. Read during the call
   only. */
typedef struct oomplan_tensor {
  const char *name;
  const char *type;
  const long long *dims;
  int rank;
  const void *data;
  size_t size;
} oomplan_tensor;

/* Plans MODEL_PATH as oomplan_plan does (inference), then runs the plan in
   its regions on the CPU and measures it: oomplan-run's options in
   ARGV[0..ARGC) ("--batch", "8", "--input", "x=x.pb", "--check=unplanned",
   ...; MODEL_PATH may be NULL when ARGV holds it). INPUTS[0..NUM_INPUTS)
   are inputs in memory (INPUTS may be NULL when NUM_INPUTS is 0); other
   inputs come from --input and --inputs-dir files or are seeded random
   values. Unlike the tool, the report defaults to --json. Returns 0 (the
   run succeeded and every check passed), 2 (the plan does not fit the
   budget: not run) or 1 (an error, or a failed check: a region's
   high-water differs from the plan, or --check found a difference).
   OUT and ERROR as oomplan_plan's; free *OUT with oomplan_execution_free.
   */
OOMPLAN_C_EXPORT int oomplan_execute(const char *model_path,
                                     const char *const *argv, int argc,
                                     const oomplan_tensor *inputs,
                                     int num_inputs, oomplan_execution **out,
                                     char **error);

/* The value oomplan_execute returned: 0, 1 or 2. */
OOMPLAN_C_EXPORT int oomplan_execution_status(const oomplan_execution *e);
/* oomplan-run's report ("" on error): one JSON object (docs/runtime.md)
   unless the options said --json=false. Never NULL. */
OOMPLAN_C_EXPORT const char *
oomplan_execution_report(const oomplan_execution *e);
/* The whole batch's outputs, in graph-output order (none unless it ran).
   The I-th output's name (NULL when I is out of range), and through the
   pointers that are not NULL its type, dims, rank, bytes and their size;
   valid until the execution is freed. */
OOMPLAN_C_EXPORT int oomplan_execution_output_count(const oomplan_execution *e);
OOMPLAN_C_EXPORT const char *
oomplan_execution_output(const oomplan_execution *e, int i, const char **type,
                         const long long **dims, int *rank, const void **data,
                         size_t *size);
/* The plan's regions ("weights", "io", "arena", ...): the I-th region's name
   (NULL when out of range), its planned bytes and the run's high-water in
   it, rounded up to the plan's alignment (equal when the run kept to the
   plan). */
OOMPLAN_C_EXPORT int oomplan_execution_region_count(const oomplan_execution *e);
OOMPLAN_C_EXPORT const char *
oomplan_execution_region(const oomplan_execution *e, int i,
                         unsigned long long *planned_bytes,
                         unsigned long long *high_water_bytes);
/* The plan's weights + io + arena bytes (0 on error). */
OOMPLAN_C_EXPORT unsigned long long
oomplan_execution_plan_bytes(const oomplan_execution *e);
/* As oomplan_result's: the error (OOMPLAN_ERROR_NONE and "" without one,
   a failed check included), and the notes and warnings in order. */
OOMPLAN_C_EXPORT oomplan_error_category
oomplan_execution_error_category(const oomplan_execution *e);
OOMPLAN_C_EXPORT const char *
oomplan_execution_error_message(const oomplan_execution *e);
OOMPLAN_C_EXPORT int
oomplan_execution_diagnostic_count(const oomplan_execution *e);
OOMPLAN_C_EXPORT const char *
oomplan_execution_diagnostic(const oomplan_execution *e, int i,
                             int *is_warning);
OOMPLAN_C_EXPORT void oomplan_execution_free(oomplan_execution *e);

OOMPLAN_C_EXPORT void oomplan_result_free(oomplan_result *r);
OOMPLAN_C_EXPORT void oomplan_free_string(char *s);
/* "0.1.0". */
OOMPLAN_C_EXPORT const char *oomplan_version(void);

#ifdef __cplusplus
}
#endif

#endif /* OOMPLAN_C_OOMPLAN_H */
