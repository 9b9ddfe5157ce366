/*
 * ops.c - the file-system operations.
 *
 * Each operation changes inodes, bitmaps and directory blocks through the
 * layers below, which announce every change to the cache as an update.
 * The order in which an operation makes its changes is the order of the
 * three rules of soft updates (DESIGN.md):
 *   1. never point to a structure before it is initialised:
 *      bitmap bit -> inode -> directory entry; link count up -> new name;
 *      data block -> pointer to it;
 *   2. never reuse a resource before every old pointer to it is gone;
 *   3. never reset the old pointer to a live resource before the new one
 *      is set.
 * The link counts and sizes that callers see change at once.
 */
#include "config.h"
#include "sufs_int.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#define SYMLOOP_MAX 40
#define SUFS_PATH_MAX 4096

static int writable(struct sufs_fs *fs)
{
	return (fs->flags & SUFS_OPEN_RDWR) ? 0 : -EROFS;
}

/* Load an inode that must be in use. */
static int load_live(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in)
{
	int err;

	if (!inode_valid_ino(fs, ino))
		return -EINVAL;
	err = inode_load(fs, ino, in);
	if (err)
		return err;
	return in->mode ? 0 : -ENOENT;
}

static void set_now(struct sufs_fs *fs, struct sufs_inode *in, int a, int m, int c)
{
	int64_t sec;
	uint32_t nsec;

	fs_now(fs, &sec, &nsec);
	if (a) {
		in->atime = sec;
		in->atime_ns = nsec;
	}
	if (m) {
		in->mtime = sec;
		in->mtime_ns = nsec;
	}
	if (c) {
		in->ctime = sec;
		in->ctime_ns = nsec;
	}
}

/* ---- read side ----------------------------------------------------------- */

int sufs_stat(struct sufs_fs *fs, uint32_t ino, struct sufs_stat *st)
{
	struct sufs_inode in;
	int err = load_live(fs, ino, &in);

	if (err)
		return err;
	memset(st, 0, sizeof(*st));
	st->ino = ino;
	st->mode = in.mode;
	st->links = in.links;
	st->uid = in.uid;
	st->gid = in.gid;
	st->size = in.size;
	st->blocks = in.blocks;
	st->atime = in.atime;
	st->mtime = in.mtime;
	st->ctime = in.ctime;
	st->crtime = in.crtime;
	st->atime_ns = in.atime_ns;
	st->mtime_ns = in.mtime_ns;
	st->ctime_ns = in.ctime_ns;
	st->crtime_ns = in.crtime_ns;
	st->rdev_major = in.rdev_major;
	st->rdev_minor = in.rdev_minor;
	st->generation = in.generation;
	return 0;
}

int sufs_lookup(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len, uint32_t *ino)
{
	struct sufs_inode din;
	int err = load_live(fs, dir, &din);

	if (err)
		return err;
	if (!S_ISDIR(din.mode))
		return -ENOTDIR;
	if (len > SUFS_NAME_MAX)
		return -ENAMETOOLONG;
	err = dir_lookup(fs, dir, &din, name, len, ino);
	if (!err && !inode_valid_ino(fs, *ino))
		return -SUFS_ECORRUPT;
	return err;
}

int sufs_readdir(struct sufs_fs *fs, uint32_t dir, sufs_dirent_fn fn, void *arg)
{
	struct sufs_inode din;
	int err = load_live(fs, dir, &din);

	if (err)
		return err;
	return dir_iterate(fs, dir, &din, fn, arg);
}

/* The target of a fast symlink is stored in the block pointers' bytes. */
static void fast_target_get(const struct sufs_inode *in, uint8_t out[SUFS_FAST_SYMLINK_MAX])
{
	unsigned i;
	for (i = 0; i < SUFS_NBLOCKS; i++)
		put64(out + 8 * i, in->block[i]);
}

static void fast_target_set(struct sufs_inode *in, const char *target, size_t len)
{
	uint8_t raw[SUFS_FAST_SYMLINK_MAX] = { 0 };
	unsigned i;

	memcpy(raw, target, len);
	for (i = 0; i < SUFS_NBLOCKS; i++)
		in->block[i] = get64(raw + 8 * i);
}

