/*
 * crash.h - the crash harness of sufs-replay (--crash-check): run a
 * workload, then check every state a crash could have left on the disk.
 * crash.c says how; man/sufs-replay.8 says what it prints.
 */
#ifndef SUFS_REPLAY_CRASH_H
#define SUFS_REPLAY_CRASH_H

#include <stdint.h>

/* How the states to check are chosen. */
enum crash_which {
	CRASH_ALL,                /* every state (crash.c, "The states") */
	CRASH_SAMPLE,             /* `sample` of them, drawn at random */
	CRASH_ONE,                /* the one named by `state` */
};

struct crash_opts {
	const char *image;        /* the base image (read, never written) */
	const char *script;       /* the workload: a script file, or NULL ... */
	uint64_t random_ops;      /* ... a random workload of this many operations */
	uint64_t seed;            /* its seed; also the seed of the sampling */
	unsigned mode;            /* enum sufs_mode */
	unsigned broken_rule;     /* sufs_test_break_rule(), 0: none */
	uint64_t cache_bytes;     /* cache size during the run (small: more epochs) */
	enum crash_which which;
	uint64_t sample;          /* CRASH_SAMPLE: how many */
	const char *state;        /* CRASH_ONE: "EPOCH:SUBSET" or "final" */
	unsigned subsets;         /* random subsets per epoch of more than 10 writes */
	unsigned jobs;            /* worker processes */
	unsigned max_reports;     /* violations reported (and saved) in full */
	const char *save_dir;     /* where the images of violations go */
	int fixed_time;           /* SOURCE_DATE_EPOCH */
	int64_t time_sec;
	int json;                 /* the summary as one JSON object */
	int quiet;                /* no summary when nothing was violated */
	int bgfsck;               /* repair each state with the background check */
};

/* Exit statuses (common/util.h's: man/sufs-replay.8, EXIT STATUS). */
#define CRASH_EXIT_OK        0
#define CRASH_EXIT_OPEN      2
#define CRASH_EXIT_SCRIPT    4
#define CRASH_EXIT_FILE      8
#define CRASH_EXIT_IO        16
#define CRASH_EXIT_VIOLATION 64

/*
 * Run the workload on a copy of the image in memory, then check the
 * states.  Prints each violation (with the command that checks that one
 * state again) and the summary; returns an exit status.
 */
int crash_check(const struct crash_opts *o);
/* Is text the name of a state in form (epoch:subset or final)?  Whether
 * the workload has it is known only once it has run. */
int crash_state_valid(const char *text);

#endif
