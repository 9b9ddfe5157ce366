/*
 * remote.h - sufs-snap's commands on a mounted image, made by its
 * sufs-fuse daemon (the image's only writer while mounted) over the
 * control channel (common/ctl.h).  Each returns what the library call
 * would: 0, or a negative error code.
 */
#ifndef SUFS_SNAP_REMOTE_H
#define SUFS_SNAP_REMOTE_H

#include <sufs.h>

#include <signal.h>

#include "ctl.h"

/* The daemon's word on a name that is taken (-EEXIST): "snapshot",
 * "leftover" (a file an interrupted create left) or "other". */
int remote_create(struct ctl *c, const char *name, struct sufs_snap_info *info,
		  char *taken, size_t size);
int remote_list(struct ctl *c, struct sufs_snap_info out[SUFS_SNAP_SLOTS], unsigned *n);
int remote_delete(struct ctl *c, const char *name);

/* Export into fd (a file of ours, which the daemon writes).  progress(arg,
 * done, total) as it goes; *cancel, once set, asks the daemon to stop
 * (-EINTR).  *info is the snapshot's (a broken one: -SUFS_ECORRUPT with
 * info->broken set, nothing written); *where says what failed. */
struct remote_export {
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *arg;
	volatile sig_atomic_t *cancel;
	struct sufs_snap_info info;
	char where[96];
};
int remote_export(struct ctl *c, const char *name, int fd, struct remote_export *x);

#endif