int sufs_read(struct sufs_fs *fs, uint32_t ino, uint64_t off, void *buf, size_t len,
	      size_t *done)
{
	struct sufs_inode in;
	uint8_t *out = buf;
	uint64_t pblk;
	struct buf *b;
	int err = load_live(fs, ino, &in);

	*done = 0;
	if (err)
		return err;
	if (!inode_has_blocks(&in))
		return -EINVAL;
	if (off >= in.size)
		return 0;
	if (len > in.size - off)
		len = (size_t)(in.size - off);
	while (len) {
		uint32_t boff = (uint32_t)(off & (fs->bsize - 1));
		size_t n = fs->bsize - boff < len ? fs->bsize - boff : len;

		err = bmap_get(fs, &in, off >> fs->bshift, &pblk);
		if (err)
			return err;
		if (!pblk) {
			memset(out, 0, n);
		} else {
			err = buf_get(fs, pblk, BUF_DATA, &b);
			if (err)
				return err;
			memcpy(out, b->data + boff, n);
			buf_put(fs, b);
		}
		out += n;
		off += n;
		len -= n;
		*done += n;
	}
	return 0;
}

int sufs_readlink(struct sufs_fs *fs, uint32_t ino, char *buf, size_t size, size_t *len)
{
	struct sufs_inode in;
	uint8_t fast[SUFS_FAST_SYMLINK_MAX];
	size_t n;
	int err = load_live(fs, ino, &in);

	if (err)
		return err;
	if (!S_ISLNK(in.mode))
		return -EINVAL;
	if (in.size == 0 || in.size >= SUFS_PATH_MAX || in.size > fs->bsize)
		return -SUFS_ECORRUPT;
	n = in.size < size ? (size_t)in.size : size;
	if (in.size <= SUFS_FAST_SYMLINK_MAX) {
		fast_target_get(&in, fast);
		memcpy(buf, fast, n);
		*len = n;
		return 0;
	}
	err = sufs_read(fs, ino, 0, buf, n, len);
	if (!err && *len != n)
		err = -SUFS_ECORRUPT;
	return err;
}

/* ---- path names ------------------------------------------------------------- */

/*
 * Walk path from cwd (or the root).  The path is copied into a buffer that
 * grows as symlink targets are spliced in front of what remains.
 */
int sufs_namei(struct sufs_fs *fs, uint32_t cwd, const char *path, int follow, uint32_t *ino)
{
	char *buf, *p, *next;
	uint32_t dir, cur;
	unsigned links = 0;
	size_t len;
	int err = 0;

	if (!path || !*path)
		return -ENOENT;
	if (strlen(path) >= SUFS_PATH_MAX)
		return -ENAMETOOLONG;
	buf = malloc(2 * SUFS_PATH_MAX);
	if (!buf)
		return -ENOMEM;
	strcpy(buf, path);
	p = buf;
	cur = *p == '/' ? SUFS_ROOT_INO : cwd;
	for (;;) {
		struct sufs_inode in;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		next = strchr(p, '/');
		len = next ? (size_t)(next - p) : strlen(p);
		dir = cur;
		if (len == 1 && p[0] == '.') {
			err = load_live(fs, dir, &in);
			if (!err && !S_ISDIR(in.mode))
				err = -ENOTDIR;
		} else {
			err = sufs_lookup(fs, dir, p, len, &cur);
		}
		if (err)
			break;
		p += len;
		err = load_live(fs, cur, &in);
		if (err)
			break;
		if (S_ISLNK(in.mode) && (follow || strchr(p, '/'))) {
			char target[SUFS_PATH_MAX];
			size_t tlen, rest = strlen(p);

			if (++links > SYMLOOP_MAX) {
				err = -ELOOP;
				break;
			}
			err = sufs_readlink(fs, cur, target, sizeof(target) - 1, &tlen);
			if (err)
				break;
			if (tlen + rest + 1 >= 2 * SUFS_PATH_MAX) {
				err = -ENAMETOOLONG;
				break;
			}
			memmove(buf + tlen, p, rest + 1);
			memcpy(buf, target, tlen);
			p = buf;
			cur = *p == '/' ? SUFS_ROOT_INO : dir;
		}
	}
	free(buf);
	if (!err && path[strlen(path) - 1] == '/') {
		/* "name/" must be a directory */
		struct sufs_inode in;
		err = load_live(fs, cur, &in);
		if (!err && !S_ISDIR(in.mode))
			err = -ENOTDIR;
	}
	if (!err)
		*ino = cur;
	return err;
}

