/*
 * rdump.c - copying files out of an image onto the host: one file's
 * contents (holes kept), its attributes, and whole trees (rdump).
 *
 * A debugger is pointed at damaged and hostile images, so rdump must never
 * write outside the host directory it is given, whatever names and links
 * the image holds.  These rules guarantee it:
 *
 *  (1) Every host file is made by a *at() call relative to a directory fd
 *      that rdump opened itself with O_DIRECTORY|O_NOFOLLOW, starting with
 *      HOSTDIR.  No path with a '/' in it reaches the kernel, except when a
 *      hard link's first copy is found again: link_to_first() walks that
 *      path one component at a time under the same rule; and the extended
 *      attributes of a file rdump cannot open (a symbolic link, a device
 *      node) are set through /proc/self/fd/DIRFD/NAME, which names the
 *      entry NAME of a directory rdump opened, its link not followed.
 *  (2) A name from the image is used only if it is one path component:
 *      not empty, not "." or "..", without '/' or NUL.  Others are reported
 *      and skipped.
 *  (3) Nothing on the host side is followed or reused: files are created
 *      with O_CREAT|O_EXCL|O_NOFOLLOW, directories with mkdirat() and then
 *      opened with O_NOFOLLOW, special files with mknodat(), links with
 *      symlinkat() (made, never resolved); attributes are set through an fd
 *      or with AT_SYMLINK_NOFOLLOW.  A name that already exists on the host
 *      is an error, never overwritten or entered.
 *  (4) A directory is entered at most once, so a damaged image that links a
 *      directory into its own subtree cannot make rdump loop.
 *
 * What is copied: contents (only the blocks the inode maps are written, so
 * holes stay holes), mode, atime and mtime to the nanosecond, owner and
 * group when running as root, extended attributes and ACLs (user. ones
 * always, the others where the host permits: restore_xattrs()), symbolic links, hard links (later names of
 * an inode become links to its first copy), device nodes (root only),
 * FIFOs and sockets.  A directory's mode and times are set after its
 * contents, so writing into it does not disturb them.
 */
#include "config.h"

#include "commands.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define COPY_CHUNK (1u << 20)      /* bytes read from the image at a time */

/* ------------------------------------------------------------------------ */
/* One file's contents and attributes (also used by `dump`)                  */
/* ------------------------------------------------------------------------ */

/* A run of consecutive mapped logical blocks. */
struct run {
	uint64_t first, count;
};

struct runs {
	struct run *v;
	size_t n, cap;
	uint64_t nblocks;          /* blocks below the file's size */
	uint64_t bad_lblk;         /* first out-of-range pointer, if bad */
	int bad;
};

