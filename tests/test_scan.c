/* Placeholder: the scan tests are being written. */
#include "common.h"

const struct CMUnitTest tst_scan_tests[] = {{0}};
const size_t tst_scan_tests_count = 0;
