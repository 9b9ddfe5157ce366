/*
 * crash.c - sufs-replay --crash-check: run a workload, then check every
 * state a crash could have left on the disk.
 *
 * 1. The run.  The image is read into memory and the workload runs on that
 *    copy through a recording device, which keeps every block written, in
 *    order, and where the barriers fell.  The image file is never written.
 *    Meanwhile the oracle (below) notes what fsync and sync made durable.
 *
 * 2. The states.  The writes between two barriers are an epoch.  A crash
 *    leaves every epoch before the one in flight on disk, and any subset of
 *    the writes of the one in flight (the disk may reorder them, and stop
 *    at any point).  For each epoch of n writes: every subset when n <= 10
 *    (the empty one is the epoch's boundary; the full one is the next
 *    epoch's), otherwise no write, each single write, each all but one,
 *    and `subsets` random subsets.  Then the final state, after unmount.
 *
 * 3. A state is a view, not a copy: a table of the newest version of each
 *    block (pointers into the log, else the base image), changed in place
 *    by the writes of the subset and by the repair's writes, and changed
 *    back afterwards.  A state costs the blocks it changes.
 *
 * 4. Each state is checked in-process:
 *      a. the full check, read-only, may find only leaks;
 *      b. after a leak-only repair, a full check is clean;
 *      c. the oracle: what was made durable before the crash is there.
 *    A violation prints the workload, the state and the findings, saves
 *    the state's image, and prints the command that checks it alone.
 *
 * The oracle.  fsync(P) returns once P's data, inode and names are on
 * disk; sync once everything is.  At that moment it records, for P (fsync)
 * or for every path of the tree (sync): the type, mode, size, link count
 * and a hash of the bytes (a symlink's target) and of the extended
 * attributes, the inodes along the path, and for a directory (sync) the
 * hash of its list of names and of its attributes.  A record holds
 * in every state that contains all epochs up to that barrier, and no write
 * made after an operation began that acted on one of its inodes (for a
 * list of names: on a name in that directory).
 */
#include "config.h"

#include "crash.h"
#include "sufs_test.h"
#include "random.h"
#include "script.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SMALL_EPOCH 10            /* every subset of an epoch this small */
#define MAX_DEPTH 64              /* inodes kept along a path */

/* ---- the log of the run ----------------------------------------------------- */

struct wr {
	uint64_t blk;
	uint8_t *data;            /* one block */
};

struct run_log {
	uint32_t bsize;
	uint64_t nblocks;
	uint8_t *base;            /* the image before the run */
	uint8_t *live;            /* the image the run writes */
	struct wr *w;
	size_t nw, capw;
	size_t *bar;              /* bar[j]: writes made before barrier j */
	size_t nbar, capbar;
	int error;                /* out of memory while recording */
};

static int grow(void *pp, size_t *cap, size_t need, size_t size)
{
	void **p = pp;
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

static int rec_read(struct sufs_dev *dev, uint64_t off, void *buf, size_t len)
{
	struct run_log *l = dev->priv;

	if (off > dev->size || len > dev->size - off)
		return -EIO;
	memcpy(buf, l->live + off, len);
	return 0;
}

/* Writes come in whole blocks (sufs_dev's contract), except the 1 KiB
 * superblock in a larger block: the log keeps the whole block as it
 * stands after the write. */
static int rec_write(struct sufs_dev *dev, uint64_t off, const void *buf, size_t len)
{
	struct run_log *l = dev->priv;
	uint64_t b, first = off / l->bsize, last;

	if (off > dev->size || len > dev->size - off)
		return -EIO;
	if (!len)
		return 0;
	memcpy(l->live + off, buf, len);
	last = (off + len - 1) / l->bsize;
	for (b = first; b <= last; b++) {
		uint8_t *copy = malloc(l->bsize);
		if (!copy || grow(&l->w, &l->capw, l->nw + 1, sizeof(*l->w))) {
			free(copy);
			l->error = ENOMEM;
			return -ENOMEM;
		}
		memcpy(copy, l->live + b * l->bsize, l->bsize);
		l->w[l->nw++] = (struct wr){ b, copy };
	}
	return 0;
}

static int rec_barrier(struct sufs_dev *dev)
{
	struct run_log *l = dev->priv;

	if (grow(&l->bar, &l->capbar, l->nbar + 1, sizeof(*l->bar))) {
		l->error = ENOMEM;
		return -ENOMEM;
	}
	l->bar[l->nbar++] = l->nw;
	return 0;
}

static void nop_close(struct sufs_dev *dev)
{
	(void)dev; /* the memory belongs to the harness */
}

static const struct sufs_dev_ops rec_ops = {
	rec_read, rec_write, rec_barrier, NULL, nop_close, NULL,
};

static struct sufs_dev *new_dev(const struct sufs_dev_ops *ops, void *priv, uint64_t size,
				int writable)
{
	struct sufs_dev *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->ops = ops;
	d->priv = priv;
	d->size = size;
	d->writable = writable;
	d->name = strdup("crash state");
	if (!d->name) {
		free(d);
		return NULL;
	}
	return d;
}

/* ---- the oracle --------------------------------------------------------------- */

/* What a record says: path names this (type, mode, size, links, bytes);
 * path is a directory with these names; inode ino is this (by number);
 * the entry `path` (a name) in directory parent names inode ino; inode
 * ino, made durable and then renamed (once or more), is named by one of
 * the names it had since (its aliases): rule 3 keeps one of them. */
enum exp_kind { EXP_PATH, EXP_NAMES, EXP_INODE, EXP_ENTRY, EXP_RENAMED };

struct alias {
	uint32_t dir;
	char *name;
};

struct expect {
	enum exp_kind kind;
	char *path;                       /* EXP_ENTRY: the name */
	struct alias *aliases;            /* EXP_RENAMED */
	unsigned naliases;
	uint32_t parent;                  /* EXP_ENTRY: the directory */
	uint32_t chain[MAX_DEPTH];        /* inodes from the root's to the path's */
	unsigned depth;
	uint32_t ino, mode, links;        /* (links: not for directories) */
	uint64_t size, hash;              /* (size: not for directories) */
	unsigned barrier;                 /* holds once this many barriers passed */
	size_t until;                     /* ... in states of fewer writes than this */
};

/* A snapshot taken in the run: a hash of the whole tree when it was taken
 * (its view must show that tree in every state that has it), and from
 * when on it must be there: every state past the barrier that wrote its
 * slot has it, until its deletion begins (a crash never loses a snapshot
 * whole, nor leaves one that a leak repair would remove). */
struct snaprec {
	char *name;
	uint64_t hash;
	unsigned barrier;                 /* the barrier that wrote its slot */
	size_t until;                     /* writes before its deletion began */
};

struct oracle {
	struct expect *e;
	size_t n, cap;
	struct snaprec *snaps;
	size_t nsnaps, capsnaps;
	uint8_t *buf;                     /* for reading files */
	size_t bufsize;
};

#define FNV_START 0xcbf29ce484222325u

static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
	const uint8_t *s = p;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ s[i]) * 0x100000001b3u;
	return h;
}

/* Mix an inode's extended attributes into *h: each name and value, in
 * the order the library lists them (the order they are kept in). */
static int xattr_hash(struct sufs_fs *fs, uint32_t ino, uint64_t *h)
{
	char *list = NULL, *name;
	uint8_t *value = NULL;
	size_t len = 0, vlen;
	int rc = sufs_listxattr(fs, ino, NULL, 0, &len, NULL);

	if (rc || !len)
		return rc;
	if (!(list = malloc(len)) || !(value = malloc(SUFS_XATTR_SIZE_MAX)))
		rc = -ENOMEM;
	if (!rc)
		rc = sufs_listxattr(fs, ino, list, len, &len, NULL);
	for (name = list; !rc && name < list + len; name += strlen(name) + 1) {
		rc = sufs_getxattr(fs, ino, name, value, SUFS_XATTR_SIZE_MAX, &vlen, NULL);
		*h = fnv(*h, name, strlen(name) + 1);
		*h = fnv(*h, &vlen, sizeof(vlen));
		*h = fnv(*h, value, rc ? 0 : vlen);
	}
	free(list);
	free(value);
	return rc;
}

/* What a file holds: its bytes, a symlink's target, nothing for others;
 * and its extended attributes. */
static int content_hash(struct sufs_fs *fs, struct oracle *o, const struct sufs_stat *st,
			uint64_t *out)
{
	uint64_t h = FNV_START, off;
	size_t done;
	int rc = xattr_hash(fs, st->ino, &h);

	if (rc)
		return rc;
	if (S_ISLNK(st->mode)) {
		char target[4097];
		rc = sufs_readlink(fs, st->ino, target, sizeof(target), &done);
		if (rc)
			return rc;
		*out = fnv(h, target, done);
		return 0;
	}
	if (S_ISREG(st->mode)) {
		for (off = 0; off < st->size; off += done) {
			rc = sufs_read(fs, st->ino, off, o->buf, o->bufsize, &done);
			if (rc)
				return rc;
			if (!done)
				return -EIO; /* shorter than its size */
			h = fnv(h, o->buf, done);
		}
	}
	*out = h;
	return 0;
}

