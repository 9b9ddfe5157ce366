/*
 * snap_int.h - what the files of snapshots share (snap/): a snapshot kept
 * in memory, and the functions both the taking (snap.c) and the view
 * (view.c) need.
 */
#ifndef SUFS_SNAP_INT_H
#define SUFS_SNAP_INT_H

#include "sufs_int.h"

struct snap {
	unsigned slot;
	uint32_t ino;
	uint8_t *need;          /* per block: needs a copy before it changes */
	int broken;             /* broken inside a copy: removed when it ends */
};

/* Does snapshot s need block blk (in use when taken, neither copied nor
 * claimed since)? */
int need_test(const struct snap *s, uint64_t blk);
/* The snapshot of slot i, built from its file (its NEED bits from its copy
 * of the bitmaps); freed with snap_free(). */
int snap_build(struct sufs_fs *fs, unsigned i, struct snap **out);
void snap_free(struct snap *s);
/* The snapshot kept for slot, or NULL. */
struct snap *snap_active(struct sufs_fs *fs, unsigned slot);
/* Block blk of the live file system, as on disk (its write image when
 * cached and dirty). */
int snap_read_live(struct sufs_fs *fs, uint64_t blk, uint8_t *out);

#endif /* SUFS_SNAP_INT_H */
