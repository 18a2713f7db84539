/* Placeholder: the map tests are being written. */
#include "common.h"

const struct CMUnitTest tst_map_tests[] = {{0}};
const size_t tst_map_tests_count = 0;