/* The names in directory dir, '.', '..', the root's lost+found (where a
 * repair puts what it finds) and .snap (the snapshots, which the library
 * changes as it copies) left out, hashed in a stable order. */
struct names {
	char **v;
	size_t n, cap;
	int root;
};

static int names_fn(void *arg, const char *name, size_t len, uint32_t ino, unsigned ftype)
{
	struct names *s = arg;
	char *copy;

	(void)ino;
	(void)ftype;
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.') ||
	    (s->root && len == 10 && memcmp(name, "lost+found", 10) == 0) ||
	    (s->root && len == 5 && memcmp(name, ".snap", 5) == 0))
		return 0;
	if (grow(&s->v, &s->cap, s->n + 1, sizeof(*s->v)) || !(copy = strndup(name, len)))
		return -ENOMEM;
	s->v[s->n++] = copy;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int names_hash(struct sufs_fs *fs, uint32_t dir, uint64_t *out)
{
	struct names s = { .root = dir == sufs_get_super(fs)->root_ino };
	uint64_t h = FNV_START;
	size_t i;
	int rc = xattr_hash(fs, dir, &h);

	if (!rc)
		rc = sufs_readdir(fs, dir, names_fn, &s);

	if (!rc) {
		if (s.n)
			qsort(s.v, s.n, sizeof(*s.v), cmp_str);
		for (i = 0; i < s.n; i++)
			h = fnv(h, s.v[i], strlen(s.v[i]) + 1);
		*out = h;
	}
	for (i = 0; i < s.n; i++)
		free(s.v[i]);
	free(s.v);
	return rc;
}

/* The inodes along an absolute path from the root's, name by name without
 * following symlinks: 1 when found, 0 when a component is missing, -1 when
 * the path goes through a symlink or is too deep (then the oracle leaves it
 * alone). */
static int path_chain(struct sufs_fs *fs, const char *path, uint32_t *chain, unsigned *depth)
{
	uint32_t ino = sufs_get_super(fs)->root_ino;
	const char *p = path, *e;
	struct sufs_stat st;

	chain[0] = ino;
	*depth = 1;
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			return 1;
		for (e = p; *e && *e != '/'; e++)
			;
		if (sufs_stat(fs, ino, &st) || !S_ISDIR(st.mode) || *depth == MAX_DEPTH ||
		    (e - p == 1 && p[0] == '.') || (e - p == 2 && p[0] == '.' && p[1] == '.'))
			return -1;
		if (sufs_lookup(fs, ino, p, (size_t)(e - p), &ino))
			return 0;
		chain[(*depth)++] = ino;
		p = e;
	}
}

static void aliases_free(struct alias *v, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

static int expect_add(struct oracle *o, const struct expect *x)
{
	size_t i;

	/* a record that still holds and says the same holds from earlier */
	for (i = 0; i < o->n; i++) {
		const struct expect *y = &o->e[i];
		if (y->until == SIZE_MAX && y->kind == x->kind && x->kind != EXP_RENAMED &&
		    y->ino == x->ino && y->parent == x->parent && y->mode == x->mode &&
		    y->links == x->links &&
		    y->size == x->size && y->hash == x->hash && strcmp(y->path, x->path) == 0)
			return 0;
	}
	if (grow(&o->e, &o->cap, o->n + 1, sizeof(*o->e)))
		return -ENOMEM;
	o->e[o->n] = *x;
	o->e[o->n].path = strdup(x->path);
	if (!o->e[o->n].path)
		return -ENOMEM;
	o->n++;  /* the aliases, if any, are the record's now */
	return 0;
}

/* What the inode at the end of x's chain holds now. */
static int expect_attrs(struct sufs_fs *fs, struct oracle *o, struct expect *x)
{
	struct sufs_stat st;
	int rc = sufs_stat(fs, x->ino, &st);

	if (rc)
		return rc;
	x->mode = st.mode;
	if (S_ISDIR(st.mode))
		return 0;
	x->links = st.links;
	x->size = st.size;
	return content_hash(fs, o, &st, &x->hash);
}

static int expect_path(struct sufs_fs *fs, struct oracle *o, const char *path, int names,
		       unsigned barrier);

/*
 * fsync(path) promises the file's inode and bytes (checked by its number),
 * its name in its directory, and for a directory the whole path up to the
 * root (fsync walks up through "..").
 */
static int expect_fsync(struct sufs_fs *fs, struct oracle *o, const char *path,
			unsigned barrier)
{
	struct expect x = { .kind = EXP_INODE, .barrier = barrier, .until = SIZE_MAX };
	const char *name;
	size_t len;
	char *copy;
	int rc = path_chain(fs, path, x.chain, &x.depth);

	if (rc <= 0 || x.depth < 2)
		return 0; /* through a symlink, or the root: a sync checks it */
	x.ino = x.chain[x.depth - 1];
	rc = expect_attrs(fs, o, &x);
	if (rc || S_ISLNK(x.mode))
		return rc; /* fsync followed the symlink: its target is made durable */
	if (S_ISDIR(x.mode))
		return expect_path(fs, o, path, 0, barrier);
	/* by number: the chain is the inode alone */
	x.path = (char *)path;
	x.chain[0] = x.ino;
	x.depth = 1;
	rc = expect_add(o, &x);
	if (rc || sufs_namei_parent(fs, sufs_get_super(fs)->root_ino, path, &x.parent, &name, &len))
		return rc;
	copy = strndup(name, len);
	if (!copy)
		return -ENOMEM;
	x.kind = EXP_ENTRY;
	x.path = copy;
	x.chain[0] = x.parent;
	x.chain[1] = x.ino;
	x.depth = 2;
	x.mode = x.links = 0;
	x.size = x.hash = 0;
	rc = expect_add(o, &x);
	free(copy);
	return rc;
}

/* Record path as it is now (kind EXP_PATH) and, for a directory at sync,
 * its list of names. */
static int expect_path(struct sufs_fs *fs, struct oracle *o, const char *path, int names,
		       unsigned barrier)
{
	struct expect x = { .kind = EXP_PATH, .barrier = barrier, .until = SIZE_MAX };
	int rc = path_chain(fs, path, x.chain, &x.depth);

	if (rc <= 0)
		return 0;
	x.path = (char *)path;
	x.ino = x.chain[x.depth - 1];
	rc = expect_attrs(fs, o, &x);
	if (!rc)
		rc = expect_add(o, &x);
	if (rc || !names || !S_ISDIR(x.mode))
		return rc;
	x.kind = EXP_NAMES;
	x.mode = x.links = 0;
	x.size = 0;
	rc = names_hash(fs, x.ino, &x.hash);
	return rc ? rc : expect_add(o, &x);
}

/* sync: every path of the tree. */
struct walk {
	struct sufs_fs *fs;
	struct oracle *o;
	unsigned barrier;
	char *path;
	size_t len, cap;
	int rc;
	uint64_t *hash;                   /* tree_hash(): hash instead of record */
};

static int walk_dir(struct walk *w, uint32_t dir);

static int walk_fn(void *arg, const char *name, size_t len, uint32_t ino, unsigned ftype)
{
	struct walk *w = arg;
	size_t keep = w->len;

	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.') ||
	    (w->len == 0 && len == 5 && memcmp(name, ".snap", 5) == 0))
		return 0;
	if (grow(&w->path, &w->cap, w->len + len + 2, 1))
		return -ENOMEM;
	w->path[w->len++] = '/';
	memcpy(w->path + w->len, name, len);
	w->len += len;
	w->path[w->len] = 0;
	if (w->hash) {
		struct expect x = { .kind = EXP_PATH, .ino = ino };
		w->rc = expect_attrs(w->fs, w->o, &x);
		*w->hash = fnv(*w->hash, w->path, w->len + 1);
		*w->hash = fnv(*w->hash, &x.mode, sizeof(x.mode));
		*w->hash = fnv(*w->hash, &x.links, sizeof(x.links));
		*w->hash = fnv(*w->hash, &x.size, sizeof(x.size));
		*w->hash = fnv(*w->hash, &x.hash, sizeof(x.hash));
	} else {
		w->rc = expect_path(w->fs, w->o, w->path, 1, w->barrier);
	}
	if (!w->rc && ftype == SUFS_FT_DIR)
		w->rc = walk_dir(w, ino);
	w->len = keep;
	w->path[keep] = 0;
	return w->rc;
}

static int walk_dir(struct walk *w, uint32_t dir)
{
	return sufs_readdir(w->fs, dir, walk_fn, w);
}