int sufs_namei_parent(struct sufs_fs *fs, uint32_t cwd, const char *path, uint32_t *dir,
		      const char **name, size_t *len)
{
	const char *end, *slash, *start;
	char *dpath;
	int err;

	if (!path || !*path)
		return -ENOENT;
	end = path + strlen(path);
	while (end > path + 1 && end[-1] == '/')
		end--;
	for (slash = end; slash > path && slash[-1] != '/'; slash--)
		;
	start = slash;
	if (start == end)
		return -EINVAL; /* "/" has no parent entry */
	if ((size_t)(end - start) > SUFS_NAME_MAX)
		return -ENAMETOOLONG;
	*name = start;
	*len = (size_t)(end - start);
	if (slash == path) {
		*dir = cwd;
		return load_live(fs, cwd, &(struct sufs_inode){ 0 });
	}
	dpath = strndup(path, (size_t)(slash - path));
	if (!dpath)
		return -ENOMEM;
	err = sufs_namei(fs, cwd, dpath, 1, dir);
	free(dpath);
	return err;
}

/* ---- creating names ---------------------------------------------------------- */

static int check_name(const char *name, size_t len)
{
	if (len == 0)
		return -ENOENT;
	if (len > SUFS_NAME_MAX)
		return -ENAMETOOLONG;
	if (memchr(name, '/', len) || memchr(name, 0, len))
		return -EINVAL;
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return -EEXIST;
	return 0;
}

/* Load a directory that a new name goes into. */
static int load_parent(struct sufs_fs *fs, uint32_t dir, struct sufs_inode *din)
{
	int err = writable(fs);

	if (!err)
		err = load_live(fs, dir, din);
	if (!err && !S_ISDIR(din->mode))
		err = -ENOTDIR;
	if (!err && din->links == 0)
		err = -ENOENT; /* removed, still open */
	return err;
}

struct blist {
	uint64_t *blk;
	size_t n, cap;
};

static int collect_fn(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
		      int level, int bad, void *arg)
{
	struct blist *l = arg;
	(void)fs; (void)ino; (void)lblk; (void)level;
	if (bad)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		uint64_t *p = realloc(l->blk, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		l->blk = p;
		l->cap = cap;
	}
	l->blk[l->n++] = pblk;
	return 0;
}

/*
 * Undo the making of an inode that no name reaches yet: free its blocks and
 * its number.  Nothing on disk can point to it, so rule 2 holds trivially.
 */
static void release_inode(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in)
{
	struct blist l = { NULL, 0, 0 };
	uint32_t g = (ino - 1) / fs->sb.inodes_per_group;
	int was_dir = S_ISDIR(in->mode);
	size_t i;

	if (inode_store(fs, ino, in) == 0 && sufs_block_iterate(fs, ino, collect_fn, &l) == 0) {
		for (i = 0; i < l.n; i++) {
			bitmap_set(fs, SUFS_BITMAP_BLOCK, l.blk[i], 0);
			buf_forget(fs, l.blk[i]);
		}
	}
	free(l.blk);
	memset(in, 0, sizeof(*in));
	inode_store(fs, ino, in);
	if (bitmap_set(fs, SUFS_BITMAP_INODE, ino, 0) == 1 && was_dir)
		fs->groups[g].used_dirs--;
}

/*
 * Make a new inode of the given mode and name it in dir.  Rule 1 in order:
 * the bitmap bit, then the initialised inode, then the entry.  init() fills
 * in what is particular to the type (a directory's first block, a symlink's
 * target) before the entry is made.
 */
typedef int (*init_fn)(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in,
		       uint32_t dir, const void *arg);

static int make_node(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len,
		     uint32_t mode, const struct sufs_cred *cred, init_fn init,
		     const void *arg, uint32_t *out)
{
	struct sufs_inode din, in;
	uint32_t ino;
	int is_dir = S_ISDIR(mode), raised = 0, err;

	err = check_name(name, len);
	if (!err)
		err = load_parent(fs, dir, &din);
	if (err)
		return err;
	if (is_dir && din.links >= SUFS_LINK_MAX)
		return -EMLINK;
	err = alloc_inode(fs, dir, is_dir, &ino);
	if (err)
		return err;
	memset(&in, 0, sizeof(in));
	in.mode = (uint16_t)mode;
	in.links = is_dir ? 2 : 1;
	in.uid = cred ? cred->uid : 0;
	in.gid = cred ? cred->gid : 0;
	in.generation = fs->next_generation++;
	set_now(fs, &in, 1, 1, 1);
	in.crtime = in.ctime;
	in.crtime_ns = in.ctime_ns;
	err = init ? init(fs, ino, &in, dir, arg) : 0;
	if (!err)
		err = inode_store(fs, ino, &in);
	if (!err && is_dir) {
		din.links++; /* the child's ".." */
		raised = 1;
		err = inode_store(fs, dir, &din);
	}
	if (!err)
		err = dir_add(fs, dir, &din, name, len, ino, sufs_ftype_of_mode(mode));
	if (err) {
		/* nothing names the new inode: give back what it holds */
		if (raised) {
			din.links--;
			inode_store(fs, dir, &din);
		}
		release_inode(fs, ino, &in);
		return err;
	}
	set_now(fs, &din, 0, 1, 1);
	err = inode_store(fs, dir, &din);
	if (!err)
		*out = ino;
	return err;
}