static int collect_run(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
		       int level, int bad, void *arg)
{
	struct runs *r = arg;

	if (lblk >= r->nblocks)
		return 0;
	if (bad) {  /* a data block's pointer, or an indirect block's: lblk is its first */
		if (!r->bad)
			r->bad_lblk = lblk;
		r->bad = 1;
		return 0;
	}
	if (level != 0)
		return 0;
	if (r->n && r->v[r->n - 1].first + r->v[r->n - 1].count == lblk) {
		r->v[r->n - 1].count++;
		return 0;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		struct run *v = realloc(r->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = (struct run){ lblk, 1 };
	return 0;
}

/* Read [off, off + len) of the inode and write it at the same offset. */
static int copy_range(struct session *s, const char *cmd, const char *what, uint32_t ino,
		      uint64_t off, uint64_t len, int fd, char *buf)
{
	while (len) {
		size_t want = len < COPY_CHUNK ? (size_t)len : COPY_CHUNK, done, w;
		int rc;

		if (debug_interrupted())
			return fail(cmd, what, "interrupted at byte %llu", (unsigned long long)off);
		rc = sufs_read(s->fs, ino, off, buf, want, &done);

		if (rc)
			return fail(cmd, what, "reading at byte %llu: %s", (unsigned long long)off,
				    sufs_strerror(rc));
		if (done == 0)
			return fail(cmd, what, "the file ends before its size at byte %llu",
				    (unsigned long long)off);
		for (w = 0; w < done;) {
			ssize_t n = pwrite(fd, buf + w, done - w, (off_t)(off + w));
			if (n < 0) {
				if (errno == EINTR)
					continue;
				return fail(cmd, what, "writing the copy: %s", strerror(errno));
			}
			w += (size_t)n;
		}
		off += done;
		len -= done;
	}
	return 0;
}

/* For a pipe or a terminal: every byte in order, holes as zeros. */
static int stream_contents(struct session *s, const char *cmd, const char *what, uint32_t ino,
			   uint64_t size, int fd, char *buf)
{
	uint64_t off = 0;

	while (off < size) {
		size_t want = size - off < COPY_CHUNK ? (size_t)(size - off) : COPY_CHUNK, done, w;
		int rc;

		if (debug_interrupted())
			return fail(cmd, what, "interrupted at byte %llu", (unsigned long long)off);
		rc = sufs_read(s->fs, ino, off, buf, want, &done);

		if (rc)
			return fail(cmd, what, "reading at byte %llu: %s", (unsigned long long)off,
				    sufs_strerror(rc));
		if (done == 0)
			return fail(cmd, what, "the file ends before its size at byte %llu",
				    (unsigned long long)off);
		for (w = 0; w < done;) {
			ssize_t n = write(fd, buf + w, done - w);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				return fail(cmd, what, "writing the copy: %s", strerror(errno));
			}
			w += (size_t)n;
		}
		off += done;
	}
	return 0;
}

int copy_contents(struct session *s, const char *cmd, const char *what, uint32_t ino,
		  uint64_t size, int fd)
{
	uint32_t bsize = sufs_get_super(s->fs)->block_size;
	struct runs r = { NULL, 0, 0, (size + bsize - 1) / bsize, 0, 0 };
	struct stat hst;
	char *buf = malloc(COPY_CHUNK);
	size_t i;
	int rc = 0;

	if (!buf)
		return fail(cmd, what, "%s", sufs_strerror(-ENOMEM));
	/* a read of nothing: the library refuses a size no file can have
	 * before the host file is given it */
	rc = sufs_read(s->fs, ino, 0, buf, 0, &i);
	if (rc) {
		free(buf);
		return fail(cmd, what, "reading: %s", sufs_strerror(rc));
	}
	if (fstat(fd, &hst) == 0 && !S_ISREG(hst.st_mode)) {
		rc = stream_contents(s, cmd, what, ino, size, fd, buf);
		free(buf);
		return rc;
	}
	/* Write only what the inode maps: the host file keeps the holes. */
	rc = sufs_block_iterate(s->fs, ino, collect_run, &r);
	if (rc) {
		rc = fail(cmd, what, "walking the block map: %s", sufs_strerror(rc));
		goto out;
	}
	if (r.bad)
		rc = fail(cmd, what, "a block pointer out of range at logical block %llu "
			  "(left as a hole)", (unsigned long long)r.bad_lblk);
	for (i = 0; i < r.n; i++) {
		uint64_t off = r.v[i].first * bsize, len = r.v[i].count * bsize;
		if (off + len > size)
			len = size - off;
		if (copy_range(s, cmd, what, ino, off, len, fd, buf)) {
			rc = 1;
			goto out;
		}
	}
	if (ftruncate(fd, (off_t)size))
		rc = fail(cmd, what, "setting the size: %s", strerror(errno));
out:
	free(r.v);
	free(buf);
	return rc;
}

static void times_of(const struct sufs_stat *st, struct timespec ts[2])
{
	ts[0].tv_sec = (time_t)st->atime;
	ts[0].tv_nsec = (long)st->atime_ns;
	ts[1].tv_sec = (time_t)st->mtime;
	ts[1].tv_nsec = (long)st->mtime_ns;
}

/* Only root may give files away; everyone else keeps them. */
static int may_chown(void)
{
	return geteuid() == 0;
}

int copy_attributes(const char *cmd, const char *what, const struct sufs_stat *st, int fd)
{
	struct timespec ts[2];
	int rc = 0;

	/* chown first: it clears the set-user-ID and set-group-ID bits */
	if (may_chown() && fchown(fd, st->uid, st->gid))
		rc = fail(cmd, what, "setting the owner: %s", strerror(errno));
	if (fchmod(fd, st->mode & 07777))
		rc = fail(cmd, what, "setting the mode: %s", strerror(errno));
	times_of(st, ts);
	if (futimens(fd, ts))
		rc = fail(cmd, what, "setting the times: %s", strerror(errno));
	return rc;
}

/* The same for a file rdump cannot open (a symbolic link, a device node):
 * by name, never following a link. */
static int copy_attributes_at(const char *cmd, const char *what, const struct sufs_stat *st,
			      int dirfd, const char *name)
{
	struct timespec ts[2];
	int rc = 0;

	if (may_chown() && fchownat(dirfd, name, st->uid, st->gid, AT_SYMLINK_NOFOLLOW))
		rc = fail(cmd, what, "setting the owner: %s", strerror(errno));
	if (!S_ISLNK(st->mode) && fchmodat(dirfd, name, st->mode & 07777, AT_SYMLINK_NOFOLLOW))
		rc = fail(cmd, what, "setting the mode: %s", strerror(errno));
	times_of(st, ts);
	if (utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW))
		rc = fail(cmd, what, "setting the times: %s", strerror(errno));
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Hard links: inode -> host path of its first copy                          */
/* ------------------------------------------------------------------------ */

struct link_slot {
	uint32_t ino;              /* 0: empty */
	char *path;                /* relative to HOSTDIR, components joined by '/' */
};

struct link_map {
	struct link_slot *v;
	size_t cap, n;             /* cap is a power of two */
};

static size_t link_hash(uint32_t ino, size_t cap)
{
	return (size_t)(ino * 2654435761u) & (cap - 1);
}

static const char *link_find(const struct link_map *m, uint32_t ino)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = link_hash(ino, m->cap); m->v[i].ino; i = (i + 1) & (m->cap - 1))
		if (m->v[i].ino == ino)
			return m->v[i].path;
	return NULL;
}