static int expect_tree(struct sufs_fs *fs, struct oracle *o, unsigned barrier)
{
	struct walk w = { .fs = fs, .o = o, .barrier = barrier };
	int rc;

	if (grow(&w.path, &w.cap, 2, 1))
		return -ENOMEM;
	strcpy(w.path, "/");
	rc = expect_path(fs, o, "/", 1, barrier);
	w.path[0] = 0;
	if (!rc)
		rc = walk_dir(&w, sufs_get_super(fs)->root_ino);
	free(w.path);
	return rc;
}

/* The whole tree (but /.snap): every path, its type, mode, links, size
 * and bytes, in directory order. */
static int tree_hash(struct sufs_fs *fs, struct oracle *o, uint64_t *out)
{
	struct walk w = { .fs = fs, .o = o };
	int rc;

	*out = FNV_START;
	w.hash = out;
	if (grow(&w.path, &w.cap, 2, 1))
		return -ENOMEM;
	w.path[0] = 0;
	rc = walk_dir(&w, sufs_get_super(fs)->root_ino);
	free(w.path);
	return rc ? rc : w.rc;
}

static int snaprec_add(struct oracle *o, const char *name, uint64_t hash, unsigned barrier)
{
	if (grow(&o->snaps, &o->capsnaps, o->nsnaps + 1, sizeof(*o->snaps)))
		return -ENOMEM;
	o->snaps[o->nsnaps].name = strdup(name);
	if (!o->snaps[o->nsnaps].name)
		return -ENOMEM;
	o->snaps[o->nsnaps].hash = hash;
	o->snaps[o->nsnaps].until = SIZE_MAX;
	o->snaps[o->nsnaps++].barrier = barrier;
	return 0;
}

/* An operation is about to act on these inodes (its paths' own) and on the
 * names in these directories (its paths' parents): the records of paths
 * through those inodes, and of the lists of names of those directories,
 * stop holding for states with any write from now on (writes so far: nw);
 * of the first nrecords records (those the operation found). */
static void expect_end(struct oracle *o, const uint32_t *inos, unsigned ninos,
		       const uint32_t *dirs, unsigned ndirs, size_t nw, size_t nrecords)
{
	size_t i;
	unsigned j, k;

	for (i = 0; i < nrecords; i++) {
		struct expect *x = &o->e[i];
		if (x->until != SIZE_MAX)
			continue;
		if (x->kind == EXP_NAMES)
			for (j = 0; j < ndirs; j++)
				if (dirs[j] == x->ino)
					x->until = nw;
		for (j = 0; j < ninos; j++)
			for (k = 0; k < x->depth; k++)
				if (x->chain[k] == inos[j])
					x->until = nw;
	}
}

static void oracle_free(struct oracle *o)
{
	size_t i;

	for (i = 0; i < o->n; i++) {
		free(o->e[i].path);
		aliases_free(o->e[i].aliases, o->e[i].naliases);
	}
	free(o->e);
	for (i = 0; i < o->nsnaps; i++)
		free(o->snaps[i].name);
	free(o->snaps);
	free(o->buf);
}

/* ---- the run ------------------------------------------------------------------- */

struct harness {
	const struct crash_opts *o;
	struct run_log log;
	struct oracle oracle;
	const char *workload;             /* for messages */
	uint64_t operations;
	uint64_t *reported;               /* violations reported in full, by every job */
};

static int alias_add(struct alias **v, unsigned *n, uint32_t dir, const char *name, size_t len)
{
	struct alias *p = realloc(*v, (*n + 1) * sizeof(**v));

	if (!p)
		return -ENOMEM;
	*v = p;
	p[*n].dir = dir;
	p[*n].name = strndup(name, len);
	if (!p[*n].name)
		return -ENOMEM;
	(*n)++;
	return 0;
}

/*
 * A rename of a file made durable: from now on one of the names it had
 * since it was (the old one, the new one, and those of renames before this
 * one that no sync has settled) names it in every state, until another
 * operation acts on it.  Called before the records of the line end, so
 * that it sees those of earlier renames.  0 when the file is not durable
 * (no record of it holds) or the rename will fail.
 */
static int expect_renamed(struct oracle *o, struct sufs_fs *fs, const char *from, const char *to,
			  unsigned barrier)
{
	struct expect x = { .kind = EXP_RENAMED, .barrier = barrier, .until = SIZE_MAX,
			    .depth = 1, .path = (char *)"" };
	uint32_t root = sufs_get_super(fs)->root_ino, dir, dir2;
	const char *name, *name2;
	size_t len, len2, i;
	unsigned k;
	int durable = 0, rc;

	if (sufs_namei(fs, root, from, 0, &x.ino) ||
	    sufs_namei_parent(fs, root, from, &dir, &name, &len) ||
	    sufs_namei_parent(fs, root, to, &dir2, &name2, &len2))
		return 0;
	x.chain[0] = x.ino;
	rc = alias_add(&x.aliases, &x.naliases, dir, name, len);
	if (!rc)
		rc = alias_add(&x.aliases, &x.naliases, dir2, name2, len2);
	for (i = 0; i < o->n && !rc; i++) {
		const struct expect *y = &o->e[i];
		if (y->until != SIZE_MAX || y->kind == EXP_NAMES || y->ino != x.ino)
			continue;
		durable = 1;
		for (k = 0; k < y->naliases && !rc; k++)
			rc = alias_add(&x.aliases, &x.naliases, y->aliases[k].dir,
				       y->aliases[k].name, strlen(y->aliases[k].name));
	}
	if (!rc && durable)
		rc = expect_add(o, &x);
	if (rc || !durable)
		aliases_free(x.aliases, x.naliases);
	return rc;
}

/* Before a line runs: what it will act on. */
static int before_line(struct harness *h, struct sufs_fs *fs, const char *line)
{
	struct script_line sl;
	uint32_t inos[4], dirs[2], root = sufs_get_super(fs)->root_ino, ino;
	size_t n;
	unsigned ninos = 0, ndirs = 0;
	const char *name;
	size_t len;
	int i;

	int rc = 0;

	if (script_line_parse(line, &sl) || !sl.op || strcmp(sl.op, "fsync") == 0) {
		script_line_free(&sl);
		return 0;
	}
	if (strcmp(sl.op, "snapdelete") == 0 && sl.arg0) {
		size_t k;
		for (k = 0; k < h->oracle.nsnaps; k++)
			if (h->oracle.snaps[k].until == SIZE_MAX &&
			    strcmp(h->oracle.snaps[k].name, sl.arg0) == 0)
				h->oracle.snaps[k].until = h->log.nw;
	}
	if (strcmp(sl.op, "snapshot") == 0 || strcmp(sl.op, "snapdelete") == 0) {
		/* it acts on /.snap, and on the root when it makes /.snap */
		inos[ninos++] = dirs[ndirs++] = root;
		if (!sufs_namei(fs, root, "/.snap", 0, &ino))
			inos[ninos++] = dirs[ndirs++] = ino;
	}
	for (i = 0; i < sl.npaths; i++) {
		if (!sufs_namei(fs, root, sl.path[i], 0, &ino))
			inos[ninos++] = ino;
		if (!sufs_namei(fs, root, sl.path[i], 1, &ino))
			inos[ninos++] = ino;
		if (!sufs_namei_parent(fs, root, sl.path[i], &ino, &name, &len))
			dirs[ndirs++] = ino;
	}
	/* the rename's record goes in after the others end, so that it
	 * holds on; it counts as the same operation's: it ends none */
	n = h->oracle.n;
	if (strcmp(sl.op, "rename") == 0 && sl.npaths == 2)
		rc = expect_renamed(&h->oracle, fs, sl.path[0], sl.path[1], (unsigned)h->log.nbar);
	expect_end(&h->oracle, inos, ninos, dirs, ndirs, h->log.nw, n);
	script_line_free(&sl);
	return rc;
}

/* After a line ran: what it made durable. */
static int after_line(struct harness *h, struct sufs_fs *fs, const char *line,
		      const struct script_ctx *ctx)
{
	struct script_line sl;
	unsigned barrier = (unsigned)h->log.nbar;
	int rc = 0;

	if (!ctx->ran || ctx->rc)
		return 0;
	if (script_line_parse(line, &sl) || !sl.op)
		rc = 0;
	else if (strcmp(sl.op, "sync") == 0)
		rc = expect_tree(fs, &h->oracle, barrier);
	else if (strcmp(sl.op, "fsync") == 0 && sl.path[0][0] == '/')
		rc = expect_fsync(fs, &h->oracle, sl.path[0], barrier);
	else if (strcmp(sl.op, "snapshot") == 0) {
		uint64_t hash;
		rc = tree_hash(fs, &h->oracle, &hash);
		if (!rc)
			rc = snaprec_add(&h->oracle, sl.arg0, hash, barrier);
	}
	script_line_free(&sl);
	return rc;
}

