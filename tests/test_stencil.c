/* Placeholder: the stencil group is being written. */
#include "common.h"

static void placeholder(void **state) { skip(); }

const struct CMUnitTest tst_stencil_tests[] = {cmocka_unit_test(placeholder)};
const size_t tst_stencil_tests_count = sizeof tst_stencil_tests / sizeof tst_stencil_tests[0];
