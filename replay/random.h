/*
 * random.h - the random workload of sufs-replay (--random): lines of the
 * script language (common/script.h), drawn from the tree an image holds.
 */
#ifndef SUFS_REPLAY_RANDOM_H
#define SUFS_REPLAY_RANDOM_H

#include <stdint.h>

#include "sufs.h"

struct random_gen;

/*
 * Start a workload for the file system fs, from the tree it holds now (the
 * generator reads it: names, types, sizes, link counts) and the space left
 * in it.  The same seed on the same tree gives the same lines.
 */
int random_open(struct sufs_fs *fs, uint64_t seed, struct random_gen **out);
/* The next line of the workload (without a newline), valid until the next
 * call; NULL when out of memory. */
const char *random_next(struct random_gen *g);
void random_close(struct random_gen *g);

#endif