static int read_image(struct harness *h)
{
	struct sufs_dev *dev;
	struct sufs_fs *fs;
	struct sufs_super sb;
	int rc = sufs_dev_open(h->o->image, 0, &dev);

	/* opened read-only first: refused for the same reasons, with the
	 * same words, as a run without --crash-check */
	if (!rc && (rc = sufs_open_dev(dev, 0, 0, &fs)) != 0)
		sufs_dev_close(dev);
	if (rc) {
		errmsg("cannot open %s: %s", shown(h->o->image), open_error(h->o->image, rc));
		return CRASH_EXIT_OPEN;
	}
	sb = *sufs_get_super(fs);
	h->log.bsize = sb.block_size;
	h->log.nblocks = sb.blocks_count;
	h->log.base = malloc(sb.blocks_count * sb.block_size);
	h->log.live = malloc(sb.blocks_count * sb.block_size);
	rc = h->log.base && h->log.live ? 0 : -ENOMEM;
	if (!rc)
		rc = sufs_dev_read(dev, 0, h->log.base, sb.blocks_count * sb.block_size);
	sufs_close(fs);
	if (rc) {
		errmsg("reading %s: %s", shown(h->o->image), sufs_strerror(rc));
		return rc == -ENOMEM ? CRASH_EXIT_IO : CRASH_EXIT_OPEN;
	}
	memcpy(h->log.live, h->log.base, sb.blocks_count * sb.block_size);
	return 0;
}

/* The next line of the workload, or NULL at its end. */
struct lines {
	FILE *f;
	struct random_gen *gen;
	uint64_t left;
	char *buf;
	size_t cap;
	int nomem;                /* the generator ran out of memory */
	int nul;                  /* the line read has a NUL byte in it */
};

static const char *next_line(struct lines *s)
{
	const char *line;

	if (!s->gen) {
		ssize_t len = getline(&s->buf, &s->cap, s->f);
		if (len < 0)
			return NULL;
		s->nul = strlen(s->buf) != (size_t)len; /* the parser would see less */
		return s->buf;
	}
	if (!s->left)
		return NULL;
	s->left--;
	line = random_next(s->gen);
	s->nomem = !line;
	return line;
}

/* The snapshots the image has before the run: each must go on showing
 * what it shows now. */
static int snaps_before(struct harness *h, struct sufs_fs *fs)
{
	struct sufs_snap_info list[SUFS_SNAP_SLOTS];
	struct sufs_dev *sdev;
	struct sufs_fs *sfs;
	uint64_t hash;
	unsigned n, i;
	int rc = sufs_snap_list(fs, list, &n);

	for (i = 0; i < n && !rc; i++) {
		rc = sufs_snap_open_dev(fs, list[i].name, &sdev);
		if (rc)
			break;
		rc = sufs_open_dev(sdev, 0, 0, &sfs);
		if (rc) {
			sufs_dev_close(sdev);
			break;
		}
		rc = tree_hash(sfs, &h->oracle, &hash);
		sufs_close(sfs);
		if (!rc)
			rc = snaprec_add(&h->oracle, list[i].name, hash, 0);
	}
	return rc;
}

static int run_workload(struct harness *h)
{
	const struct crash_opts *o = h->o;
	struct lines src = { 0 };
	struct script_ctx ctx;
	struct sufs_dev *dev = new_dev(&rec_ops, &h->log, h->log.nblocks * h->log.bsize, 1);
	struct sufs_fs *fs;
	char err[1024];
	const char *line;
	uint64_t lineno = 0;
	int rc, st = 0;

	if (!dev)
		return CRASH_EXIT_IO;
	if (o->script) {
		src.f = strcmp(o->script, "-") ? fopen(o->script, "re") : stdin;
		if (!src.f) {
			errmsg("cannot read %s: %s", shown(o->script), strerror(errno));
			sufs_dev_close(dev);
			return CRASH_EXIT_FILE;
		}
	}
	rc = sufs_open_dev(dev, SUFS_OPEN_RDWR, 0, &fs);
	if (rc) {
		errmsg("cannot open %s: %s", shown(o->image), open_error(o->image, rc));
		sufs_dev_close(dev);
		if (src.f && src.f != stdin)
			fclose(src.f);
		return CRASH_EXIT_OPEN;
	}
	rc = sufs_set_mode(fs, o->mode);
	if (!rc)
		rc = sufs_test_break_rule(fs, o->broken_rule);
	sufs_set_writeback(fs, 50, 0);
	if (o->cache_bytes)
		sufs_set_cache_size(fs, o->cache_bytes);
	if (o->fixed_time)
		sufs_set_clock(fs, o->time_sec, 0);
	if (!rc && !o->script) {
		rc = random_open(fs, o->seed, &src.gen);
		src.left = o->random_ops;
	}
	if (!rc)
		rc = snaps_before(h, fs);
	if (rc) {
		errmsg("%s: %s", shown(o->image), sufs_strerror(rc));
		sufs_abandon(fs);
		return CRASH_EXIT_IO;
	}
	script_ctx_init(&ctx, fs, 0, 0);
	while (!st && (line = next_line(&src)) != NULL) {
		lineno++;
		if (src.nul) {
			errmsg("%s:%" PRIu64 ": a NUL byte in the line", shown(h->workload), lineno);
			st = CRASH_EXIT_SCRIPT;
			break;
		}
		if ((rc = before_line(h, fs, line)) != 0) {
			errmsg("the oracle, before line %" PRIu64 ": %s", lineno, sufs_strerror(rc));
			st = CRASH_EXIT_IO;
		} else if (script_exec_line(fs, line, &ctx, err, sizeof(err)) != SCRIPT_OK) {
			errmsg("%s:%" PRIu64 ": %s", shown(h->workload), lineno, err);
			st = CRASH_EXIT_SCRIPT;
		} else if ((rc = after_line(h, fs, line, &ctx)) != 0) {
			errmsg("the oracle, after line %" PRIu64 ": %s", lineno, sufs_strerror(rc));
			st = CRASH_EXIT_IO;
		} else if (h->log.error) {
			errmsg("recording the writes: %s", strerror(h->log.error));
			st = CRASH_EXIT_IO;
		}
	}
	if (!st && !src.gen && ferror(src.f)) {
		errmsg("reading %s: %s", shown(h->workload), strerror(errno));
		st = CRASH_EXIT_FILE;
	}
	if (!st && src.nomem) {
		errmsg("%s", strerror(ENOMEM));
		st = CRASH_EXIT_IO;
	}
	h->operations = ctx.operations;
	random_close(src.gen);
	free(src.buf);
	if (src.f && src.f != stdin)
		fclose(src.f);
	if (st) {
		sufs_abandon(fs);
		return st;
	}
	/* unmount: what the final state is */
	rc = sufs_sync(fs);
	if (!rc)
		rc = expect_tree(fs, &h->oracle, (unsigned)h->log.nbar);
	if (rc) {
		errmsg("writing back: %s", sufs_strerror(rc));
		sufs_abandon(fs);
		return CRASH_EXIT_IO;
	}
	rc = sufs_close(fs);
	if (rc || h->log.error) {
		errmsg("closing: %s", rc ? sufs_strerror(rc) : strerror(h->log.error));
		return CRASH_EXIT_IO;
	}
	return 0;
}

/* ---- the states ----------------------------------------------------------------- */

enum skind { S_MASK, S_SINGLE, S_ALLBUT, S_RANDOM, S_FINAL };

struct state {
	uint32_t epoch;
	uint8_t kind;             /* enum skind */
	uint64_t arg;             /* mask, write or random subset number */
};

/* Epoch e: writes [ep_first(e), ep_end(e)); epochs 0 .. nbar. */
static size_t ep_first(const struct run_log *l, size_t e)
{
	return e ? l->bar[e - 1] : 0;
}
static size_t ep_end(const struct run_log *l, size_t e)
{
	return e < l->nbar ? l->bar[e] : l->nw;
}

struct states {
	struct state *s;
	size_t n, cap;
};

static int state_add(struct states *ss, uint32_t epoch, enum skind kind, uint64_t arg)
{
	if (grow(&ss->s, &ss->cap, ss->n + 1, sizeof(*ss->s)))
		return -ENOMEM;
	ss->s[ss->n++] = (struct state){ epoch, (uint8_t)kind, arg };
	return 0;
}

static int enumerate(const struct run_log *l, unsigned subsets, struct states *ss)
{
	size_t e, n;
	uint64_t i;
	int rc = 0;

	for (e = 0; e <= l->nbar && !rc; e++) {
		n = ep_end(l, e) - ep_first(l, e);
		if (n == 0)
			continue; /* the same state as the previous boundary */
		if (n <= SMALL_EPOCH) {
			for (i = 0; i + 1 < (1u << n) && !rc; i++)
				rc = state_add(ss, (uint32_t)e, S_MASK, i);
			continue;
		}
		rc = state_add(ss, (uint32_t)e, S_MASK, 0);
		for (i = 0; i < n && !rc; i++)
			rc = state_add(ss, (uint32_t)e, S_SINGLE, i);
		for (i = 0; i < n && !rc; i++)
			rc = state_add(ss, (uint32_t)e, S_ALLBUT, i);
		for (i = 0; i < subsets && !rc; i++)
			rc = state_add(ss, (uint32_t)e, S_RANDOM, i);
	}
	return rc ? rc : state_add(ss, (uint32_t)l->nbar, S_FINAL, 0);
}