static int perm_only(uint32_t mode, uint32_t type, uint32_t *out)
{
	if ((mode & S_IFMT) && (mode & S_IFMT) != type)
		return -EINVAL;
	*out = type | (mode & 07777);
	return 0;
}

int sufs_create(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len, uint32_t mode,
		const struct sufs_cred *cred, uint32_t *ino)
{
	int err = perm_only(mode, S_IFREG, &mode);
	return err ? err : make_node(fs, dir, name, len, mode, cred, NULL, NULL, ino);
}

struct rdev {
	uint32_t major, minor;
};

static int init_node(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, uint32_t dir,
		     const void *arg)
{
	const struct rdev *r = arg;
	(void)fs; (void)ino; (void)dir;
	if (S_ISCHR(in->mode) || S_ISBLK(in->mode)) {
		in->rdev_major = r->major;
		in->rdev_minor = r->minor;
	}
	return 0;
}

int sufs_mknod(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len, uint32_t mode,
	       uint32_t major, uint32_t minor, const struct sufs_cred *cred, uint32_t *ino)
{
	struct rdev r = { major, minor };

	switch (mode & S_IFMT) {
	case S_IFREG:
	case S_IFCHR:
	case S_IFBLK:
	case S_IFIFO:
	case S_IFSOCK:
		break;
	default:
		return -EINVAL;
	}
	return make_node(fs, dir, name, len, mode & (S_IFMT | 07777), cred, init_node, &r, ino);
}

static int init_dir(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, uint32_t dir,
		    const void *arg)
{
	(void)arg;
	return dir_init(fs, ino, in, dir);
}

int sufs_mkdir(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len, uint32_t mode,
	       const struct sufs_cred *cred, uint32_t *ino)
{
	int err = perm_only(mode, S_IFDIR, &mode);
	return err ? err : make_node(fs, dir, name, len, mode, cred, init_dir, NULL, ino);
}

struct target {
	const char *s;
	size_t len;
};

/* A symlink's target: in the inode when short, else in one data block that
 * is written before the pointer to it. */
static int init_symlink(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, uint32_t dir,
			const void *arg)
{
	const struct target *t = arg;
	uint64_t pblk;
	struct buf *b;
	int is_new, err;

	(void)dir;
	in->size = t->len;
	if (t->len <= SUFS_FAST_SYMLINK_MAX) {
		fast_target_set(in, t->s, t->len);
		return 0;
	}
	err = bmap_alloc(fs, in, 0, inode_goal(fs, ino), &pblk, &is_new);
	if (err)
		return err;
	err = buf_get_new(fs, pblk, BUF_DATA, &b);
	if (err)
		return err;
	buf_update(fs, b, 0, fs->bsize, UPD_DATA);
	memcpy(b->data, t->s, t->len);
	buf_put(fs, b);
	return 0;
}

int sufs_symlink(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len,
		 const char *target, const struct sufs_cred *cred, uint32_t *ino)
{
	struct target t = { target, target ? strlen(target) : 0 };

	if (t.len == 0)
		return -ENOENT;
	if (t.len >= SUFS_PATH_MAX || t.len > fs->bsize)
		return -ENAMETOOLONG;
	return make_node(fs, dir, name, len, S_IFLNK | 0777, cred, init_symlink, &t, ino);
}

