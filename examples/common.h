/* What every example repeats: its options, the device it runs on and timing with events. */
#ifndef GPUPORT_EXAMPLES_COMMON_H
#define GPUPORT_EXAMPLES_COMMON_H

#include <gpuport.h>

#include <stdio.h>

/* Makes the enclosing function return 1 after saying which call failed and why. */
#define CHECK(call)                                                                                \
    do {                                                                                           \
        gp_status st_ = (call);                                                                    \
        if (st_ != GP_SUCCESS) {                                                                   \
            fprintf(stderr, "%s failed: %s: %s\n", #call, gp_status_name(st_), gp_last_error());   \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* Prints usage and exits on -h or --help (status 0), and on an option usage does not name or
 * one without its value (status 2): a typo must not silently run the defaults. "--name VALUE"
 * in usage, the value's name in capitals, says the option takes a value. */
void ex_parse(int argc, char **argv, const char *usage);
/* 1 when the flag --name was given. */
int ex_flag(int argc, char **argv, const char *name);
/* The value after --name, or def. */
const char *ex_string(int argc, char **argv, const char *name, const char *def);
/* The number after --name ("4096", "1e9"), or def; anything else exits with status 2. */
double ex_number(int argc, char **argv, const char *name, double def);

/* Calls run(device, ctx) on the device named by --device SPEC, else GPUPORT_DEVICE, else
 * gp_device_default's choice, or on every device with --all, each after a line naming it.
 * Returns main's status: 0 when every run returned 0, 1 when one failed, 77 (the skip code of
 * CTest) when there is no device at all. */
int ex_run(int argc, char **argv, int (*run)(gp_device *device, void *ctx), void *ctx);

/* Device time of the work queued on a stream between ex_timer_start and ex_timer_stop. */
typedef struct ex_timer {
    gp_event *start, *stop;
    gp_stream *stream;
} ex_timer;
gp_status ex_timer_start(ex_timer *timer, gp_device *device, gp_stream *stream);
/* Waits for the stream's work, sets *ms and frees the timer's events. */
gp_status ex_timer_stop(ex_timer *timer, double *ms);

/* Host wall-clock time in milliseconds, for the plain C side of a comparison. */
double ex_host_ms(void);

#endif