static uint64_t mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15u;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* Is write i (of n in the epoch) in the subset? */
static int in_subset(const struct state *s, uint64_t seed, size_t i, size_t n)
{
	switch (s->kind) {
	case S_MASK:
		return i < 64 && ((s->arg >> i) & 1);
	case S_SINGLE:
		return i == s->arg;
	case S_ALLBUT:
		return i != s->arg;
	case S_RANDOM:
		return mix(seed ^ mix(((uint64_t)s->epoch << 32) ^ (s->arg << 12) ^ i)) & 1;
	default:
		return i < n;
	}
}

/* "12:m5" (writes of epoch 12 in mask 5), "12:s3", "12:a3", "12:r7", "final" */
static void state_name(const struct state *s, char *buf, size_t size)
{
	static const char code[] = "msar";

	if (s->kind == S_FINAL)
		snprintf(buf, size, "final");
	else
		snprintf(buf, size, "%" PRIu32 ":%c%" PRIu64, s->epoch, code[s->kind], s->arg);
}

/* Parse a state's name (as a violation names it) into *s: 0, or -1 when
 * it is malformed or, given the run's log l, not a state of the run.  With
 * l NULL only the form is judged. */
static int state_parse(const char *text, const struct run_log *l, struct state *s)
{
	const char *colon = strchr(text, ':'), *code = "msar", *k;
	uint64_t e, arg;
	char ebuf[32];
	size_t n;

	if (strcmp(text, "final") == 0) {
		*s = (struct state){ l ? (uint32_t)l->nbar : 0, S_FINAL, 0 };
		return 0;
	}
	if (!colon || (size_t)(colon - text) >= sizeof(ebuf) || !colon[1] ||
	    !(k = strchr(code, colon[1])))
		return -1;
	memcpy(ebuf, text, (size_t)(colon - text));
	ebuf[colon - text] = 0;
	if (parse_u64(ebuf, &e) || parse_u64(colon + 2, &arg) || e > UINT32_MAX)
		return -1;
	if (!l) {
		*s = (struct state){ (uint32_t)e, (uint8_t)(k - code), arg };
		return 0;
	}
	if (e > l->nbar)
		return -1;
	n = ep_end(l, e) - ep_first(l, e);
	if ((k - code == S_MASK && (n >= 64 || arg >= (1ull << n))) ||
	    ((k - code == S_SINGLE || k - code == S_ALLBUT) && arg >= n))
		return -1;
	*s = (struct state){ (uint32_t)e, (uint8_t)(k - code), arg };
	return 0;
}

/* ---- the view of one state --------------------------------------------------------- */

struct undo {
	uint64_t blk;
	uint8_t *old;
	uint8_t *owned;           /* a repair's block, freed when undone */
};

struct view {
	const struct run_log *l;
	uint8_t **cur;            /* per block: its version in this state, NULL: the base */
	size_t applied;           /* epochs wholly applied to cur */
	struct undo *u;
	size_t nu, capu;
	int error;
};

static uint8_t *view_block(const struct view *v, uint64_t b)
{
	return v->cur[b] ? v->cur[b] : v->l->base + b * v->l->bsize;
}

static int view_read(struct sufs_dev *dev, uint64_t off, void *buf, size_t len)
{
	const struct view *v = dev->priv;
	uint32_t bs = v->l->bsize;
	uint8_t *out = buf;

	if (off > dev->size || len > dev->size - off)
		return -EIO;
	while (len) {
		uint64_t b = off / bs;
		size_t in = off % bs, n = bs - in < len ? bs - in : len;
		memcpy(out, view_block(v, b) + in, n);
		out += n;
		off += n;
		len -= n;
	}
	return 0;
}

static int view_set(struct view *v, uint64_t b, uint8_t *data, uint8_t *owned)
{
	if (grow(&v->u, &v->capu, v->nu + 1, sizeof(*v->u))) {
		v->error = ENOMEM;
		return -ENOMEM;
	}
	v->u[v->nu++] = (struct undo){ b, v->cur[b], owned };
	v->cur[b] = data;
	return 0;
}

static int view_write(struct sufs_dev *dev, uint64_t off, const void *buf, size_t len)
{
	struct view *v = dev->priv;
	uint32_t bs = v->l->bsize;
	const uint8_t *in = buf;

	if (off > dev->size || len > dev->size - off)
		return -EIO;
	while (len) {
		uint64_t b = off / bs;
		size_t at = off % bs, n = bs - at < len ? bs - at : len;
		uint8_t *copy = malloc(bs);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, view_block(v, b), bs);
		memcpy(copy + at, in, n);
		if (view_set(v, b, copy, copy)) {
			free(copy);
			return -ENOMEM;
		}
		in += n;
		off += n;
		len -= n;
	}
	return 0;
}

static int view_barrier(struct sufs_dev *dev)
{
	(void)dev;
	return 0;
}

static const struct sufs_dev_ops view_ops = {
	view_read, view_write, view_barrier, NULL, nop_close, NULL,
};

/* Back to the boundary of the epochs applied. */
static void view_reset(struct view *v)
{
	while (v->nu) {
		struct undo *u = &v->u[--v->nu];
		v->cur[u->blk] = u->old;
		free(u->owned);
	}
}

/* Make v the state s: whole epochs before s->epoch, then the subset. */
static int view_build(struct view *v, const struct state *s, uint64_t seed, size_t *hi)
{
	const struct run_log *l = v->l;
	size_t i, first, n;

	view_reset(v);
	for (; v->applied < s->epoch; v->applied++)
		for (i = ep_first(l, v->applied); i < ep_end(l, v->applied); i++)
			v->cur[l->w[i].blk] = l->w[i].data;
	first = ep_first(l, s->epoch);
	n = ep_end(l, s->epoch) - first;
	*hi = first;
	for (i = 0; i < n; i++)
		if (in_subset(s, seed, i, n)) {
			if (view_set(v, l->w[first + i].blk, l->w[first + i].data, NULL))
				return -ENOMEM;
			*hi = first + i + 1;
		}
	return 0;
}

/* ---- checking a state --------------------------------------------------------------- */

/* Problems are counted by their row in the checker's table. */
#define KINDS_MAX 128

/* The findings of a check, kept as text for the report of a violation;
 * or only the rows of the problems found. */
struct findings {
	char *text;
	size_t len;
	FILE *f;
	uint8_t *seen;            /* [KINDS_MAX]: rows found, or NULL */
};

static void report_fn(void *arg, const struct sufs_problem *p, int fixed)
{
	struct findings *fd = arg;
	size_t n;
	const struct sufs_problem_def *table = sufs_problem_table(&n);

	if (fd->f)
		fprintf(fd->f, "    %s [%s]%s\n", p->message, p->def->name,
			(p->def->flags & SUFS_PR_LEAK) ? " (leak)" : "");
	if (fd->seen && p->def >= table && p->def < table + n && p->def - table < KINDS_MAX)
		fd->seen[p->def - table] = 1;
	(void)fixed;
}

static int run_check(struct sufs_dev *dev, unsigned flags, struct findings *fd,
		     struct sufs_check_result *r)
{
	struct sufs_check_opts co = { .flags = flags | SUFS_CHECK_FORCE };

	if (fd) {
		co.report = report_fn;
		co.arg = fd;
	}
	memset(r, 0, sizeof(*r));
	return sufs_check_dev(dev, &co, r);
}

static int run_check(struct sufs_dev *dev, unsigned flags, struct findings *fd,
		     struct sufs_check_result *r);

/* Every snapshot the state has: its view checks clean and shows the tree
 * as it was when it was taken; and every one it must have, it has.  0, or
 * 1 with why filled in. */
