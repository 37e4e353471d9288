/* pick_batch: the largest batch of MODEL that fits an NVIDIA L4 with 2 GiB
   of headroom, through oomplan's C API (docs/embedding.md).

     make PKG_CONFIG_PATH=PREFIX/lib/pkgconfig
     ./pick_batch model.onnx --seq 1024 [--train ...]

   Any further arguments are oomplan options. Prints the batch and its
   device bytes; exits 0 when some batch fits, 2 when none does, 1 on
   error. */
#include <oomplan-c/oomplan.h>

#include <stdio.h>

int main(int argc, char **argv) {
  const char *args[64] = {"--device", "L4", "--overhead", "2G", "--max-batch"};
  int n = 5, i, at_least = 0;
  long long batch = 0;
  unsigned long long bytes = 0;
  oomplan_result *r = NULL;
  char *error = NULL;
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL [oomplan options]\n", argv[0]);
    return 1;
  }
  for (i = 2; i < argc && n < 64; ++i)
    args[n++] = argv[i];
  if (oomplan_plan(argv[1], args, n, &r, &error) == OOMPLAN_ERROR) {
    fprintf(stderr, "pick_batch: %s: %s\n",
            oomplan_error_category_name(oomplan_result_error_category(r)),
            error);
    oomplan_free_string(error);
    oomplan_result_free(r);
    return 1;
  }
  oomplan_result_capacity(r, OOMPLAN_CAPACITY_BATCH, &batch, &at_least, &bytes);
  oomplan_result_free(r);
  if (batch == 0) {
    printf("no batch fits an L4 with 2 GiB of headroom\n");
    return 2;
  }
  printf("batch %s%lld fits an L4 with 2 GiB of headroom (%llu bytes)\n",
         at_least ? "at least " : "", batch, bytes);
  return 0;
}