static int link_add(struct link_map *m, uint32_t ino, const char *path)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		struct link_map bigger = { NULL, m->cap ? 2 * m->cap : 64, 0 };
		bigger.v = calloc(bigger.cap, sizeof(*bigger.v));
		if (!bigger.v)
			return -ENOMEM;
		for (i = 0; i < m->cap; i++) {
			size_t j;
			if (!m->v[i].ino)
				continue;
			for (j = link_hash(m->v[i].ino, bigger.cap); bigger.v[j].ino;
			     j = (j + 1) & (bigger.cap - 1))
				;
			bigger.v[j] = m->v[i];
		}
		bigger.n = m->n;
		free(m->v);
		*m = bigger;
	}
	for (i = link_hash(ino, m->cap); m->v[i].ino; i = (i + 1) & (m->cap - 1))
		;
	m->v[i].path = strdup(path);
	if (!m->v[i].path)
		return -ENOMEM;
	m->v[i].ino = ino;
	m->n++;
	return 0;
}

static void link_free(struct link_map *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		free(m->v[i].path);
	free(m->v);
}

/* ------------------------------------------------------------------------ */
/* Trees                                                                     */
/* ------------------------------------------------------------------------ */

/* A path that grows and shrinks one component at a time. */
struct path {
	char *s;
	size_t len, cap;
};

static int path_push(struct path *p, const char *name, size_t len)
{
	int slash = p->len && p->s[p->len - 1] != '/';

	if (p->len + slash + len + 1 > p->cap) {
		size_t cap = 2 * (p->len + slash + len + 1);
		char *s = realloc(p->s, cap);
		if (!s)
			return -ENOMEM;
		p->s = s;
		p->cap = cap;
	}
	if (slash)
		p->s[p->len++] = '/';
	memcpy(p->s + p->len, name, len);
	p->len += len;
	p->s[p->len] = '\0';
	return 0;
}

static void path_pop(struct path *p, size_t len)
{
	p->len = len;
	if (p->s)
		p->s[len] = '\0';
}

struct rdump {
	struct session *s;
	const char *cmd;
	int topfd;                 /* HOSTDIR */
	uint8_t *seen_dirs;        /* one bit per inode */
	struct link_map links;
	struct path image;         /* where we are in the image, for messages */
	struct path host;          /* the same on the host, relative to HOSTDIR */
	int rc;
	struct progress pb;        /* the entries copied */
	uint64_t copied;
	int stopped;               /* interrupted: copy no more */
};