static int snaps_check(struct harness *h, struct sufs_fs *fs, unsigned barriers, size_t hi,
		       char *why, size_t size, uint64_t *checked)
{
	struct sufs_snap_info list[SUFS_SNAP_SLOTS];
	struct sufs_check_result r;
	const struct snaprec *rec;
	struct sufs_dev *sdev;
	struct sufs_fs *sfs;
	uint64_t hash;
	unsigned n, i;
	size_t k;
	int rc = sufs_snap_list(fs, list, &n);

	if (rc) {
		snprintf(why, size, "cannot list the snapshots: %s", sufs_strerror(rc));
		return 1;
	}
	for (i = 0; i < n; i++) {
		/* one that ran out of room says so (on disk before any change
		 * it missed): no longer a view, nothing to check */
		if (list[i].broken)
			continue;
		(*checked)++;
		rec = NULL;
		for (k = 0; k < h->oracle.nsnaps; k++)
			if (!strcmp(h->oracle.snaps[k].name, list[i].name) &&
			    h->oracle.snaps[k].barrier <= barriers + 1)
				rec = &h->oracle.snaps[k];
		if (!rec) {
			snprintf(why, size, "snapshot %.255s: never taken", list[i].name);
			return 1;
		}
		rc = sufs_snap_open_dev(fs, list[i].name, &sdev);
		if (!rc) {
			rc = run_check(sdev, SUFS_CHECK_NO, NULL, &r);
			if (!rc && r.problems) {
				snprintf(why, size, "snapshot %.255s: a full check of it finds %u "
					 "problems", list[i].name, r.problems);
				sufs_dev_close(sdev);
				return 1;
			}
			if (!rc)
				rc = sufs_open_dev(sdev, 0, 0, &sfs);
			if (rc) {
				sufs_dev_close(sdev);
			} else {
				rc = tree_hash(sfs, &h->oracle, &hash);
				sufs_close(sfs);
			}
		}
		if (rc) {
			snprintf(why, size, "snapshot %.255s: cannot be read: %s", list[i].name,
				 sufs_strerror(rc));
			return 1;
		}
		if (hash != rec->hash) {
			snprintf(why, size, "snapshot %.255s: the tree in it is not the one it was "
				 "taken of", list[i].name);
			return 1;
		}
	}
	/* and every snapshot whose slot is on disk, and whose deletion has not
	 * begun, is there */
	for (k = 0; k < h->oracle.nsnaps; k++) {
		rec = &h->oracle.snaps[k];
		if (rec->barrier > barriers || hi > rec->until)
			continue;
		(*checked)++;
		for (i = 0; i < n && strcmp(list[i].name, rec->name) != 0; i++)
			;
		if (i == n) {
			snprintf(why, size, "snapshot %.255s: taken (its slot on disk after barrier "
				 "%u), and gone", rec->name, rec->barrier);
			return 1;
		}
	}
	return 0;
}

/* Is everything the oracle holds for this state there?  Returns 0, or 1
 * with why filled in. */
static int oracle_check(struct harness *h, struct view *v, unsigned barriers, size_t hi,
			char *why, size_t size, uint64_t *checked)
{
	struct oracle *o = &h->oracle;
	struct sufs_dev *dev = new_dev(&view_ops, v, h->log.nblocks * h->log.bsize, 0);
	struct sufs_fs *fs;
	struct sufs_stat st;
	uint32_t ino;
	uint64_t hash;
	size_t i;
	int rc, bad = 0;

	if (!dev) {
		snprintf(why, size, "out of memory");
		return 1;
	}
	rc = sufs_open_dev(dev, 0, 0, &fs);
	if (rc) {
		sufs_dev_close(dev);
		snprintf(why, size, "cannot open the state: %s", sufs_strerror(rc));
		return 1;
	}
	for (i = 0; i < o->n && !bad; i++) {
		const struct expect *x = &o->e[i];
		if (x->barrier > barriers || hi > x->until)
			continue;
		(*checked)++;
		if (x->kind == EXP_RENAMED) {
			unsigned k;
			for (k = 0; k < x->naliases; k++)
				if (!sufs_lookup(fs, x->aliases[k].dir, x->aliases[k].name,
						 strlen(x->aliases[k].name), &ino) && ino == x->ino)
					break;
			if (k < x->naliases)
				continue;
			snprintf(why, size, "inode %" PRIu32 " ('%s' in directory inode %" PRIu32
				 "), made durable, then renamed to '%s' in directory inode %" PRIu32
				 ": no name it had since names it", x->ino, x->aliases[0].name,
				 x->aliases[0].dir, x->aliases[1].name, x->aliases[1].dir);
			bad = 1;
			break;
		}
		if (x->kind == EXP_INODE) {
			ino = x->ino;
			rc = 0;
		} else if (x->kind == EXP_ENTRY) {
			rc = sufs_lookup(fs, x->parent, x->path, strlen(x->path), &ino);
			if (!rc && ino != x->ino)
				rc = -ENOENT;
		} else {
			rc = sufs_namei(fs, sufs_get_super(fs)->root_ino, x->path, 0, &ino);
		}
		if (rc) {
			if (x->kind == EXP_ENTRY)
				snprintf(why, size, "'%s' in directory inode %" PRIu32 ", made durable "
					 "naming inode %" PRIu32 ", now %s", x->path, x->parent,
					 x->ino, sufs_strerror(rc));
			else
				snprintf(why, size, "%s: made durable, now %s", x->path,
					 sufs_strerror(rc));
			bad = 1;
			break;
		}
		if (x->kind == EXP_ENTRY)
			continue;
		rc = sufs_stat(fs, ino, &st);
		if (!rc && x->kind == EXP_NAMES)
			rc = names_hash(fs, ino, &hash);
		else if (!rc && !S_ISDIR(st.mode))
			rc = content_hash(fs, o, &st, &hash);
		if (rc) {
			snprintf(why, size, "%s: cannot be read: %s", x->path, sufs_strerror(rc));
			bad = 1;
		} else if (x->kind == EXP_NAMES) {
			if (hash != x->hash) {
				snprintf(why, size, "%s: the names in it are not those made durable",
					 x->path);
				bad = 1;
			}
		} else if (st.mode != x->mode) {
			snprintf(why, size, "%s: mode 0%o, made durable as 0%o", x->path, st.mode,
				 x->mode);
			bad = 1;
		} else if (!S_ISDIR(st.mode) && (st.links != x->links || st.size != x->size)) {
			snprintf(why, size, "%s: %u links, size %" PRIu64 "; made durable with %u, "
				 "%" PRIu64, x->path, st.links, st.size, x->links, x->size);
			bad = 1;
		} else if (!S_ISDIR(st.mode) && hash != x->hash) {
			snprintf(why, size, "%s: its bytes are not those made durable", x->path);
			bad = 1;
		}
	}
	if (!bad)
		bad = snaps_check(h, fs, barriers, hi, why, size, checked);
	sufs_close(fs);
	return bad;
}

struct counts {
	uint64_t states;          /* checked */
	uint64_t leaky;           /* with leaks (repaired) */
	uint64_t refused;         /* --bgfsck: states the background check refused */
	uint64_t violations;
	uint64_t expectations;    /* oracle records checked */
	uint64_t found[KINDS_MAX]; /* states each problem was found in, by row */
};

static int save_image(struct harness *h, struct view *v, const char *name, char *path,
		      size_t size)
{
	uint64_t b;
	FILE *f;
	int ok;

	snprintf(path, size, "%s/crash-%s.img", h->o->save_dir, name);
	for (char *p = path + strlen(h->o->save_dir) + 1; *p; p++)
		if (*p == ':')
			*p = '-';
	f = fopen(path, "wbe");
	if (!f)
		return -errno;
	for (b = 0; b < h->log.nblocks; b++)
		if (fwrite(view_block(v, b), h->log.bsize, 1, f) != 1)
			break;
	ok = b == h->log.nblocks;
	if (fclose(f) || !ok) {
		unlink(path);
		return -EIO;
	}
	return 0;
}

/* A word of a command, as a shell reads it back: as it is when nothing in
 * it is special, else in single quotes, or in $'...' with \xHH escapes when
 * it holds control bytes or bytes that are not UTF-8 (never printed raw). */
