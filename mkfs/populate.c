/*
 * populate.c - copy a directory tree into a new file system (mkfs.sufs -d).
 *
 * The walk goes through directory file descriptors (openat, fstatat), so a
 * deep tree costs no path lookups and no PATH_MAX limit; the path string is
 * kept only for messages.  The walks keep the directories on the way down
 * in arrays, not on the C stack, and each holds one open descriptor, so
 * the depth is bounded by the limit on open files (ulimit -n, about 1,000
 * levels by default); past it the copy fails naming the directory
 * (EMFILE).  Three rules make the result reproducible:
 *
 *   1. Entries are copied in byte order of their names (strcmp), never in
 *      the order readdir returns them.  Inode and block allocation then
 *      depend only on the tree's contents.
 *   2. Hard links are recognised by the source's (st_dev, st_ino) but only
 *      to map the second and later names to the sufs inode made for the
 *      first; the source inode numbers themselves go nowhere.
 *   3. A file's data is copied block by block and blocks of zeros are left
 *      as holes, whether or not the source stored them: the image does not
 *      depend on how sparse the source file system kept a file.  SEEK_DATA
 *      and SEEK_HOLE only save reading the source's holes.
 *
 * Extended attributes and ACLs are copied with each file (xattrs_copy()),
 * read through /proc/self/fd/DIR/NAME, so that a symbolic link's own are
 * read too, and no long path is looked up; where /proc is missing, through
 * the path.  Those the source will not give us (trusted. when we are not
 * root) are not seen.
 *
 * Source files are opened with O_NOATIME where we may, so that copying a
 * tree does not change the access times a second copy would record.  That
 * cannot be had for a symbolic link (readlink always touches its access
 * time) nor for files of other users when we are not root; for reproducible
 * images (SOURCE_DATE_EPOCH), times later than the epoch given are clamped
 * to it, which also covers every file the build itself touched.
 */
#include "config.h"
#include "populate.h"
#include "sufs.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#define COPY_BUF_SIZE (1u << 20)

/* Source (st_dev, st_ino) -> sufs inode, for files with more than one name. */
struct link_ent {
	dev_t dev;
	ino_t ino;
	uint32_t sufs_ino;          /* 0: empty slot */
};

struct link_map {
	struct link_ent *tab;
	size_t cap;                 /* a power of two */
	size_t count;
};

struct pop {
	struct sufs_fs *fs;
	const struct populate_opts *opts;
	struct populate_stats *stats;
	uint32_t bsize;
	uint8_t *buf;               /* COPY_BUF_SIZE bytes */
	char *path;                 /* source path of the entry at hand */
	size_t path_len, path_cap;
	char *shown_path;           /* path as messages print it (escaped) */
	size_t shown_cap;
	struct link_map links;
	struct progress progress;
	uint64_t entries;           /* entries done, for the progress bar */
	int xattr;                  /* the image has SUFS_FEATURE_RO_XATTR */
	int proc;                   /* /proc/self/fd is there */
	int xattr_warned;           /* said that it has not, and a file has some */
};

/* ---- messages ------------------------------------------------------------ */

/* The path at hand with common/util.h's escapes, whole however long it is
 * (shown() would cut it), in a buffer kept for the next message. */
static const char *path_shown(struct pop *p)
{
	size_t need = 4 * p->path_len + 1;

	if (need > p->shown_cap) {
		char *np = realloc(p->shown_path, need);
		if (!np)
			return shown(p->path);
		p->shown_path = np;
		p->shown_cap = need;
	}
	escape_name_into(p->path, p->path_len, p->shown_path);
	return p->shown_path;
}

/* A failure at the entry at hand: the source's, or the image's when a
 * write to it failed (the host's file system full: not the source's
 * fault, and mkfs.sufs exits with another status). */
static int fail(struct pop *p, const char *what, int rc)
{
	const struct sufs_dev *dev = sufs_get_dev(p->fs);

	if (dev->write_error)
		errmsg("cannot write %s: %s", shown(dev->name), sufs_strerror(dev->write_error));
	else
		errmsg("%s: %s: %s", path_shown(p), what, sufs_strerror(rc));
	return rc;
}

static int fail_errno(struct pop *p, const char *what)
{
	return fail(p, what, errno ? -errno : -EIO);
}

/* ---- the path, for messages ------------------------------------------------ */