/* Report a problem with the current entry, naming it by its image path. */
#define ENTRY_FAIL(r, ...) \
	((r)->rc = fail_name((r)->cmd, (r)->image.s, (r)->image.len, __VA_ARGS__))

/* Rule (2): one path component, nothing else. */
static const char *bad_name(const char *name, size_t len)
{
	if (len == 0)
		return "an empty name";
	if (is_dot_name(name, len))
		return "a name that is \".\" or \"..\"";
	if (memchr(name, '/', len))
		return "a name with a '/' in it";
	if (memchr(name, '\0', len))
		return "a name with a NUL byte in it";
	return NULL;
}

/* Make name in dirfd a hard link to the first copy of the same inode,
 * walking to it one directory at a time (rule 1).  Returns 0 or -errno. */
static int link_to_first(struct rdump *r, const char *first, int dirfd, const char *name)
{
	char *copy = strdup(first), *comp, *slash;
	int fd = r->topfd, err = 0;

	if (!copy)
		return -ENOMEM;
	for (comp = copy; (slash = strchr(comp, '/')) != NULL; comp = slash + 1) {
		int next;
		*slash = '\0';
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			err = -errno;
		if (fd != r->topfd)
			close(fd);
		fd = next;
		if (err)
			break;
	}
	if (!err && linkat(fd, comp, dirfd, name, 0))
		err = -errno;
	if (fd >= 0 && fd != r->topfd)
		close(fd);
	free(copy);
	return err;
}

static void rdump_dir(struct rdump *r, int fd, uint32_t dir);

/*
 * The functions that make one kind of file return 1 when they made it (even
 * if something after that went wrong) and 0 when nothing was made.
 */
static int rdump_regular(struct rdump *r, const struct sufs_stat *st, int dirfd,
			 const char *name, const char *what)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0) {
		ENTRY_FAIL(r, "%s", strerror(errno));
		return 0;
	}
	if (copy_contents(r->s, r->cmd, what, st->ino, st->size, fd) ||
	    (restore_xattrs(r->s, r->cmd, what, st->ino, fd, -1, NULL) |
	     copy_attributes(r->cmd, what, st, fd)))
		r->rc = 1;
	if (close(fd))
		ENTRY_FAIL(r, "%s", strerror(errno));
	return 1;
}

static int rdump_directory(struct rdump *r, const struct sufs_stat *st, int dirfd,
			   const char *name, const char *what)
{
	int fd;

	if (bit_test_and_set(r->seen_dirs, st->ino)) {
		ENTRY_FAIL(r, "directory inode %u was already copied (a loop in the tree?): "
			   "skipped", st->ino);
		return 0;
	}
	if (mkdirat(dirfd, name, 0700)) {
		ENTRY_FAIL(r, "%s", strerror(errno));
		return 0;
	}
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ENTRY_FAIL(r, "%s", strerror(errno));
		return 1;
	}
	rdump_dir(r, fd, st->ino);
	/* after its entries: a default ACL must not reach them */
	if (restore_xattrs(r->s, r->cmd, what, st->ino, fd, -1, NULL) |
	    copy_attributes(r->cmd, what, st, fd))
		r->rc = 1;
	close(fd);
	return 1;
}

#define LINK_MAX_COPY 65536u        /* longer targets are refused (the host's limit is 4096) */

static int rdump_symlink(struct rdump *r, const struct sufs_stat *st, int dirfd,
			 const char *name, const char *what)
{
	char *target;
	size_t len;
	int rc, made = 0;

	if (st->size >= LINK_MAX_COPY) {
		ENTRY_FAIL(r, "the link's target is %llu bytes long: skipped",
			   (unsigned long long)st->size);
		return 0;
	}
	target = malloc(st->size + 1);
	if (!target) {
		ENTRY_FAIL(r, "%s", sufs_strerror(-ENOMEM));
		return 0;
	}
	rc = sufs_readlink(r->s->fs, st->ino, target, st->size + 1, &len);
	if (rc) {
		ENTRY_FAIL(r, "reading the link: %s", sufs_strerror(rc));
	} else if (len == 0 || memchr(target, '\0', len)) {
		ENTRY_FAIL(r, "the link's target is empty or holds a NUL byte: skipped");
	} else {
		target[len] = '\0';
		if (symlinkat(target, dirfd, name)) {
			ENTRY_FAIL(r, "%s", strerror(errno));
		} else {
			made = 1;
			if (restore_xattrs(r->s, r->cmd, what, st->ino, -1, dirfd, name) |
			    copy_attributes_at(r->cmd, what, st, dirfd, name))
				r->rc = 1;
		}
	}
	free(target);
	return made;
}

