/*
 * outfile.c - an output file that appears whole or not at all.
 *
 * sufs-snap export and sufs-dump -m and --restore write a new file under a
 * name the user gives.  They write it as a temporary file in the same
 * directory and rename it into place only once it is complete and on disk,
 * so that a failure or an interrupt leaves the name as it was: no partial
 * output, and an existing file (replaced with -f) kept until the new one
 * is whole.
 *
 * A name that holds an image may be held open by a program writing it
 * (sufs-debug -w, sufs-replay, fsck.sufs), which keeps an exclusive flock
 * on it (libsufs/dev/dev.c).  Renaming over it would leave that program
 * writing to a file that no name reaches: its work lost without a word.
 * So the file under the name is locked the same way from outfile_open() to
 * outfile_commit(), and a name another program holds is refused.
 */
#include "config.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int outfile_check(const char *path, const struct stat *input, int force, const char **why)
{
	struct stat st;

	if (!*path) {
		*why = "an empty name";
		return -EINVAL;
	}
	/* what -f cannot help first, so as not to suggest it; the input
	 * through a symlink too */
	if (input && stat(path, &st) == 0 && st.st_dev == input->st_dev &&
	    st.st_ino == input->st_ino) {
		*why = "is the input file itself";
		return -EINVAL;
	}
	if (lstat(path, &st)) {
		if (errno == ENOENT)
			return 0;
		*why = strerror(errno);
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = "exists and is not a regular file";
		return -EINVAL;
	}
	if (!force) {
		*why = "exists (use -f to replace it)";
		return -EEXIST;
	}
	return 0;
}

/*
 * Lock the file under the name, if there is one, as a writer of an image
 * does: 0 (nothing there, or locked, or on a file system without locks),
 * -EBUSY when another program holds it.
 */
static int lock_target(struct outfile *o)
{
	o->lockfd = open(o->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (o->lockfd < 0)
		return 0;  /* nothing there (or nothing this can hold) */
	if (flock(o->lockfd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK) {
		close(o->lockfd);
		o->lockfd = -1;
		return -EBUSY;
	}
	return 0;
}

static void unlock_target(struct outfile *o)
{
	if (o->lockfd >= 0)
		close(o->lockfd);
	o->lockfd = -1;
}

int outfile_open(struct outfile *o, const char *path, mode_t mode)
{
	char *copy;
	mode_t mask;
	int err;

	o->path = path;
	o->fd = -1;
	o->tmp = NULL;
	o->lockfd = -1;
	err = lock_target(o);
	if (err)
		return err;
	copy = strdup(path);
	if (!copy || asprintf(&o->tmp, "%s/.%s.XXXXXX", dirname(copy), prog) < 0) {
		o->tmp = NULL;
		free(copy);
		unlock_target(o);
		return -ENOMEM;
	}
	free(copy);
	o->fd = mkstemp(o->tmp);
	if (o->fd < 0) {
		err = -errno;
		free(o->tmp);
		o->tmp = NULL;
		unlock_target(o);
		return err;
	}
	/* the mode asked for less the umask, not mkstemp()'s 0600 */
	mask = umask(0);
	umask(mask);
	if (fchmod(o->fd, mode & 0666 & ~mask)) {
		err = -errno;
		outfile_abort(o);
		return err;
	}
	return 0;
}

int outfile_commit(struct outfile *o, int replace, const char **where)
{
	char *copy;
	int dfd, err = 0;

	*where = "writing the output";
	if (fsync(o->fd)) {
		err = -errno;
		goto fail;
	}
	err = close(o->fd) ? -errno : 0;
	o->fd = -1;
	if (err)
		goto fail;
	*where = "renaming the output into place";
	if (replace) {
		if (rename(o->tmp, o->path)) {
			err = -errno;
			goto fail;
		}
	} else {
		/* no -f: a file made under the name meanwhile is not replaced
		 * (where hard links cannot be made, rename: the name was
		 * free when the run began) */
		if (link(o->tmp, o->path) == 0) {
			unlink(o->tmp);
		} else if (errno == EEXIST ||
			   (errno != EPERM && errno != EOPNOTSUPP) || rename(o->tmp, o->path)) {
			err = -errno;
			goto fail;
		}
	}
	free(o->tmp);
	o->tmp = NULL;
	unlock_target(o);
	*where = NULL;
	/* in place; make the name durable too (a directory that cannot be
	 * synced, EINVAL, has nothing to sync) */
	copy = strdup(o->path);
	if (!copy)
		return 0;
	dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		if (fsync(dfd) && errno != EINVAL) {
			*where = "syncing the output's directory";
			err = -errno;
		}
		close(dfd);
	}
	free(copy);
	return err;
fail:
	outfile_abort(o);
	return err;
}

void outfile_abort(struct outfile *o)
{
	unlock_target(o);
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp) {
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
}
