/*===- oomplan-capi.c - the oomplan CLI rebuilt on the C API --------------===*\
|*                                                                            *|
|* A C99 program that behaves as the oomplan tool, but through               *|
|* oomplan-c/oomplan.h: the same arguments, the output on standard output,   *|
|* notes and warnings on standard error, the same exit code. test_capi.py    *|
|* runs it next to the real tool on many option combinations and compares;   *|
|* that checks the library's argument parser against llvm::cl's and every    *|
|* accessor against the tool's printed numbers. It also compiles the header  *|
|* as strict C.                                                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#include "oomplan-c/oomplan.h"

#include <stdio.h>
#include <string.h>

/* Accessor values the test compares with the JSON, one "key=value" line
   each, to the file named by --capi-facts=FILE (taken off the command
   line). */
static void writeFacts(const char *path, const oomplan_result *r) {
  FILE *f = fopen(path, "w");
  unsigned long long budget = 0, bytes = 0;
  long long max = 0;
  int atLeast = 0, k;
  double pct = 0;
  const char *strategy;
  if (!f)
    return;
  fprintf(f, "status=%d\nfits=%d\ntotal_bytes=%llu\n", oomplan_result_status(r),
          oomplan_result_fits(r), oomplan_result_total_bytes(r));
  if (oomplan_result_budget_bytes(r, &budget))
    fprintf(f, "budget_bytes=%llu\n", budget);
  fprintf(f, "overhead_bytes=%llu\n", oomplan_result_overhead_bytes(r));
  fprintf(f, "has_json=%d\n", oomplan_result_json(r) != NULL);
  fprintf(f, "category=%s\n",
          oomplan_error_category_name(oomplan_result_error_category(r)));
  for (k = 0; k < 2; ++k) {
    oomplan_capacity_kind kind =
        k == 0 ? OOMPLAN_CAPACITY_BATCH : OOMPLAN_CAPACITY_SEQ;
    if (oomplan_result_capacity(r, kind, &max, &atLeast, &bytes))
      fprintf(f, "%s=%lld %d %llu\n", k == 0 ? "max_batch" : "max_seq", max,
              atLeast, bytes);
  }
  strategy = oomplan_result_fit_strategy(r, &pct);
  if (strategy)
    fprintf(f, "fit_strategy=%s\n", strategy);
  fclose(f);
}

int main(int argc, char **argv) {
  const char *args[256];
  const char *facts = NULL;
  int n = 0, i, status, warning = 0, toFile = 0;
  oomplan_result *r = NULL;
  char *error = NULL;
  for (i = 1; i < argc && n < 255; ++i) {
    if (strncmp(argv[i], "--capi-facts=", 13) == 0)
      facts = argv[i] + 13;
    else
      args[n++] = argv[i];
  }
  for (i = 0; i < n; ++i) {
    const char *a = args[i] + (args[i][0] == '-') + (args[i][1] == '-');
    if (a[0] == 'o' && a[1] == '=' && strcmp(a + 2, "-") != 0)
      toFile = 1;
    if (a[0] == 'o' && a[1] == 0 && i + 1 < n && strcmp(args[i + 1], "-"))
      toFile = 1;
  }
  /* The model is among the arguments, as on the tool's command line; the
     CLI's default output is the report, the C API's the JSON. */
  for (i = 0; i < n; ++i)
    if (strncmp(args[i], "--emit", 6) == 0 || strncmp(args[i], "-emit", 5) == 0)
      break;
  if (i == n)
    args[n++] = "--emit=report";
  status = oomplan_plan(NULL, args, n, &r, &error);
  for (i = 0; i < oomplan_result_diagnostic_count(r); ++i) {
    const char *msg = oomplan_result_diagnostic(r, i, &warning);
    fprintf(stderr, "oomplan: %s: %s\n", warning ? "warning" : "note", msg);
  }
  /* With -o FILE the library wrote the output there, as the tool does. */
  if (!toFile)
    fputs(oomplan_result_output(r), stdout);
  if (status == OOMPLAN_ERROR)
    fprintf(stderr, "oomplan: error: %s\n", error);
  if (facts)
    writeFacts(facts, r);
  oomplan_free_string(error);
  oomplan_result_free(r);
  return status;
}