static int rdump_special(struct rdump *r, const struct sufs_stat *st, int dirfd,
			 const char *name, const char *what)
{
	dev_t dev = S_ISCHR(st->mode) || S_ISBLK(st->mode) ?
		makedev(st->rdev_major, st->rdev_minor) : 0;

	if (mknodat(dirfd, name, (st->mode & S_IFMT) | 0600, dev)) {
		ENTRY_FAIL(r, "%s", strerror(errno));
		return 0;
	}
	if (restore_xattrs(r->s, r->cmd, what, st->ino, -1, dirfd, name) |
	    copy_attributes_at(r->cmd, what, st, dirfd, name))
		r->rc = 1;
	return 1;
}

/* Copy inode ino as `name` in the host directory dirfd. */
static void rdump_inode(struct rdump *r, uint32_t ino, int dirfd, const char *name)
{
	struct sufs_stat st;
	const char *first;
	char *what;
	int rc = sufs_stat(r->s->fs, ino, &st), made = 0;

	if (rc) {
		ENTRY_FAIL(r, "inode %u: %s", ino, sufs_strerror(rc));
		return;
	}
	if (!S_ISDIR(st.mode) && st.links > 1 && (first = link_find(&r->links, ino))) {
		rc = link_to_first(r, first, dirfd, name);
		if (rc) {
			char *e = escape_name(first, strlen(first));
			ENTRY_FAIL(r, "linking to %s: %s", e ? e : "its first copy", strerror(-rc));
			free(e);
		}
		return;
	}
	/* a copy: a directory's contents move r->image before its times are set;
	 * and its name passed bad_name(), so it holds no NUL */
	what = strdup(r->image.s);
	if (!what) {
		r->rc = fail(r->cmd, NULL, "%s", sufs_strerror(-ENOMEM));
		return;
	}
	switch (st.mode & S_IFMT) {
	case S_IFREG:
		made = rdump_regular(r, &st, dirfd, name, what);
		break;
	case S_IFDIR:
		made = rdump_directory(r, &st, dirfd, name, what);
		break;
	case S_IFLNK:
		made = rdump_symlink(r, &st, dirfd, name, what);
		break;
	case S_IFCHR:
	case S_IFBLK:
	case S_IFIFO:
	case S_IFSOCK:
		made = rdump_special(r, &st, dirfd, name, what);
		break;
	default:
		ENTRY_FAIL(r, "inode %u has no known file type (mode 0%o): skipped", ino, st.mode);
		break;
	}
	/* Later names of a multiply linked file become links to this copy. */
	if (made && !S_ISDIR(st.mode) && st.links > 1 && link_add(&r->links, ino, r->host.s))
		r->rc = fail(r->cmd, what, "%s", sufs_strerror(-ENOMEM));
	free(what);
}

/* Copy the entries of image directory dir into the host directory fd. */
static void rdump_dir(struct rdump *r, int fd, uint32_t dir)
{
	size_t keep_image = r->image.len, keep_host = r->host.len, n, i;
	struct entry *v;
	int rc = read_entries(r->s, dir, &v, &n);

	if (rc) {
		ENTRY_FAIL(r, "reading the directory: %s", sufs_strerror(rc));
		return;
	}
	for (i = 0; i < n && !r->stopped; i++) {
		const struct entry *e = &v[i];
		const char *why;

		if (debug_interrupted()) {
			r->rc = fail(r->cmd, NULL, "interrupted after %llu entries",
				     (unsigned long long)r->copied);
			r->stopped = 1;
			break;
		}
		if (is_dot_name(e->name, e->len))
			continue;
		if (path_push(&r->image, e->name, e->len) || path_push(&r->host, e->name, e->len)) {
			r->rc = fail(r->cmd, NULL, "%s", sufs_strerror(-ENOMEM));
			break;
		}
		why = bad_name(e->name, e->len);
		if (why)
			ENTRY_FAIL(r, "%s cannot be copied: skipped", why);
		else
			rdump_inode(r, e->ino, fd, e->name);
		progress_update(&r->pb, ++r->copied);
		path_pop(&r->image, keep_image);
		path_pop(&r->host, keep_host);
	}
	free_entries(v, n);
}