/* Append "/name"; returns the length to cut back to, or -1 out of memory. */
static int path_push(struct pop *p, const char *name, size_t *old)
{
	size_t len = strlen(name);
	size_t need = p->path_len + 1 + len + 1;

	if (need > p->path_cap) {
		size_t cap = p->path_cap * 2 > need ? p->path_cap * 2 : need;
		char *np = realloc(p->path, cap);
		if (!np)
			return -1;
		p->path = np;
		p->path_cap = cap;
	}
	*old = p->path_len;
	if (p->path_len == 0 || p->path[p->path_len - 1] != '/')
		p->path[p->path_len++] = '/';
	memcpy(p->path + p->path_len, name, len + 1);
	p->path_len += len;
	return 0;
}

static void path_pop(struct pop *p, size_t old)
{
	p->path_len = old;
	p->path[old] = '\0';
}

/* ---- hard links ------------------------------------------------------------ */

static size_t link_slot(const struct link_map *m, dev_t dev, ino_t ino)
{
	uint64_t h = ((uint64_t)ino * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)dev * 0xc2b2ae3d27d4eb4full);
	size_t i = (size_t)(h >> 17) & (m->cap - 1);

	while (m->tab[i].sufs_ino && (m->tab[i].dev != dev || m->tab[i].ino != ino))
		i = (i + 1) & (m->cap - 1);
	return i;
}

static uint32_t link_find(const struct link_map *m, dev_t dev, ino_t ino)
{
	if (!m->cap)
		return 0;
	return m->tab[link_slot(m, dev, ino)].sufs_ino;
}

static int link_add(struct link_map *m, dev_t dev, ino_t ino, uint32_t sufs_ino)
{
	size_t i;

	if ((m->count + 1) * 2 > m->cap) {
		struct link_map big = { NULL, m->cap ? m->cap * 2 : 256, 0 };
		big.tab = calloc(big.cap, sizeof(*big.tab));
		if (!big.tab)
			return -ENOMEM;
		for (i = 0; i < m->cap; i++) {
			if (m->tab[i].sufs_ino)
				big.tab[link_slot(&big, m->tab[i].dev, m->tab[i].ino)] = m->tab[i];
		}
		big.count = m->count;
		free(m->tab);
		*m = big;
	}
	i = link_slot(m, dev, ino);
	m->tab[i].dev = dev;
	m->tab[i].ino = ino;
	m->tab[i].sufs_ino = sufs_ino;
	m->count++;
	return 0;
}

/* ---- reading the source ------------------------------------------------------ */

/* openat() with O_NOATIME when we may use it (owner of the file, or root).
 * An entry of the tree is never followed if it is a symlink (flags carry
 * O_NOFOLLOW); the source directory is opened as the user named it. */
static int open_source(int dfd, const char *name, int flags)
{
	int fd = openat(dfd, name, flags | O_NOATIME | O_CLOEXEC);

	if (fd < 0 && errno == EPERM)
		fd = openat(dfd, name, flags | O_CLOEXEC);
	return fd;
}

