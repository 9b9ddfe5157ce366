/*
 * remote.c - sufs-snap's commands on a mounted image, through its
 * sufs-fuse daemon (remote.h; the protocol is common/ctl.h's).
 */
#include "config.h"

#include "remote.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A "snap NAME SLOT INO TIME BLOCKS BROKEN" line into *s; 0 or -EPROTO. */
static int snap_line(char **w, int n, struct sufs_snap_info *s)
{
	uint32_t slot, broken;
	int64_t t;

	memset(s, 0, sizeof(*s));
	if (n != 7 || strlen(w[1]) > SUFS_NAME_MAX || parse_u32(w[2], &slot) ||
	    parse_u32(w[3], &s->ino) || parse_i64(w[4], &t) || parse_u64(w[5], &s->blocks) ||
	    parse_u32(w[6], &broken))
		return -EPROTO;
	strcpy(s->name, w[1]);
	s->slot = slot;
	s->time = t;
	s->broken = broken != 0;
	return 0;
}

/* The return code of a "done RC [WHERE]" line, WHERE into where. */
static int done_line(char **w, int n, char *where, size_t size)
{
	if (where && size)
		snprintf(where, size, "%s", n >= 3 ? w[2] : "");
	return (int)strtol(w[1], NULL, 10);
}

/*
 * Read the daemon's lines up to "done": each "snap" line goes to snaps (at
 * most max), a "progress" line to x.  The return code of "done", or the
 * error that cut the talk short.
 */
static int replies(struct ctl *c, struct sufs_snap_info *snaps, unsigned max, unsigned *nsnaps,
		   struct remote_export *x, char *where, size_t size)
{
	char *w[CTL_MAX_WORDS];
	uint64_t done, total;
	int n, cancelled = 0;

	if (nsnaps)
		*nsnaps = 0;
	for (;;) {
		n = ctl_recv(c, w, CTL_MAX_WORDS, x ? 200 : -1);
		if (n == -ETIMEDOUT || n == -EINTR) {
			if (x && x->cancel && *x->cancel && !cancelled)
				cancelled = ctl_send(c, -1, "cancel", NULL) == 0;
			continue;
		}
		if (n <= 0)
			return n ? n : -EPIPE; /* the daemon went away */
		if (!strcmp(w[0], "done") && n >= 2)
			return done_line(w, n, where, size);
		if (!strcmp(w[0], "snap") && nsnaps && *nsnaps < max) {
			if (snap_line(w, n, &snaps[*nsnaps]))
				return -EPROTO;
			(*nsnaps)++;
		} else if (!strcmp(w[0], "progress") && n == 4 && x && x->progress &&
			   !parse_u64(w[2], &done) && !parse_u64(w[3], &total)) {
			x->progress(x->arg, done, total);
		}
	}
}

int remote_create(struct ctl *c, const char *name, struct sufs_snap_info *info,
		  char *taken, size_t size)
{
	unsigned n;
	int rc = ctl_send(c, -1, "snap-create", name, NULL);

	if (!rc)
		rc = replies(c, info, 1, &n, NULL, taken, size);
	ctl_close(c);
	return rc;
}

int remote_list(struct ctl *c, struct sufs_snap_info out[SUFS_SNAP_SLOTS], unsigned *n)
{
	int rc = ctl_send(c, -1, "snap-list", NULL);

	*n = 0;
	if (!rc)
		rc = replies(c, out, SUFS_SNAP_SLOTS, n, NULL, NULL, 0);
	ctl_close(c);
	return rc;
}

int remote_delete(struct ctl *c, const char *name)
{
	int rc = ctl_send(c, -1, "snap-delete", name, NULL);

	if (!rc)
		rc = replies(c, NULL, 0, NULL, NULL, NULL, 0);
	ctl_close(c);
	return rc;
}

int remote_export(struct ctl *c, const char *name, int fd, struct remote_export *x)
{
	unsigned n = 0;
	int rc = ctl_send(c, fd, "snap-export", name, NULL);

	memset(&x->info, 0, sizeof(x->info));
	x->where[0] = 0;
	if (!rc)
		rc = replies(c, &x->info, 1, &n, x, x->where, sizeof(x->where));
	ctl_close(c);
	if (!rc && n && x->info.broken)
		rc = -SUFS_ECORRUPT;
	return rc;
}