/*
 * The name a source is copied under: the last component of the path as
 * typed, or the directory's own name when that is "." or "..".  The root
 * has none: its entries go straight into HOSTDIR.
 */
static char *source_name(struct rdump *r, const char *arg, uint32_t ino, size_t *len)
{
	const char *end = arg + strlen(arg), *start;
	uint32_t parent;
	char *name;

	while (end > arg + 1 && end[-1] == '/')
		end--;
	for (start = end; start > arg && start[-1] != '/'; start--)
		;
	*len = (size_t)(end - start);
	if (*len && !is_dot_name(start, *len)) {
		name = malloc(*len + 1);
		if (name) {
			memcpy(name, start, *len);
			name[*len] = '\0';
		}
		return name;
	}
	if (name_in_parent(r->s, ino, &parent, &name, len))
		return NULL;
	return name;
}

static void rdump_source(struct rdump *r, const char *arg)
{
	uint32_t root = sufs_get_super(r->s->fs)->root_ino, ino;
	const char *why;
	char *name;
	size_t len;

	if (resolve(r->s, r->cmd, arg, 0, &ino)) {
		r->rc = 1;
		return;
	}
	path_pop(&r->image, 0);
	path_pop(&r->host, 0);
	if (path_push(&r->image, arg, strlen(arg))) {
		r->rc = fail(r->cmd, NULL, "%s", sufs_strerror(-ENOMEM));
		return;
	}
	if (ino == root) {
		/* the root's entries go into HOSTDIR itself, which is left as it is */
		if (bit_test_and_set(r->seen_dirs, ino))
			ENTRY_FAIL(r, "the root was already copied: skipped");
		else
			rdump_dir(r, r->topfd, ino);
		return;
	}
	name = source_name(r, arg, ino, &len);
	if (!name) {
		r->rc = fail(r->cmd, arg, "cannot find the directory's name in its parent");
		return;
	}
	why = bad_name(name, len);
	if (why)
		r->rc = fail(r->cmd, arg, "%s cannot be copied", why);
	else if (path_push(&r->host, name, len))
		r->rc = fail(r->cmd, NULL, "%s", sufs_strerror(-ENOMEM));
	else
		rdump_inode(r, ino, r->topfd, name);
	free(name);
}

int cmd_rdump(struct session *s, int argc, char **argv)
{
	const char *hostdir = argv[argc - 1];
	struct rdump r = { .s = s, .cmd = argv[0], .topfd = -1 };
	int i;

	if (argc < 3)
		return fail(argv[0], NULL, "usage: rdump PATH... HOSTDIR");
	r.topfd = open(hostdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (r.topfd < 0) {
		int err = errno;
		struct stat lst;
		if (lstat(hostdir, &lst) == 0 && S_ISLNK(lst.st_mode))
			return fail(argv[0], hostdir, "is a symbolic link: give the directory itself");
		return fail(argv[0], hostdir, "%s", strerror(err));
	}
	r.seen_dirs = calloc(sufs_get_super(s->fs)->inodes_count / 8 + 1, 1);
	if (!r.seen_dirs) {
		close(r.topfd);
		return fail(argv[0], NULL, "%s", sufs_strerror(-ENOMEM));
	}
	progress_start(&r.pb, "Copying", 0);
	for (i = 1; i < argc - 1 && !r.stopped; i++)
		rdump_source(&r, argv[i]);
	if (r.stopped)
		progress_stop(&r.pb);
	else
		progress_end(&r.pb);
	link_free(&r.links);
	free(r.seen_dirs);
	free(r.image.s);
	free(r.host.s);
	close(r.topfd);
	return r.rc;
}