int sufs_link(struct sufs_fs *fs, uint32_t ino, uint32_t dir, const char *name, size_t len)
{
	struct sufs_inode din, in;
	int err = check_name(name, len);

	if (!err)
		err = load_parent(fs, dir, &din);
	if (!err)
		err = load_live(fs, ino, &in);
	if (err)
		return err;
	if (S_ISDIR(in.mode))
		return -EPERM;
	if (in.links >= SUFS_LINK_MAX)
		return -EMLINK;
	/* rule 1: the link count goes up before the new name exists */
	in.links++;
	set_now(fs, &in, 0, 0, 1);
	err = inode_store(fs, ino, &in);
	if (err)
		return err;
	err = dir_add(fs, dir, &din, name, len, ino, sufs_ftype_of_mode(in.mode));
	if (err) {
		in.links--;
		inode_store(fs, ino, &in);
		return err;
	}
	set_now(fs, &din, 0, 1, 1);
	return inode_store(fs, dir, &din);
}

/* ---- file contents and attributes ---------------------------------------------- */

int sufs_write(struct sufs_fs *fs, uint32_t ino, uint64_t off, const void *buf, size_t len)
{
	struct sufs_inode in;
	const uint8_t *src = buf;
	uint64_t pblk, goal, maxbytes;
	struct buf *b;
	int is_new, err = writable(fs);

	if (!err)
		err = load_live(fs, ino, &in);
	if (err)
		return err;
	if (S_ISDIR(in.mode))
		return -EISDIR;
	if (!S_ISREG(in.mode))
		return -EINVAL;
	maxbytes = inode_max_blocks(fs) << fs->bshift;
	if (off > maxbytes || len > maxbytes - off)
		return -EFBIG;
	if (len == 0)
		return 0;
	goal = 0;
	if (off >> fs->bshift)
		bmap_get(fs, &in, (off >> fs->bshift) - 1, &goal);
	goal = goal ? goal + 1 : inode_goal(fs, ino);
	while (len) {
		uint32_t boff = (uint32_t)(off & (fs->bsize - 1));
		size_t n = fs->bsize - boff < len ? fs->bsize - boff : len;

		err = bmap_alloc(fs, &in, off >> fs->bshift, goal, &pblk, &is_new);
		if (err)
			break;
		/* a block written whole, or new, need not be read first */
		if (is_new || n == fs->bsize)
			err = buf_get_new(fs, pblk, BUF_DATA, &b);
		else
			err = buf_get(fs, pblk, BUF_DATA, &b);
		if (err)
			break;
		buf_update(fs, b, boff, (uint32_t)n, UPD_DATA);
		memcpy(b->data + boff, src, n);
		buf_put(fs, b);
		goal = pblk + 1;
		src += n;
		off += n;
		len -= n;
		if (off > in.size)
			in.size = off;
	}
	/* what was written so far stays written, error or not */
	set_now(fs, &in, 0, 1, 1);
	if (inode_store(fs, ino, &in) && !err)
		err = -EIO;
	return err;
}

int sufs_setattr(struct sufs_fs *fs, uint32_t ino, const struct sufs_setattr *sa)
{
	struct sufs_inode in;
	int err = writable(fs);

	if (!err)
		err = load_live(fs, ino, &in);
	if (err)
		return err;
	if (sa->mask & SUFS_SET_SIZE) {
		if (S_ISDIR(in.mode))
			return -EISDIR;
		if (!S_ISREG(in.mode))
			return -EINVAL;
		if (sa->size > (inode_max_blocks(fs) << fs->bshift))
			return -EFBIG;
		if (sa->size < in.size)
			return -EOPNOTSUPP; /* shrinking comes with truncate */
		if (sa->size != in.size) {
			in.size = sa->size;
			set_now(fs, &in, 0, 1, 0);
		}
	}
	if (sa->mask & SUFS_SET_MODE)
		in.mode = (uint16_t)((in.mode & S_IFMT) | (sa->mode & 07777));
	if (sa->mask & SUFS_SET_UID)
		in.uid = sa->uid;
	if (sa->mask & SUFS_SET_GID)
		in.gid = sa->gid;
	if (sa->mask & SUFS_SET_ATIME) {
		in.atime = sa->atime;
		in.atime_ns = sa->atime_ns;
	}
	if (sa->mask & SUFS_SET_MTIME) {
		in.mtime = sa->mtime;
		in.mtime_ns = sa->mtime_ns;
	}
	if (sa->mask & SUFS_SET_CTIME) {
		in.ctime = sa->ctime;
		in.ctime_ns = sa->ctime_ns;
	} else {
		set_now(fs, &in, 0, 0, 1);
	}
	if (in.atime_ns >= 1000000000u || in.mtime_ns >= 1000000000u ||
	    in.ctime_ns >= 1000000000u)
		return -EINVAL;
	return inode_store(fs, ino, &in);
}
