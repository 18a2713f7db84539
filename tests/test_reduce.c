/* Placeholder: the reduce tests are being written. */
#include "common.h"

const struct CMUnitTest tst_reduce_tests[] = {{0}};
const size_t tst_reduce_tests_count = 0;