static void put_word(FILE *f, const char *w)
{
	static const char safe[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				   "0123456789_./:=+-,@%";
	size_t len = strlen(w), i, k;
	int plain = len != 0, ctl = 0;
	unsigned char c;

	for (i = 0; i < len; i += k) {
		c = (unsigned char)w[i];
		k = c >= 0x80 ? utf8_printable(w + i, len - i) : 0;
		if (k)
			continue;
		k = 1;
		if (c < 0x20 || c >= 0x7f)
			ctl = 1;
		else if (!strchr(safe, c))
			plain = 0;
	}
	if (plain && !ctl) {
		fputs(w, f);
		return;
	}
	fputs(ctl ? "$'" : "'", f);
	for (i = 0; i < len; i += k) {
		c = (unsigned char)w[i];
		k = c >= 0x80 ? utf8_printable(w + i, len - i) : 0;
		if (k) {
			fwrite(w + i, 1, k, f);
			continue;
		}
		k = 1;
		if (ctl && (c < 0x20 || c >= 0x7f || c == '\\' || c == '\''))
			fprintf(f, "\\x%02x", c);
		else if (!ctl && c == '\'')
			fputs("'\\''", f);
		else
			fputc(c, f);
	}
	fputc('\'', f);
}

/* The command that checks this one state again. */
static void print_command(FILE *f, const struct harness *h, const char *name)
{
	const struct crash_opts *o = h->o;
	const char *mode = o->mode == SUFS_MODE_SYNC ? "sync" :
			   o->mode == SUFS_MODE_ASYNC ? "async" : "softdep";

	fprintf(f, "  reproduce: ");
	if (o->fixed_time)
		fprintf(f, "SOURCE_DATE_EPOCH=%" PRId64 " ", o->time_sec);
	put_word(f, prog);
	fprintf(f, " --crash-state %s --mode %s", name, mode);
	if (o->broken_rule)
		fprintf(f, " --break-rule %u", o->broken_rule);
	if (o->cache_bytes)
		fprintf(f, " --cache %" PRIu64, o->cache_bytes);
	if (!o->script)
		fprintf(f, " --random %" PRIu64 " --seed %" PRIu64, o->random_ops, o->seed);
	fputc(' ', f);
	put_word(f, o->image);
	if (o->script) {
		fputc(' ', f);
		put_word(f, o->script);
	}
	fputc('\n', f);
}

/*
 * Check state s.  A violation is reported in full (findings, image,
 * command) while fewer than max_reports have been.
 */
/*
 * --bgfsck: the state as fsck.sufs -b finds it: opened for writing, checked
 * in the background, repaired on the live file system, closed.  An image
 * last written in async mode must be refused, one written in softdep mode
 * must not be.  0, or 1 with why filled in.
 */
static int bg_repair(struct harness *h, struct view *v, struct counts *c, char *why,
		     size_t size)
{
	struct sufs_dev *dev = new_dev(&view_ops, v, h->log.nblocks * h->log.bsize, 1);
	struct sufs_check_opts o = { 0 };
	struct sufs_check_result r;
	struct sufs_fs *fs;
	unsigned mode;
	int rc;

	if (!dev) {
		snprintf(why, size, "out of memory");
		return 1;
	}
	rc = sufs_open_dev(dev, SUFS_OPEN_RDWR, 0, &fs);
	if (rc) {
		sufs_dev_close(dev);
		snprintf(why, size, "cannot open the state for writing: %s", sufs_strerror(rc));
		return 1;
	}
	mode = sufs_get_super(fs)->write_mode;
	rc = sufs_check_background(fs, &o, &r);
	if (rc == -SUFS_EBGREFUSED && mode != SUFS_MODE_SOFTDEP) {
		c->refused++;
		sufs_abandon(fs);
		/* refused, as it must be: the leak-only repair instead */
		dev = new_dev(&view_ops, v, h->log.nblocks * h->log.bsize, 1);
		if (!dev) {
			snprintf(why, size, "out of memory");
			return 1;
		}
		rc = run_check(dev, SUFS_CHECK_LEAKS_ONLY | SUFS_CHECK_YES, NULL, &r);
		sufs_dev_close(dev);
		if (rc)
			snprintf(why, size, "the leak-only repair failed: %s", sufs_strerror(rc));
		return rc != 0;
	}
	if (rc == 0 && mode != SUFS_MODE_SOFTDEP) {
		snprintf(why, size, "the background check ran on an image written in %s mode",
			 sufs_mode_name(mode));
		sufs_abandon(fs);
		return 1;
	}
	if (!rc)
		rc = sufs_close(fs);
	else
		sufs_abandon(fs);
	if (rc) {
		snprintf(why, size, "the background check failed: %s", sufs_strerror(rc));
		return 1;
	}
	if (r.status & ~SUFS_EXIT_CORRECTED) {
		snprintf(why, size, "the background check exited %d", r.status);
		return 1;
	}
	return 0;
}

static int check_state(struct harness *h, struct view *v, struct sufs_dev *dev,
		       const struct state *s, struct counts *c)
{
	struct sufs_check_result r1, r2, r3;
	struct findings fd = { 0 };
	uint8_t seen[KINDS_MAX] = { 0 };
	struct findings kinds = { .seen = seen };
	char why[600] = "", name[64], img[4096], *text = NULL;
	size_t len = 0;
	FILE *out;
	unsigned barriers = s->kind == S_FINAL ? (unsigned)h->log.nbar : s->epoch;
	size_t hi;
	int rc, bad = 0;

	rc = view_build(v, s, h->o->seed, &hi);
	if (rc)
		return rc;
	c->states++;
	rc = run_check(dev, SUFS_CHECK_NO, &kinds, &r1);
	for (size_t k = 0; k < KINDS_MAX; k++)
		c->found[k] += seen[k];
	if (rc) {
		snprintf(why, sizeof(why), "the check failed: %s", sufs_strerror(rc));
		bad = 1;
	} else if (r1.nonleaks) {
		snprintf(why, sizeof(why), "%u problem%s worse than a leak (and %u leak%s)",
			 r1.nonleaks, r1.nonleaks == 1 ? "" : "s", r1.leaks,
			 r1.leaks == 1 ? "" : "s");
		bad = 1;
	} else if (h->o->bgfsck) {
		c->leaky += r1.problems != 0;
		bad = bg_repair(h, v, c, why, sizeof(why));
		if (!bad) {
			rc = run_check(dev, SUFS_CHECK_NO, NULL, &r3);
			if (rc || r3.problems) {
				snprintf(why, sizeof(why), "after the background check, a full check "
					 "%s %u problems", rc ? "failed, with" : "finds", r3.problems);
				bad = 1;
			}
		}
	} else if (r1.problems) {
		c->leaky++;
		rc = run_check(dev, SUFS_CHECK_LEAKS_ONLY | SUFS_CHECK_YES, NULL, &r2);
		if (!rc)
			rc = run_check(dev, SUFS_CHECK_NO, NULL, &r3);
		if (rc) {
			snprintf(why, sizeof(why), "the leak-only repair failed: %s",
				 sufs_strerror(rc));
			bad = 1;
		} else if (r2.status & ~SUFS_EXIT_CORRECTED) {
			snprintf(why, sizeof(why), "the leak-only repair exited %d", r2.status);
			bad = 1;
		} else if (r3.problems) {
			snprintf(why, sizeof(why), "%u problems remain after the leak-only repair",
				 r3.problems);
			bad = 1;
		}
	}
	if (!bad)
		bad = oracle_check(h, v, barriers, hi, why, sizeof(why), &c->expectations);
	if (!bad || v->error)
		return v->error ? -ENOMEM : 0;

	c->violations++;
	if (__atomic_fetch_add(h->reported, 1, __ATOMIC_RELAXED) >= h->o->max_reports)
		return 0;
	state_name(s, name, sizeof(name));
	view_reset(v);
	view_build(v, s, h->o->seed, &hi); /* as it was before any repair */
	fd.f = open_memstream(&fd.text, &fd.len);
	if (fd.f) {
		run_check(dev, SUFS_CHECK_NO, &fd, &r1);
		fclose(fd.f);
	}
	/* one write, so that the reports of parallel jobs do not mix */
	out = open_memstream(&text, &len);
	if (!out)
		return -ENOMEM;
	fprintf(out, "%s: VIOLATION in %s, state %s (epoch %u of %zu, %zu writes before "
		"it): %s\n", prog, shown(h->workload), name, s->epoch, h->log.nbar + 1,
		ep_first(&h->log, s->epoch), why);
	if (fd.text && *fd.text)
		fprintf(out, "  findings of a full check:\n%s", fd.text);
	free(fd.text);
	rc = save_image(h, v, name, img, sizeof(img));
	if (rc)
		fprintf(out, "  (the image could not be saved in %s: %s)\n",
			shown(h->o->save_dir), strerror(-rc));
	else
		fprintf(out, "  image: %s\n", shown(img));
	print_command(out, h, name);
	fclose(out);
	fwrite(text, 1, len, stderr);
	fflush(stderr);
	free(text);
	return 0;
}

/* A worker leaves with _exit(): the parent's exit handlers are not its own.
 * In a build for make coverage it leaves with exit(), so that every module
 * (the program, libsufs) writes the lines it ran. */
static void worker_exit(int status)
{
#ifdef SUFS_COVERAGE
	exit(status);
#else
	_exit(status);
#endif
}

/* One worker: the states i with i % jobs == job. */
static int check_states(struct harness *h, const struct states *ss, unsigned job,
			unsigned jobs, struct counts *c, struct progress *pb)
{
	struct view v = { .l = &h->log };
	struct sufs_dev dev = {
		.ops = &view_ops, .priv = &v, .size = h->log.nblocks * h->log.bsize,
		.writable = 1, .name = (char *)"crash state",
	};
	size_t i;
	int rc = 0;

	v.cur = calloc(h->log.nblocks, sizeof(*v.cur));
	if (!v.cur)
		return -ENOMEM;
	for (i = job; i < ss->n && !rc; i += jobs) {
		rc = check_state(h, &v, &dev, &ss->s[i], c);
		if (pb)
			progress_update(pb, i + 1);
	}
	view_reset(&v);
	free(v.cur);
	free(v.u);
	return rc;
}

/* Keep `sample` of the states, drawn at random (in order). */
static void sample_states(struct states *ss, uint64_t sample, uint64_t seed)
{
	size_t i, kept = 0;
	uint64_t left = ss->n, want = sample;

	for (i = 0; i < ss->n && want; i++, left--) {
		/* selection sampling (Knuth, TAOCP 3.4.2, algorithm S) */
		if (mix(seed ^ mix(i + 0x5bd1e995u)) % left < want) {
			ss->s[kept++] = ss->s[i];
			want--;
		}
	}
	ss->n = kept;
}

/*
 * Wait for the n workers started; returns how many failed.  On a terminal
 * the parent draws the bar, from the states the workers have checked
 * (their counts, shared), and looks at them every 20 ms; else it sleeps
 * in waitpid().
 */
static unsigned wait_workers(pid_t *pids, unsigned n, const struct counts *shared,
			     unsigned jobs, struct progress *pb)
{
	unsigned j, live, failed = 0;
	uint64_t done;
	int st;

	do {
		live = 0;
		for (j = 0; j < n; j++) {
			pid_t w;
			if (pids[j] == 0)
				continue; /* reaped */
			w = waitpid(pids[j], &st, pb->active ? WNOHANG : 0);
			if (w == 0) {
				live++;
				continue;
			}
			if (w < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
				failed++;
			pids[j] = 0;
		}
		for (done = 0, j = 0; j < jobs; j++)
			done += __atomic_load_n(&shared[j].states, __ATOMIC_RELAXED);
		progress_update(pb, done);
		if (live)
			nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
	} while (live);
	return failed;
}

static int run_jobs(struct harness *h, const struct states *ss, struct counts *total)
{
	unsigned jobs = h->o->jobs ? h->o->jobs : 1, j, failed = 0;
	size_t k;
	struct counts *shared;
	struct progress pb;
	pid_t *pids;
	int rc = 0;

	if (jobs > ss->n)
		jobs = ss->n ? (unsigned)ss->n : 1;
	/* the counts of each job, and after them the number reported */
	shared = mmap(NULL, jobs * sizeof(*shared) + sizeof(uint64_t), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return -ENOMEM;
	memset(shared, 0, jobs * sizeof(*shared) + sizeof(uint64_t));
	h->reported = (uint64_t *)(shared + jobs);
	progress_start(&pb, "Checking crash states", ss->n);
	if (jobs == 1) {
		rc = check_states(h, ss, 0, 1, total, &pb);
		progress_end(&pb);
		munmap(shared, jobs * sizeof(*shared) + sizeof(uint64_t));
		return rc;
	}
	pids = calloc(jobs, sizeof(*pids));
	if (!pids) {
		munmap(shared, jobs * sizeof(*shared) + sizeof(uint64_t));
		return -ENOMEM;
	}
	fflush(NULL);
	for (j = 0; j < jobs; j++) {
		pids[j] = fork();
		if (pids[j] == 0) {
			rc = check_states(h, ss, j, jobs, &shared[j], NULL);
			fflush(NULL);
			worker_exit(rc ? 1 : 0);
		}
		if (pids[j] < 0) {
			rc = -errno;
			break;
		}
	}
	failed = wait_workers(pids, j, shared, jobs, &pb);
	progress_end(&pb);
	for (j = 0; j < jobs; j++) {
		total->states += shared[j].states;
		total->leaky += shared[j].leaky;
		total->refused += shared[j].refused;
		total->violations += shared[j].violations;
		total->expectations += shared[j].expectations;
		for (k = 0; k < KINDS_MAX; k++)
			total->found[k] += shared[j].found[k];
	}
	munmap(shared, jobs * sizeof(*shared) + sizeof(uint64_t));
	free(pids);
	if (!rc && failed)
		rc = -EIO;
	return rc;
}

/* The problems the first check found, each with the number of states it
 * was found in, in the table's order: "name":n,... (JSON) or name n, ...,
 * after lead when there is any.  Returns how many it printed. */
static size_t print_found(const struct counts *c, int json, const char *lead)
{
	size_t n, k, shown = 0;
	const struct sufs_problem_def *table = sufs_problem_table(&n);

	for (k = 0; k < n && k < KINDS_MAX; k++) {
		if (!c->found[k])
			continue;
		printf(json ? "%s\"%s\":%" PRIu64 : "%s%s %" PRIu64,
		       shown ? (json ? "," : ", ") : lead, table[k].name, c->found[k]);
		shown++;
	}
	return shown;
}

static void print_summary(const struct harness *h, const struct states *ss,
			  const struct counts *c, double run_s, double check_s)
{
	const struct crash_opts *o = h->o;
	const char *mode = o->mode == SUFS_MODE_SYNC ? "sync" :
			   o->mode == SUFS_MODE_ASYNC ? "async" : "softdep";
	double rate = check_s > 0 ? (double)c->states / check_s : 0;

	if (o->quiet && !c->violations)
		return;
	if (o->json) {
		printf("{\"workload\":");
		json_str(stdout, h->workload, strlen(h->workload));
		printf(",\"mode\":\"%s\",\"operations\":%" PRIu64 ",\"writes\":%zu,"
		       "\"barriers\":%zu,\"epochs\":%zu,\"states\":%zu,\"checked\":%" PRIu64 ",\"leaky\":%" PRIu64
		       ",\"expectations\":%" PRIu64 ",\"violations\":%" PRIu64
		       ",\"bgfsck_refused\":%" PRIu64 ",\"found\":{",
		       mode, h->operations, h->log.nw, h->log.nbar, h->log.nbar + 1, ss->n, c->states, c->leaky,
		       c->expectations, c->violations, c->refused);
		print_found(c, 1, "");
		printf("},\"run_seconds\":%.3f,\"check_seconds\":%.3f,\"states_per_second\":%.1f}\n",
		       run_s, check_s, rate);
		return;
	}
	printf("%s (%s): %" PRIu64 " operations, %zu block writes, %zu barriers\n", h->workload,
	       mode, h->operations, h->log.nw, h->log.nbar);
	printf("%" PRIu64 " crash states checked (%" PRIu64 " with leaks), "
	       "%" PRIu64 " oracle records checked, %" PRIu64 " violations\n", c->states, c->leaky,
	       c->expectations, c->violations);
	if (print_found(c, 0, "found (in how many states): "))
		printf("\n");
	if (o->bgfsck)
		printf("background check: run on %" PRIu64 " states, refused on %" PRIu64 "\n",
		       c->states - c->refused, c->refused);
	printf("%.3f s to run, %.3f s to check: %.0f states/s\n", run_s, check_s, rate);
}

int crash_state_valid(const char *text)
{
	struct state s;
	return state_parse(text, NULL, &s) == 0;
}

int crash_check(const struct crash_opts *o)
{
	struct harness h = { .o = o };
	struct states ss = { 0 };
	struct counts c = { 0 };
	double t0 = now_seconds(), t1;
	char wl[128];
	size_t i;
	int st, rc;

	if (o->script) {
		h.workload = o->script;
	} else {
		snprintf(wl, sizeof(wl), "--random %" PRIu64 " --seed %" PRIu64, o->random_ops,
			 o->seed);
		h.workload = wl;
	}
	h.oracle.bufsize = 1 << 20;
	h.oracle.buf = malloc(h.oracle.bufsize);
	st = h.oracle.buf ? read_image(&h) : CRASH_EXIT_IO;
	if (!st)
		st = run_workload(&h);
	t1 = now_seconds();
	if (!st && o->which == CRASH_ONE) {
		struct state one;
		if (state_parse(o->state, &h.log, &one)) {
			errmsg("no state '%s' in this workload (it has epochs 0 to %zu)", o->state,
			       h.log.nbar);
			st = CRASH_EXIT_SCRIPT;
		} else if ((rc = state_add(&ss, one.epoch, (enum skind)one.kind, one.arg)) != 0) {
			st = CRASH_EXIT_IO;
		}
	} else if (!st) {
		if (enumerate(&h.log, o->subsets, &ss)) {
			errmsg("%s", strerror(ENOMEM));
			st = CRASH_EXIT_IO;
		} else if (o->which == CRASH_SAMPLE && o->sample < ss.n) {
			sample_states(&ss, o->sample, o->seed);
		}
	}
	if (!st) {
		rc = run_jobs(&h, &ss, &c);
		if (rc) {
			errmsg("checking the crash states: %s", sufs_strerror(rc));
			st = CRASH_EXIT_IO;
		}
	}
	if (!st) {
		print_summary(&h, &ss, &c, t1 - t0, now_seconds() - t1);
		if (c.violations)
			st = CRASH_EXIT_VIOLATION;
	}
	for (i = 0; i < h.log.nw; i++)
		free(h.log.w[i].data);
	free(h.log.w);
	free(h.log.bar);
	free(h.log.base);
	free(h.log.live);
	free(ss.s);
	oracle_free(&h.oracle);
	return st;
}
