/*
 * clock.c - the monotonic clock the write-back policy measures ages with.
 */
#include "config.h"
#include "sufs_int.h"

#include <time.h>

double now_seconds_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

