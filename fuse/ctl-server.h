/*
 * ctl-server.h - the daemon's end of the control channel (ctl.c; the
 * channel itself is common/ctl.h), and the background check after a crash.
 */
#ifndef SUFS_FUSE_CTL_SERVER_H
#define SUFS_FUSE_CTL_SERVER_H

#include "sufs-fuse.h"

/* Listen under the image's name (before the daemon leaves the
 * foreground): 0, or -1 after the message. */
int ctl_listen(struct mount *m);
/* Listen under the mount's name too, now that the mount exists. */
void ctl_mounted(struct mount *m);
/* Start the channel's thread with start(): it first runs the background
 * check if the mount needs one (m->bgcheck), then serves one client at a
 * time.  0 or a negative errno. */
int ctl_start(struct mount *m, int (*start)(pthread_t *, void *(*)(void *), void *));
/* Stop it (a check or an export under way stops too) and close the
 * channel. */
void ctl_stop(struct mount *m);

#endif