static int is_dot(const char *name)
{
	return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/* A directory's entry names, sorted by strcmp. */
struct names {
	char *text;                 /* the names, each NUL-terminated */
	size_t len, cap;
	char **v;
	size_t n;
};

static void names_free(struct names *nl)
{
	free(nl->text);
	free(nl->v);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Read every name of the directory d ("." and ".." left out) and sort. */
static int names_read(DIR *d, struct names *nl)
{
	struct dirent *de;
	size_t i, *offs = NULL, ocap = 0;

	memset(nl, 0, sizeof(*nl));
	for (;;) {
		size_t len;

		errno = 0;
		de = readdir(d);
		if (!de)
			break;
		if (is_dot(de->d_name))
			continue;
		len = strlen(de->d_name) + 1;
		if (nl->len + len > nl->cap) {
			size_t cap = nl->cap ? nl->cap * 2 : 4096;
			char *t;
			while (cap < nl->len + len)
				cap *= 2;
			t = realloc(nl->text, cap);
			if (!t)
				goto nomem;
			nl->text = t;
			nl->cap = cap;
		}
		if (nl->n == ocap) {
			size_t *o = realloc(offs, (ocap ? ocap * 2 : 64) * sizeof(*offs));
			if (!o)
				goto nomem;
			offs = o;
			ocap = ocap ? ocap * 2 : 64;
		}
		memcpy(nl->text + nl->len, de->d_name, len);
		offs[nl->n++] = nl->len;
		nl->len += len;
	}
	if (errno) {
		int rc = -errno;
		free(offs);
		names_free(nl);
		return rc;
	}
	/* no room kept past the names: a deep walk holds a list per level */
	if (nl->len && nl->len < nl->cap) {
		char *t = realloc(nl->text, nl->len);
		if (t) {
			nl->text = t;
			nl->cap = nl->len;
		}
	}
	/* The text no longer moves: turn offsets into pointers and sort. */
	nl->v = malloc((nl->n ? nl->n : 1) * sizeof(*nl->v));
	if (!nl->v)
		goto nomem;
	for (i = 0; i < nl->n; i++)
		nl->v[i] = nl->text + offs[i];
	free(offs);
	qsort(nl->v, nl->n, sizeof(*nl->v), cmp_name);
	return 0;
nomem:
	free(offs);
	names_free(nl);
	return -ENOMEM;
}

/* What counting the tree keeps: the sizes, and the files with more than
 * one name already counted (the link map's sufs_ino is 1 for them). */
struct counting {
	const struct populate_opts *opts;
	struct populate_need *need;
	int exact;
	struct link_map seen;
	int nomem;
	char *path;                 /* the directory at hand, for need->too_long */
	size_t path_len, path_cap;
};

/* The path at hand: its first len bytes, and then /name when name is
 * given (an entry of the directory at hand); -1 out of memory. */
static int count_path(struct counting *k, size_t len, const char *name)
{
	size_t n = name ? strlen(name) : 0, need = len + 1 + n + 1;

	if (need > k->path_cap) {
		char *np = realloc(k->path, need * 2);
		if (!np)
			return -1;
		k->path = np;
		k->path_cap = need * 2;
	}
	k->path_len = len;
	if (name) {
		if (len && k->path[len - 1] != '/')
			k->path[k->path_len++] = '/';
		memcpy(k->path + k->path_len, name, n);
		k->path_len += n;
	}
	k->path[k->path_len] = '\0';
	return 0;
}

/* A symlink whose target the file system cannot hold: the first one met is
 * kept, with its path, for the refusal. */
static void note_too_long(struct counting *k, const char *name, uint64_t size)
{
	size_t dir = k->path_len;

	if (k->need->too_long)
		return;
	if (count_path(k, dir, name)) {
		k->nomem = 1;
		return;
	}
	k->need->too_long = strdup(k->path);
	k->need->too_long_size = size;
	if (!k->need->too_long)
		k->nomem = 1;
	count_path(k, dir, NULL);
}

/* ---- extended attributes of the source ----------------------------------------- */

/* A name to reach entry NAME of directory DFD by, for the l*xattr() calls
 * (which take paths): /proc/self/fd/DFD/NAME. */
static void xattr_source(char *out, size_t size, int dfd, const char *name)
{
	snprintf(out, size, "/proc/self/fd/%d/%s", dfd, name);
}

/* The source's attributes: through the path src (its last component not
 * followed), or when src is NULL through the descriptor fd. */
static ssize_t src_list(const char *src, int fd, char *list, size_t size)
{
	return src ? llistxattr(src, list, size) : flistxattr(fd, list, size);
}

static ssize_t src_get(const char *src, int fd, const char *name, void *value, size_t size)
{
	return src ? lgetxattr(src, name, value, size) : fgetxattr(fd, name, value, size);
}

/* The names of the source's attributes (malloc()ed, *len bytes, NUL after
 * each), or NULL with *len 0 when it has none or will not say. */
static char *xattr_names(const char *src, int fd, ssize_t *len)
{
	char *list = NULL, *p;
	ssize_t n;
	int tries;

	for (tries = 0; tries < 8; tries++) {
		n = src_list(src, fd, NULL, 0);
		if (n <= 0)
			break;
		p = realloc(list, (size_t)n);
		if (!p)
			break;
		list = p;
		n = src_list(src, fd, list, (size_t)n);
		if (n >= 0 || errno != ERANGE)
			break; /* ERANGE: it grew since: again */
	}
	if (n <= 0) {
		free(list);
		list = NULL;
	}
	*len = n > 0 ? n : 0;
	return list;
}

/* The bytes the source's attributes would take in a sufs area (the
 * entries, as sufs.h lays them out): 0 when it has none. */
static size_t xattr_bytes(const char *src)
{
	static const char *const prefixes[] = { "user.", "trusted.", "security." };
	ssize_t len, v;
	size_t total = 0, i, plen;
	char *list = xattr_names(src, -1, &len), *name;

	for (name = list; name && name < list + len; name += strlen(name) + 1) {
		v = lgetxattr(src, name, NULL, 0);
		if (v < 0)
			continue;
		plen = strlen(name); /* an ACL's whole name is its namespace */
		for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
			if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
				plen = strlen(prefixes[i]);
		total += (4 + strlen(name) - plen + (size_t)v + 3) & ~(size_t)3;
	}
	free(list);
	return total;
}

/* The file type of a directory entry as stat() gives it, from d_type
 * where the file system fills it in. */
static mode_t dtype_mode(unsigned char t)
{
	switch (t) {
	case DT_DIR: return S_IFDIR;
	case DT_REG: return S_IFREG;
	case DT_LNK: return S_IFLNK;
	case DT_CHR: return S_IFCHR;
	case DT_BLK: return S_IFBLK;
	case DT_FIFO: return S_IFIFO;
	case DT_SOCK: return S_IFSOCK;
	default: return 0;
	}
}

/* Count what the entries below the directory fd (which is consumed) will
 * take, deciding as copy_entry() does; without k->exact, from the entries'
 * types alone (no stat: every name a file of its own, every symlink a long
 * one, the image counted).  An error only makes the counts short: the copy
 * reports it.  The walk keeps the open directories in an array, not on the
 * C stack: a tree may be deeper than the stack allows. */
static void count_tree(struct counting *k, int fd)
{
	DIR **open = NULL, *d;
	size_t n = 0, cap = 0, *lens = NULL;
	struct dirent *de;
	struct stat st;

	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	for (;;) {
		de = readdir(d);
		if (!de) {
			closedir(d);
			if (!n)
				break;
			d = open[--n];
			count_path(k, lens[n], NULL);
			continue;
		}
		if (is_dot(de->d_name))
			continue;
		k->need->entries++;
		{
			/* an entry whose attributes do not fit in its inode takes a
			 * block (a second name of a file counts it twice: at most);
			 * without exact, any with attributes counts one */
			char src[64 + SUFS_NAME_MAX];
			xattr_source(src, sizeof(src), dirfd(d), de->d_name);
			if (k->exact ? xattr_bytes(src) > SUFS_XATTR_INLINE
				     : llistxattr(src, NULL, 0) > 0)
				k->need->min_blocks++;
		}
		st.st_mode = k->exact ? 0 : dtype_mode(de->d_type);
		/* a symlink's target decides whether it can be copied at all */
		if (st.st_mode == S_IFLNK)
			st.st_mode = 0;
		if (!st.st_mode) {
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
				continue;
			if (k->opts->skip_set && st.st_dev == k->opts->skip_dev &&
			    st.st_ino == k->opts->skip_ino)
				continue;
		} else {
			st.st_nlink = 1;
			st.st_size = SUFS_FAST_SYMLINK_MAX + 1;
		}
		switch (st.st_mode & S_IFMT) {
		case S_IFDIR: {
			int sub = open_source(dirfd(d), de->d_name,
					      O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
			DIR *sd = sub >= 0 ? fdopendir(sub) : NULL;

			k->need->inodes++;
			k->need->min_blocks++; /* "." and ".." */
			if (sub >= 0 && !sd)
				close(sub);
			if (!sd)
				continue;
			if (n == cap) {
				size_t c = cap ? 2 * cap : 64;
				DIR **v = realloc(open, c * sizeof(*v));
				size_t *l = realloc(lens, c * sizeof(*l));
				if (v)
					open = v;
				if (l)
					lens = l;
				if (!v || !l) {
					k->nomem = 1;
					closedir(sd);
					continue;
				}
				cap = c;
			}
			lens[n] = k->path_len;
			if (count_path(k, k->path_len, de->d_name))
				k->nomem = 1;
			open[n++] = d; /* back to it when the subdirectory is done */
			d = sd;
			continue;
		}
		case S_IFLNK:
			if ((uint64_t)st.st_size > k->opts->symlink_max)
				note_too_long(k, de->d_name, (uint64_t)st.st_size);
			else if ((uint64_t)st.st_size > SUFS_FAST_SYMLINK_MAX)
				k->need->min_blocks++;
			break;
		case S_IFREG: case S_IFCHR: case S_IFBLK: case S_IFIFO:
			break;
		default:
			continue; /* sockets and the unknown are skipped */
		}
		if (st.st_nlink > 1) {
			if (link_find(&k->seen, st.st_dev, st.st_ino))
				continue; /* another name of a file counted */
			if (link_add(&k->seen, st.st_dev, st.st_ino, 1))
				k->nomem = 1;
		}
		k->need->inodes++;
	}
	free(open);
	free(lens);
}

int populate_count(const char *srcdir, const struct populate_opts *opts, int exact,
		   struct populate_need *need)
{
	struct counting k = { opts, need, exact, { NULL, 0, 0 }, 0, NULL, 0, 0 };
	int fd = open_source(AT_FDCWD, srcdir, O_RDONLY | O_DIRECTORY);

	memset(need, 0, sizeof(*need));
	if (count_path(&k, 0, srcdir))
		k.nomem = 1;
	if (fd >= 0 && !k.nomem)
		count_tree(&k, fd);
	else if (fd >= 0)
		close(fd);
	free(k.seen.tab);
	free(k.path);
	return k.nomem ? -ENOMEM : 0;
}

/* ---- copying ------------------------------------------------------------------ */

static int all_zero(const uint8_t *b, size_t n)
{
	return n == 0 || (b[0] == 0 && memcmp(b, b + 1, n - 1) == 0);
}

/* Write buf (file bytes [off, off + len)) leaving every file-system block
 * that is all zeros unwritten: it stays a hole. */
static int write_blocks(struct pop *p, uint32_t ino, uint64_t off, const uint8_t *buf, size_t len)
{
	size_t i = 0, run = 0;
	int in_run = 0, rc;

	while (i < len) {
		size_t piece = p->bsize - (size_t)((off + i) % p->bsize);
		int zero;

		if (piece > len - i)
			piece = len - i;
		zero = all_zero(buf + i, piece);
		if (!zero && !in_run) {
			run = i;
			in_run = 1;
		} else if (zero && in_run) {
			rc = sufs_write(p->fs, ino, off + run, buf + run, i - run);
			if (rc)
				return rc;
			p->stats->bytes += i - run;
			in_run = 0;
		}
		i += piece;
	}
	if (in_run) {
		rc = sufs_write(p->fs, ino, off + run, buf + run, len - run);
		if (rc)
			return rc;
		p->stats->bytes += len - run;
	}
	return 0;
}

/* Copy the source bytes [start, end). */
static int copy_range(struct pop *p, int fd, uint32_t ino, uint64_t start, uint64_t end)
{
	while (start < end) {
		size_t want = end - start < COPY_BUF_SIZE ? (size_t)(end - start) : COPY_BUF_SIZE;
		ssize_t n = pread(fd, p->buf, want, (off_t)start);
		int rc;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail_errno(p, "cannot read");
		}
		if (n == 0)
			break;  /* the file shrank while we copied it: the rest reads as zeros */
		rc = write_blocks(p, ino, start, p->buf, (size_t)n);
		if (rc)
			return fail(p, "cannot write", rc);
		start += (uint64_t)n;
	}
	return 0;
}

/* Copy a regular file's data, skipping the source's holes. */
static int copy_data(struct pop *p, int fd, uint32_t ino, const struct stat *st)
{
	uint64_t size = (uint64_t)st->st_size, pos = 0, bs = p->bsize;
	/* Fewer bytes allocated than the size: there are holes worth finding. */
	int sparse = (uint64_t)st->st_blocks * 512 < size;

	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	while (pos < size) {
		uint64_t data = pos, hole = size;
		int rc;

		if (sparse) {
			off_t d = lseek(fd, (off_t)pos, SEEK_DATA), h;
			if (d < 0 && errno == ENXIO)
				break;  /* nothing but a hole up to the end */
			if (d < 0 && errno != EINVAL)
				return fail_errno(p, "cannot find data");
			if (d >= 0) {
				h = lseek(fd, d, SEEK_HOLE);
				/* Whole blocks: the bits of a hole we read are zeros. */
				data = (uint64_t)d / bs * bs;
				if (data < pos)
					data = pos;
				if (h >= 0 && (uint64_t)h < size)
					hole = ((uint64_t)h + bs - 1) / bs * bs;
				if (hole > size || hole <= data)
					hole = size;
			} else {
				sparse = 0;  /* no SEEK_DATA here: copy everything */
			}
		}
		rc = copy_range(p, fd, ino, data, hole);
		if (rc)
			return rc;
		pos = hole;
	}
	return 0;
}

/* A source timestamp as it goes into the image. */
static void source_time(const struct populate_opts *o, const struct timespec *ts,
			int64_t *sec, uint32_t *nsec)
{
	*sec = ts->tv_sec;
	*nsec = (uint32_t)ts->tv_nsec;
	if (o->clamp && (*sec > o->clamp_sec || (*sec == o->clamp_sec && *nsec))) {
		*sec = o->clamp_sec;
		*nsec = 0;
	}
}

/* Set the source's atime and mtime in sa (and the mask bits for them). */
static void source_times(const struct populate_opts *o, const struct stat *st,
			 struct sufs_setattr *sa)
{
	sa->mask |= SUFS_SET_ATIME | SUFS_SET_MTIME;
	/* reading a symlink sets its access time, so for a reproducible image
	 * its atime cannot be an input: record its mtime there */
	if (o->clamp && S_ISLNK(st->st_mode))
		source_time(o, &st->st_mtim, &sa->atime, &sa->atime_ns);
	else
		source_time(o, &st->st_atim, &sa->atime, &sa->atime_ns);
	source_time(o, &st->st_mtim, &sa->mtime, &sa->mtime_ns);
}

/*
 * Give ino the extended attributes of the source entry NAME of directory
 * DFD (NAME "": DFD itself, read through it), ACLs included.  The copy is made with every
 * privilege (the image is ours), so trusted. and security. attributes go
 * as they come.  0, or the error after a message.
 */
static int xattrs_copy(struct pop *p, int dfd, const char *name, uint32_t ino)
{
	char src[64 + SUFS_NAME_MAX], *list, *n;
	ssize_t len, v;
	int rc = 0;

	const char *from = src;

	if (!*name)
		from = NULL; /* the directory itself: through its descriptor */
	else if (p->proc)
		xattr_source(src, sizeof(src), dfd, name);
	else
		from = p->path; /* no /proc: by the path, however long */
	list = xattr_names(from, dfd, &len);
	if (list && !p->xattr) {
		if (!p->xattr_warned)
			warnmsg("%s: extended attributes not copied: the file system has none "
				"(-O ^xattr)", path_shown(p));
		p->xattr_warned = 1;
		free(list);
		return 0;
	}
	for (n = list; !rc && n && n < list + len; n += strlen(n) + 1) {
		v = src_get(from, dfd, n, p->buf, SUFS_XATTR_SIZE_MAX);
		if (v < 0 && (errno == ENODATA || errno == EOPNOTSUPP))
			continue; /* gone since it was listed */
		if (v < 0) {
			rc = fail_errno(p, "cannot read extended attribute");
			break;
		}
		rc = sufs_setxattr(p->fs, ino, n, p->buf, (size_t)v, 0, NULL);
		if (rc == -EOPNOTSUPP) {
			warnmsg("%s: skipping extended attribute %s: not a namespace sufs keeps",
				path_shown(p), shown(n));
			rc = 0;
		} else if (rc) {
			rc = fail(p, "cannot set extended attribute", rc);
		}
	}
	free(list);
	return rc;
}

/* Give ino the source's times (and its size, which a trailing hole leaves
 * short of st_size).  The ctime is the file system's clock. */
static int set_times(struct pop *p, uint32_t ino, const struct stat *st, int set_size)
{
	struct sufs_setattr sa;
	int rc;

	memset(&sa, 0, sizeof(sa));
	source_times(p->opts, st, &sa);
	if (set_size) {
		sa.mask |= SUFS_SET_SIZE;
		sa.size = (uint64_t)st->st_size;
	}
	rc = sufs_setattr(p->fs, ino, &sa);
	if (rc)
		return fail(p, "cannot set attributes", rc);
	return 0;
}

static int copy_file(struct pop *p, int dfd, const char *name, const struct stat *st,
		     uint32_t dir, uint32_t *ino)
{
	struct sufs_cred cred = { st->st_uid, st->st_gid };
	struct sufs_stat sst;
	int rc, fd;

	rc = sufs_create(p->fs, dir, name, strlen(name), st->st_mode & 07777, &cred, ino);
	if (rc)
		return fail(p, "cannot create", rc);
	if (st->st_size > 0) {
		fd = open_source(dfd, name, O_RDONLY | O_NOFOLLOW);
		if (fd < 0)
			return fail_errno(p, "cannot open");
		rc = copy_data(p, fd, *ino, st);
		close(fd);
		if (rc)
			return rc;
	}
	rc = sufs_stat(p->fs, *ino, &sst);
	if (rc)
		return fail(p, "cannot stat the copy", rc);
	rc = xattrs_copy(p, dfd, name, *ino);
	if (rc)
		return rc;
	p->stats->files++;
	return set_times(p, *ino, st, sst.size < (uint64_t)st->st_size);
}

static int copy_symlink(struct pop *p, int dfd, const char *name, const struct stat *st,
			uint32_t dir, uint32_t *ino)
{
	struct sufs_cred cred = { st->st_uid, st->st_gid };
	size_t cap = (size_t)st->st_size + 1;
	char *target;
	ssize_t n;
	int rc;

	if (cap < 64)
		cap = 64;
	for (;;) {
		target = malloc(cap);
		if (!target)
			return fail(p, "cannot read link", -ENOMEM);
		n = readlinkat(dfd, name, target, cap);
		if (n < 0) {
			rc = fail_errno(p, "cannot read link");
			free(target);
			return rc;
		}
		if ((size_t)n < cap)
			break;
		free(target);   /* it grew since lstat: try a bigger buffer */
		cap *= 2;
	}
	target[n] = '\0';
	rc = sufs_symlink(p->fs, dir, name, strlen(name), target, &cred, ino);
	free(target);
	if (rc)
		return fail(p, "cannot create symlink", rc);
	rc = xattrs_copy(p, dfd, name, *ino);
	if (rc)
		return rc;
	p->stats->symlinks++;
	return set_times(p, *ino, st, 0);
}

static int copy_special(struct pop *p, int dfd, const char *name, const struct stat *st,
			uint32_t dir, uint32_t *ino)
{
	struct sufs_cred cred = { st->st_uid, st->st_gid };
	int rc;

	rc = sufs_mknod(p->fs, dir, name, strlen(name), st->st_mode & (S_IFMT | 07777),
			major(st->st_rdev), minor(st->st_rdev), &cred, ino);
	if (rc)
		return fail(p, "cannot create", rc);
	rc = xattrs_copy(p, dfd, name, *ino);
	if (rc)
		return rc;
	p->stats->specials++;
	return set_times(p, *ino, st, 0);
}

/* A directory being copied.  The walk keeps one per level, in an array
 * (not on the C stack: a tree may be deeper than the stack allows), each
 * with its open descriptor. */
struct level {
	int fd;                     /* -1: not a directory */
	struct names nl;            /* its names, sorted */
	size_t i;                   /* the next one to copy */
	uint32_t dir;               /* its copy */
	struct stat st;             /* its source's (the times go last) */
	size_t path_old;            /* the path's length before its name */
};

/* Begin the source directory fd (consumed), copied into dir: its names,
 * read through a second descriptor, whose stream (and buffer) goes once
 * they are read.  0, or the error after a message. */
static int level_start(struct pop *p, struct level *l, int fd, uint32_t dir)
{
	int rfd = dup(fd), rc;
	DIR *d = rfd >= 0 ? fdopendir(rfd) : NULL;

	l->i = 0;
	l->dir = dir;
	l->fd = -1;
	if (!d) {
		rc = fail_errno(p, "cannot read directory");
		if (rfd >= 0)
			close(rfd);
		close(fd);
		return rc;
	}
	rc = names_read(d, &l->nl);
	closedir(d);
	if (rc) {
		close(fd);
		return fail(p, "cannot read directory", rc);
	}
	l->fd = fd;
	return 0;
}

static void level_end(struct level *l)
{
	names_free(&l->nl);
	close(l->fd);
}

/* A subdirectory: made, and begun in *sub (its entries are the walk's). */
static int copy_subdir(struct pop *p, int dfd, const char *name, const struct stat *st,
		       uint32_t dir, struct level *sub)
{
	struct sufs_cred cred = { st->st_uid, st->st_gid };
	uint32_t ino;
	int rc, fd;

	/* Open first: an unreadable directory fails before anything is made. */
	fd = open_source(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd < 0)
		return fail_errno(p, "cannot open directory");
	rc = sufs_mkdir(p->fs, dir, name, strlen(name), st->st_mode & 07777, &cred, &ino);
	if (rc) {
		close(fd);
		return fail(p, "cannot create directory", rc);
	}
	rc = xattrs_copy(p, fd, "", ino);
	if (rc) {
		close(fd);
		return rc;
	}
	p->stats->dirs++;
	sub->st = *st;
	return level_start(p, sub, fd, ino);
}

/* One entry of a directory; a subdirectory is only begun, in *sub
 * (sub->fd stays -1 for anything else). */
static int copy_entry(struct pop *p, int dfd, const char *name, uint32_t dir,
		      struct level *sub)
{
	struct stat st;
	uint32_t ino = 0;
	int rc;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return fail_errno(p, "cannot stat");
	if (p->opts->skip_set && st.st_dev == p->opts->skip_dev && st.st_ino == p->opts->skip_ino) {
		warnmsg("%s: not copying the image into itself", path_shown(p));
		p->stats->skipped++;
		return 0;
	}
	if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) {
		uint32_t first = link_find(&p->links, st.st_dev, st.st_ino);
		if (first) {
			rc = sufs_link(p->fs, first, dir, name, strlen(name));
			if (rc)
				return fail(p, "cannot link", rc);
			p->stats->hardlinks++;
			return 0;
		}
	}
	switch (st.st_mode & S_IFMT) {
	case S_IFREG:
		rc = copy_file(p, dfd, name, &st, dir, &ino);
		break;
	case S_IFDIR:
		return copy_subdir(p, dfd, name, &st, dir, sub);
	case S_IFLNK:
		rc = copy_symlink(p, dfd, name, &st, dir, &ino);
		break;
	case S_IFCHR:
	case S_IFBLK:
	case S_IFIFO:
		rc = copy_special(p, dfd, name, &st, dir, &ino);
		break;
	case S_IFSOCK:
		warnmsg("%s: skipping socket", path_shown(p));
		p->stats->skipped++;
		return 0;
	default:
		warnmsg("%s: skipping file of unknown type 0%o", path_shown(p),
			(unsigned)(st.st_mode & S_IFMT));
		p->stats->skipped++;
		return 0;
	}
	if (rc)
		return rc;
	if (st.st_nlink > 1) {
		rc = link_add(&p->links, st.st_dev, st.st_ino, ino);
		if (rc)
			return fail(p, "cannot remember hard link", rc);
	}
	return 0;
}

/* Copy the tree below the source directory fd (consumed) into the root. */
static int copy_tree(struct pop *p, int fd)
{
	struct level *v = malloc(64 * sizeof(*v)), *l, sub;
	size_t n = 0, cap = 64, old;
	int rc;

	if (!v) {
		close(fd);
		return fail(p, "cannot copy", -ENOMEM);
	}
	rc = level_start(p, &v[0], fd, SUFS_ROOT_INO);
	if (!rc)
		n = 1;
	while (n && !rc) {
		l = &v[n - 1];
		if (l->i == l->nl.n) {
			/* done: a subdirectory's times last, for adding its
			 * entries changed them (the root's are the caller's) */
			level_end(l);
			if (--n) {
				rc = set_times(p, l->dir, &l->st, 0);
				path_pop(p, l->path_old);
				progress_update(&p->progress, ++p->entries);
			}
			continue;
		}
		if (path_push(p, l->nl.v[l->i], &old)) {
			rc = fail(p, "cannot copy", -ENOMEM);
			break;
		}
		sub.fd = -1;
		rc = copy_entry(p, l->fd, l->nl.v[l->i++], l->dir, &sub);
		if (!rc && sub.fd >= 0) {
			if (n == cap) {
				struct level *nv = realloc(v, 2 * cap * sizeof(*v));
				if (!nv) {
					level_end(&sub);
					rc = fail(p, "cannot copy", -ENOMEM);
					break;
				}
				v = nv;
				cap *= 2;
			}
			sub.path_old = old;
			v[n++] = sub; /* its entries next, under its path */
			continue;
		}
		path_pop(p, old);
		progress_update(&p->progress, ++p->entries);
	}
	while (n)
		level_end(&v[--n]);
	free(v);
	return rc;
}

int populate(struct sufs_fs *fs, const char *srcdir, const struct populate_opts *opts,
	     struct populate_stats *stats)
{
	struct pop p;
	struct stat st;
	struct sufs_setattr sa;
	int rc, fd;

	memset(&p, 0, sizeof(p));
	memset(stats, 0, sizeof(*stats));
	p.fs = fs;
	p.opts = opts;
	p.stats = stats;
	p.bsize = sufs_get_super(fs)->block_size;
	p.xattr = (sufs_get_super(fs)->features_ro_compat & SUFS_FEATURE_RO_XATTR) != 0;
	p.proc = access("/proc/self/fd", F_OK) == 0;
	p.path_len = strlen(srcdir);
	p.path_cap = p.path_len + 256;
	p.path = malloc(p.path_cap);
	p.buf = malloc(COPY_BUF_SIZE);
	if (!p.path || !p.buf) {
		free(p.path);
		free(p.buf);
		errmsg("%s: %s", shown(srcdir), sufs_strerror(-ENOMEM));
		return -ENOMEM;
	}
	memcpy(p.path, srcdir, p.path_len + 1);

	fd = open_source(AT_FDCWD, srcdir, O_RDONLY | O_DIRECTORY);
	if (fd < 0 || fstat(fd, &st)) {
		rc = fail_errno(&p, "cannot open directory");
		goto out;
	}
	rc = xattrs_copy(&p, fd, "", SUFS_ROOT_INO);
	if (rc)
		goto out;
	if (opts->progress)
		progress_start(&p.progress, "Copying files", opts->entries);
	rc = copy_tree(&p, fd);
	fd = -1;
	progress_end(&p.progress);
	if (rc)
		goto out;

	memset(&sa, 0, sizeof(sa));
	sa.mask = SUFS_SET_MODE;
	sa.mode = st.st_mode & 07777;
	if (!opts->keep_root_owner) {
		sa.mask |= SUFS_SET_UID | SUFS_SET_GID;
		sa.uid = st.st_uid;
		sa.gid = st.st_gid;
	}
	source_times(opts, &st, &sa);
	rc = sufs_setattr(fs, SUFS_ROOT_INO, &sa);
	if (rc)
		fail(&p, "cannot set attributes of the root directory", rc);
out:
	if (fd >= 0)
		close(fd);
	free(p.links.tab);
	free(p.path);
	free(p.shown_path);
	free(p.buf);
	return rc;
}
