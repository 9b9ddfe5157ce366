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

/* Load an inode an operation is about to change: a snapshot file is the
 * library's own (snap.c), -EPERM to everyone else. */
static int load_mutable(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in)
{
	int err = load_live(fs, ino, in);

	return !err && snap_is_file(fs, ino) ? -EPERM : err;
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
	if (in.size > inode_max_blocks(fs) << fs->bshift)
		return -SUFS_ECORRUPT; /* no block map reaches that far */
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
 * Walk path from cwd (or the root).  A symlink's target is spliced in
 * front of what remains of the path, in a buffer on the stack (no malloc:
 * every operation walks a path, and an 8 KiB malloc is not cheap).
 */
int sufs_namei(struct sufs_fs *fs, uint32_t cwd, const char *path, int follow, uint32_t *ino)
{
	char buf[2 * SUFS_PATH_MAX];
	const char *p = path, *next;
	uint32_t dir, cur;
	unsigned links = 0;
	size_t len;
	int err = 0;

	if (!path || !*path)
		return -ENOENT;
	if (strlen(path) >= SUFS_PATH_MAX)
		return -ENAMETOOLONG;
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
			memmove(buf + tlen, p, rest + 1); /* p may be in buf */
			memcpy(buf, target, tlen);
			p = buf;
			cur = *p == '/' ? SUFS_ROOT_INO : dir;
		}
	}
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
	if (end - path >= SUFS_PATH_MAX)
		return -ENAMETOOLONG; /* as sufs_namei() would say of it later */
	while (end > path + 1 && end[-1] == '/')
		end--;
	for (slash = end; slash > path && slash[-1] != '/'; slash--)
		;
	start = slash;
	if (start == end) {
		/* "/" has no entry of its own: it is the root's "." */
		*dir = SUFS_ROOT_INO;
		*name = ".";
		*len = 1;
		return load_live(fs, SUFS_ROOT_INO, &(struct sufs_inode){ 0 });
	}
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

/* ---- freeing ------------------------------------------------------------------- */

static uint32_t hold_count(const struct sufs_fs *fs, uint32_t ino);

struct blist {
	uint64_t *blk;
	size_t n, cap;
};

static int blist_add(struct blist *l, uint64_t blk)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		uint64_t *p = realloc(l->blk, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		l->blk = p;
		l->cap = cap;
	}
	l->blk[l->n++] = blk;
	return 0;
}

static int collect_fn(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
		      int level, int bad, void *arg)
{
	(void)fs; (void)ino; (void)lblk; (void)level;
	return bad ? 0 : blist_add(arg, pblk);
}

/* Deferred: the pointers to these blocks are cleared on disk (rule 2). */
struct freeing {
	uint32_t ino;             /* an inode number to free too, or 0 */
	int was_dir;
	struct blist blocks;
};

static int freeing_run(struct sufs_fs *fs, void *arg)
{
	struct freeing *f = arg;
	size_t i;
	int err = 0, e;

	for (i = 0; fs && i < f->blocks.n; i++)
		if ((e = free_block(fs, f->blocks.blk[i])) && !err)
			err = e;
	if (fs && f->ino && (e = free_inode(fs, f->ino, f->was_dir)) && !err)
		err = e;
	free(f->blocks.blk);
	free(f);
	return err;
}

/*
 * Free an inode no name reaches any more: it is zeroed on disk once w is
 * (the removal of its last name), and its blocks and number go back to the
 * bitmaps once the zeroed inode is on disk.
 *
 * A file that never reached the disk goes at once, as FreeBSD cancels the
 * dependencies of a file removed early: its data is never written, and
 * its blocks and number are free for the next file.  That is safe only
 * when no name of it can still reach the disk: inode_forget_new() says.
 */
static int inode_free(struct sufs_fs *fs, uint32_t ino, const struct sufs_inode *in,
		      const struct waits *w)
{
	struct sufs_inode zero;
	struct freeing *f = calloc(1, sizeof(*f));
	upd_id z;
	int err;

	if (!f)
		return -ENOMEM;
	f->ino = ino;
	f->was_dir = S_ISDIR(in->mode);
	if (f->was_dir)
		dirhash_drop(fs, ino);
	err = inode_walk(fs, ino, in, collect_fn, &f->blocks);
	if (!err && !f->was_dir) {
		/* never on disk: nothing on disk points to it or its blocks */
		err = inode_forget_new(fs, ino);
		if (err == 1)
			return freeing_run(fs, f);
	}
	if (!err) {
		memset(&zero, 0, sizeof(zero));
		err = inode_store(fs, ino, &zero, UPD_FREEFILE, w, &z);
	}
	if (err) {
		free(f->blocks.blk);
		free(f);
		return err;
	}
	return deps_defer(fs, &z, 1, freeing_run, f);
}

/* An inode no name reaches (a leak the background check found): it goes,
 * with what it holds. */
int ops_release_inode(struct sufs_fs *fs, uint32_t ino)
{
	struct sufs_inode in;
	int err = load_live(fs, ino, &in);

	if (!err && hold_count(fs, ino))
		return 0; /* a file open and unlinked: its last release frees it */
	return err ? err : inode_free(fs, ino, &in, NULL);
}

/* ---- files held open ----------------------------------------------------------- */

/*
 * A program that has a file open keeps it, as a process keeps an unlinked
 * file on any Unix file system: its last name may go (its link count is
 * then 0 on disk) while its inode and blocks stay until the last hold is
 * released.  The holds are a sorted array of (inode, count).
 */
static size_t hold_slot(const struct sufs_fs *fs, uint32_t ino)
{
	size_t lo = 0, hi = fs->nholds;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (fs->holds[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint32_t hold_count(const struct sufs_fs *fs, uint32_t ino)
{
	size_t i = hold_slot(fs, ino);

	return i < fs->nholds && fs->holds[i].ino == ino ? fs->holds[i].count : 0;
}

int sufs_hold(struct sufs_fs *fs, uint32_t ino)
{
	struct sufs_inode in;
	size_t i;
	int err = load_live(fs, ino, &in);

	if (err)
		return err;
	i = hold_slot(fs, ino);
	if (i < fs->nholds && fs->holds[i].ino == ino) {
		if (fs->holds[i].count == UINT32_MAX)
			return -EMFILE;
		fs->holds[i].count++;
		return 0;
	}
	if (fs->nholds == fs->capholds) {
		size_t cap = fs->capholds ? 2 * fs->capholds : 64;
		struct hold *p = realloc(fs->holds, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		fs->holds = p;
		fs->capholds = cap;
	}
	memmove(&fs->holds[i + 1], &fs->holds[i], (fs->nholds - i) * sizeof(*fs->holds));
	fs->holds[i] = (struct hold){ ino, 1 };
	fs->nholds++;
	return 0;
}

/* The last hold of a file no name reaches: it goes, with what it holds. */
static int orphan_free(struct sufs_fs *fs, uint32_t ino)
{
	struct sufs_inode in;
	int err = load_live(fs, ino, &in);

	if (err)
		return err == -ENOENT ? 0 : err;
	return in.links == 0 && !S_ISDIR(in.mode) ? inode_free(fs, ino, &in, NULL) : 0;
}

int sufs_release(struct sufs_fs *fs, uint32_t ino)
{
	size_t i = hold_slot(fs, ino);

	if (i == fs->nholds || fs->holds[i].ino != ino)
		return -EINVAL;
	if (--fs->holds[i].count)
		return 0;
	memmove(&fs->holds[i], &fs->holds[i + 1], (fs->nholds - i - 1) * sizeof(*fs->holds));
	fs->nholds--;
	if (writable(fs))
		return 0; /* read-only: nothing was unlinked */
	return fs_op_end(fs, orphan_free(fs, ino));
}

/* At close: the files still held that no name reaches go. */
int ops_release_all(struct sufs_fs *fs)
{
	int err = 0, e;

	while (fs->nholds) {
		uint32_t ino = fs->holds[--fs->nholds].ino;
		if (writable(fs) == 0 && (e = orphan_free(fs, ino)) != 0 && !err)
			err = e;
	}
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
	return 0;
}

static int is_dot(const char *name, size_t len)
{
	return (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.');
}

/* The root's ".": what sufs_namei_parent() makes of "/" */
static int is_root_dot(uint32_t dir, const char *name, size_t len)
{
	return dir == SUFS_ROOT_INO && len == 1 && name[0] == '.';
}

/* Load a directory that a name goes into or out of. */
static int load_parent(struct sufs_fs *fs, uint32_t dir, struct sufs_inode *din)
{
	int err = writable(fs);

	if (!err)
		err = load_live(fs, dir, din);
	if (!err && !S_ISDIR(din->mode))
		err = -ENOTDIR;
	if (!err && din->links == 0)
		err = -ENOENT; /* removed */
	return err;
}

/* A directory's times after a change of its entries: outside the ordering. */
static int touch_dir(struct sufs_fs *fs, uint32_t dir, struct sufs_inode *din,
		     const struct waits *iw)
{
	set_now(fs, din, 0, 1, 1);
	return inode_store(fs, dir, din, UPD_INODEDEP, iw, NULL);
}

/*
 * Make a new inode of the given mode and name it in dir.  Rule 1 in order:
 * the bitmap bit, then the initialised inode (with whatever init() made for
 * it: a directory's first block, a symlink's block), then the entry; for a
 * directory also the parent's raised link count before the entry.
 */
typedef int (*init_fn)(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in,
		       uint32_t dir, const void *arg, struct waits *iw);

static int make_node(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len,
		     uint32_t mode, const struct sufs_cred *cred, init_fn init,
		     const void *arg, uint32_t *out)
{
	struct sufs_inode din, in;
	struct waits iw = { 0 }, ew = { 0 }, dw = { 0 };
	uint32_t ino, other;
	upd_id bit, id;
	int is_dir = S_ISDIR(mode), err;

	err = check_name(name, len);
	if (!err && is_dot(name, len))
		err = -EEXIST;
	if (!err)
		err = load_parent(fs, dir, &din);
	if (err)
		return err;
	err = dir_lookup(fs, dir, &din, name, len, &other);
	if (err != -ENOENT)
		return err ? err : -EEXIST;
	if (is_dir && din.links >= SUFS_LINK_MAX)
		return -EMLINK;
	err = alloc_inode(fs, dir, is_dir, &ino, &bit);
	if (err)
		return err;
	waits_add(&iw, bit);
	memset(&in, 0, sizeof(in));
	in.mode = (uint16_t)mode;
	in.links = is_dir ? 2 : 1;
	in.uid = cred ? cred->uid : 0;
	in.gid = cred ? cred->gid : 0;
	in.generation = fs->next_generation++;
	set_now(fs, &in, 1, 1, 1);
	in.crtime = in.ctime;
	in.crtime_ns = in.ctime_ns;
	err = init ? init(fs, ino, &in, dir, arg, &iw) : 0;
	if (!err)
		err = inode_store(fs, ino, &in, UPD_INODEDEP, &iw, &id);
	if (err) {
		free_inode(fs, ino, is_dir); /* nothing on disk can point to it yet */
		return err;
	}
	if (fs->broken_rule != 1)
		waits_add(&ew, id);
	if (is_dir) {
		din.links++; /* the child's ".." */
		err = inode_store(fs, dir, &din, UPD_INODEDEP, NULL, &id);
		waits_add(&ew, id);
	}
	if (!err)
		err = dir_add(fs, dir, &din, name, len, ino, sufs_ftype_of_mode(mode), &ew, &dw,
			      NULL);
	if (err) {
		/* no name reaches the new inode: give it back */
		if (is_dir) {
			din.links--;
			inode_store(fs, dir, &din, UPD_INODEDEP, NULL, NULL);
		}
		inode_free(fs, ino, &in, NULL);
		return err;
	}
	err = touch_dir(fs, dir, &din, &dw);
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
	if (!err)
		err = make_node(fs, dir, name, len, mode, cred, NULL, NULL, ino);
	return fs_op_end(fs, err);
}

struct rdev {
	uint32_t major, minor;
};

static int init_node(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, uint32_t dir,
		     const void *arg, struct waits *iw)
{
	const struct rdev *r = arg;
	(void)fs; (void)ino; (void)dir; (void)iw;
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
	return fs_op_end(fs, make_node(fs, dir, name, len, mode & (S_IFMT | 07777), cred,
				       init_node, &r, ino));
}

static int init_dir(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, uint32_t dir,
		    const void *arg, struct waits *iw)
{
	(void)arg;
	return dir_init(fs, ino, in, dir, iw);
}

int sufs_mkdir(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len, uint32_t mode,
	       const struct sufs_cred *cred, uint32_t *ino)
{
	int err = perm_only(mode, S_IFDIR, &mode);
	if (!err)
		err = make_node(fs, dir, name, len, mode, cred, init_dir, NULL, ino);
	return fs_op_end(fs, err);
}

struct target {
	const char *s;
	size_t len;
};

/* A symlink's target: in the inode when short, else in one data block that
 * the pointer to it waits for. */
static int init_symlink(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, uint32_t dir,
			const void *arg, struct waits *iw)
{
	const struct target *t = arg;
	struct waits pw = { 0 };
	uint64_t pblk;
	struct buf *b;
	int err;

	(void)dir;
	in->size = t->len;
	if (t->len <= SUFS_FAST_SYMLINK_MAX) {
		fast_target_set(in, t->s, t->len);
		return 0;
	}
	err = block_new(fs, inode_goal(fs, ino), BUF_DATA, UPD_DATA, &pblk, &b, &pw);
	if (err)
		return err;
	memcpy(b->data, t->s, t->len);
	buf_put(fs, b);
	return bmap_set(fs, in, 0, pblk, pblk, &pw, iw, NULL);
}

int sufs_symlink(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len,
		 const char *target, const struct sufs_cred *cred, uint32_t *ino)
{
	struct target t = { target, target ? strlen(target) : 0 };

	if (t.len == 0)
		return -ENOENT;
	if (t.len >= SUFS_PATH_MAX || t.len > fs->bsize)
		return -ENAMETOOLONG;
	return fs_op_end(fs, make_node(fs, dir, name, len, S_IFLNK | 0777, cred, init_symlink,
				       &t, ino));
}

static int do_link(struct sufs_fs *fs, uint32_t ino, uint32_t dir, const char *name, size_t len)
{
	struct sufs_inode din, in;
	struct waits ew = { 0 }, dw = { 0 };
	uint32_t other;
	upd_id id;
	int err = check_name(name, len);

	if (!err && is_dot(name, len))
		err = -EEXIST;
	if (!err)
		err = load_parent(fs, dir, &din);
	if (!err)
		err = load_mutable(fs, ino, &in);
	if (err)
		return err;
	if (S_ISDIR(in.mode))
		return -EPERM;
	if (in.links == 0)
		return -ENOENT; /* unlinked, held open: gone for names */
	if (in.links >= SUFS_LINK_MAX)
		return -EMLINK;
	err = dir_lookup(fs, dir, &din, name, len, &other);
	if (err != -ENOENT)
		return err ? err : -EEXIST;
	/* rule 1: the link count goes up before the new name exists */
	in.links++;
	set_now(fs, &in, 0, 0, 1);
	err = inode_store(fs, ino, &in, UPD_INODEDEP, NULL, &id);
	if (err)
		return err;
	waits_add(&ew, id);
	err = dir_add(fs, dir, &din, name, len, ino, sufs_ftype_of_mode(in.mode), &ew, &dw, NULL);
	if (err) {
		in.links--;
		inode_store(fs, ino, &in, UPD_INODEDEP, NULL, NULL);
		return err;
	}
	return touch_dir(fs, dir, &din, &dw);
}

int sufs_link(struct sufs_fs *fs, uint32_t ino, uint32_t dir, const char *name, size_t len)
{
	return fs_op_end(fs, do_link(fs, ino, dir, name, len));
}

/* ---- removing names ------------------------------------------------------------ */

/*
 * Drop one link of ino once removal (the update that took a name away) is
 * on disk (rule 3).  A directory, or a file at its last link, is freed.
 */
static int drop_link(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, upd_id removal)
{
	struct waits w = { 0 };

	waits_add(&w, removal);
	/* a file still held open keeps its inode and blocks, with no link,
	 * until sufs_release() (a crash leaves it as a leak) */
	if (S_ISDIR(in->mode) || (in->links <= 1 && !hold_count(fs, ino)))
		return inode_free(fs, ino, in, &w);
	in->links--;
	set_now(fs, in, 0, 0, 1);
	return inode_store(fs, ino, in, UPD_INODEDEP, &w, NULL);
}

/*
 * A directory that rename moved keeps its old name on disk until its new
 * name and its ".." are there.  Until that removal is on disk, a change
 * that takes away one of its other names (rmdir, rename over it) or gives
 * it a third (moving it again) waits for it: so a crash never leaves a
 * directory named only where its ".." does not point, nor with more than
 * two names (fsck keeps the one ".." confirms, a leak fix).  The engine
 * keeps the removals, filed under the directory's inode number
 * (deps_note()); a wait for the newest is enough: each move's removal
 * waits for its new name, which waited for the removals pending before
 * it, so the newest reaches the disk last.
 */
static int moved_note(struct sufs_fs *fs, uint32_t ino, upd_id removal)
{
	return deps_note(fs, ino, removal);
}

static void moved_wait(struct sufs_fs *fs, uint32_t ino, struct waits *w)
{
	waits_add(w, deps_noted(fs, ino));
}

/* The update that frees ino's inode bytes, if pending (to wait for it). */
static upd_id inode_last_update(struct sufs_fs *fs, uint32_t ino)
{
	struct sufs_group_layout l;
	uint32_t g = (ino - 1) / fs->sb.inodes_per_group, idx, off;
	struct buf *b;

	idx = (ino - 1) % fs->sb.inodes_per_group;
	sufs_group_layout(&fs->sb, g, &l);
	b = cache_lookup(fs, l.inode_table + idx / fs->inodes_per_block);
	off = (idx % fs->inodes_per_block) * SUFS_INODE_SIZE;
	return b ? deps_last_over(b, off, SUFS_INODE_SIZE) : 0;
}

static int do_unlink(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len, int rmdir)
{
	struct sufs_inode din, in;
	uint32_t ino, old;
	upd_id removal;
	struct waits pw = { 0 }, rw = { 0 };
	int err = check_name(name, len);

	if (!err && is_dot(name, len))
		err = !rmdir ? -EISDIR : len == 2 ? -ENOTEMPTY
			: is_root_dot(dir, name, len) ? -EBUSY : -EINVAL;
	if (!err)
		err = load_parent(fs, dir, &din);
	if (!err)
		err = dir_lookup(fs, dir, &din, name, len, &ino);
	if (!err && !inode_valid_ino(fs, ino))
		err = -SUFS_ECORRUPT;
	if (!err)
		err = load_mutable(fs, ino, &in);
	if (err)
		return err;
	if (rmdir) {
		if (!S_ISDIR(in.mode))
			return -ENOTDIR;
		if (ino == SUFS_ROOT_INO)
			return -EBUSY;
		err = dir_is_empty(fs, ino, &in);
		if (err <= 0)
			return err < 0 ? err : -ENOTEMPTY;
	} else if (S_ISDIR(in.mode)) {
		return -EISDIR;
	}
	/* the name ".." confirms goes after any other a rename left */
	if (rmdir)
		moved_wait(fs, ino, &rw);
	/* rule 3: the name goes first; the link count follows it to disk */
	err = dir_set(fs, dir, &din, name, len, 0, 0, UPD_DIRREM, &rw, &old, &removal);
	if (!err)
		err = drop_link(fs, ino, &in, removal);
	if (!err && rmdir) {
		/* the parent loses the child's ".." once the child's name is gone
		 * on disk: a directory no name reaches has a ".." that counts for
		 * nothing (fsck moves it to /lost+found, a leak).  Waiting for the
		 * child's inode instead would chain a tree's removal into one
		 * epoch per level. */
		waits_add(&pw, removal);
		din.links--;
		err = inode_store(fs, dir, &din, UPD_INODEDEP, &pw, NULL);
	}
	if (!err)
		err = touch_dir(fs, dir, &din, NULL);
	return err;
}

int sufs_unlink(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len)
{
	return fs_op_end(fs, do_unlink(fs, dir, name, len, 0));
}

int sufs_rmdir(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len)
{
	return fs_op_end(fs, do_unlink(fs, dir, name, len, 1));
}

/* ---- rename ------------------------------------------------------------------------- */

/* Is dir inside the tree of top (or top itself)?  Walks ".." up to the root. */
static int is_within(struct sufs_fs *fs, uint32_t dir, uint32_t top)
{
	unsigned depth = 0;
	uint32_t up;
	int err;

	while (dir != top) {
		if (dir == SUFS_ROOT_INO)
			return 0;
		err = sufs_lookup(fs, dir, "..", 2, &up);
		if (err)
			return err;
		if (up == dir || ++depth > fs->sb.inodes_count)
			return -SUFS_ECORRUPT;
		dir = up;
	}
	return 1;
}

static int do_rename(struct sufs_fs *fs, uint32_t sdir, const char *sname, size_t slen,
		     uint32_t ddir, const char *dname, size_t dlen)
{
	struct sufs_inode sdin, ddin, in, tin;
	struct waits w = { 0 }, dw = { 0 };
	uint32_t ino, tino = 0, old;
	upd_id raised, named, removed, id, dotdot = 0, src = 0;
	int is_dir, moving, err;

	err = check_name(sname, slen);
	if (!err)
		err = check_name(dname, dlen);
	if (!err && (is_root_dot(sdir, sname, slen) || is_root_dot(ddir, dname, dlen)))
		err = -EBUSY; /* the root: "/" */
	if (!err && (is_dot(sname, slen) || is_dot(dname, dlen)))
		err = -EINVAL;
	if (!err)
		err = load_parent(fs, sdir, &sdin);
	if (!err)
		err = load_parent(fs, ddir, &ddin);
	if (!err)
		err = dir_lookup(fs, sdir, &sdin, sname, slen, &ino);
	if (!err && !inode_valid_ino(fs, ino))
		err = -SUFS_ECORRUPT; /* an entry naming an inode the image cannot have */
	if (!err)
		err = load_mutable(fs, ino, &in);
	if (!err && snap_dir_pinned(fs, sdir, sname, slen))
		err = -EPERM;
	if (err)
		return err;
	is_dir = S_ISDIR(in.mode);
	moving = is_dir && sdir != ddir;
	if (moving) {
		err = is_within(fs, ddir, ino);
		if (err)
			return err < 0 ? err : -EINVAL;
	}
	err = dir_lookup(fs, ddir, &ddin, dname, dlen, &tino);
	if (err == -ENOENT)
		tino = 0;
	else if (err)
		return err;
	else if (!inode_valid_ino(fs, tino))
		return -SUFS_ECORRUPT;
	if (tino == ino)
		return 0; /* two names of one file: nothing to do */
	if (tino) {
		err = load_mutable(fs, tino, &tin);
		if (err)
			return err;
		if (S_ISDIR(tin.mode) && !is_dir)
			return -EISDIR;
		if (!S_ISDIR(tin.mode) && is_dir)
			return -ENOTDIR;
		if (S_ISDIR(tin.mode)) {
			err = dir_is_empty(fs, tino, &tin);
			if (err <= 0)
				return err < 0 ? err : -ENOTEMPTY;
		}
	}
	if (moving && !tino && ddin.links >= SUFS_LINK_MAX)
		return -EMLINK;

	/* a directory's new name waits for its old one to be on disk (if that
	 * is still on its way), so that its ".." always confirms a name that
	 * is on disk, and its parent's raised link count is there before any
	 * name of it; ... */
	if (is_dir && (err = dir_entry_pending(fs, sdir, &sdin, sname, slen, &src)) != 0)
		return err;
	/* ... the link count goes up before the new name exists (rule 1) ... */
	in.links++;
	set_now(fs, &in, 0, 0, 1);
	err = inode_store(fs, ino, &in, UPD_INODEDEP, NULL, &raised);
	if (err)
		return err;
	waits_add(&w, raised);
	waits_add(&w, src);
	/* ... the new name, over the old target's if there is one (a replaced
	 * directory's other pending names go first, as in rmdir) ... */
	if (tino && S_ISDIR(tin.mode))
		moved_wait(fs, tino, &w);
	if (moving)
		moved_wait(fs, ino, &w); /* a third name waits too */
	if (tino)
		err = dir_set(fs, ddir, &ddin, dname, dlen, ino, sufs_ftype_of_mode(in.mode),
			      UPD_DIRADD, &w, &old, &named);
	else
		err = dir_add(fs, ddir, &ddin, dname, dlen, ino, sufs_ftype_of_mode(in.mode), &w,
			      &dw, &named);
	if (err) {
		in.links--;
		inode_store(fs, ino, &in, UPD_INODEDEP, NULL, NULL);
		return err;
	}
	err = touch_dir(fs, ddir, &ddin, &dw);
	w.n = 0;
	waits_add(&w, named);
	if (!err && moving) {
		/* A moved directory's ".." names the new parent once the new name
		 * is on disk, and the new parent's link count for it is raised
		 * before that (rule 1); the old name goes only after (below), so
		 * that at any crash the name ".." confirms is on disk. */
		if (!tino) {
			err = load_live(fs, ddir, &ddin);
			if (!err) {
				ddin.links++;
				err = inode_store(fs, ddir, &ddin, UPD_INODEDEP, NULL, &id);
				waits_add(&w, id);
			}
		} /* else the replaced directory's ".." link passes to us */
		if (!err)
			err = dir_set(fs, ino, &in, "..", 2, ddir, SUFS_FT_DIR, UPD_DIRADD, &w, &old,
				      &dotdot);
		w.n = 0;
		waits_add(&w, named);
		waits_add(&w, dotdot);
	}
	/* ... then the old name goes, only once the new one is on disk (rule 3) ... */
	if (fs->broken_rule == 3)
		w.n = 0;
	if (!err && sdir == ddir)
		err = load_live(fs, sdir, &sdin); /* the directory may have grown */
	if (!err)
		err = dir_set(fs, sdir, &sdin, sname, slen, 0, 0, UPD_DIRREM, &w, &old, &removed);
	if (!err && moving)
		err = moved_note(fs, ino, removed);
	if (err)
		return err;
	/* ... and the link count comes down after it */
	w.n = 0;
	waits_add(&w, removed);
	in.links--;
	err = inode_store(fs, ino, &in, UPD_INODEDEP, &w, NULL);
	/* the target lost its name to the new entry */
	if (!err && tino)
		err = drop_link(fs, tino, &tin, named);
	if (!err && moving) {
		/* the old parent loses the ".." link once ".." has moved on disk */
		w.n = 0;
		waits_add(&w, dotdot);
		err = load_live(fs, sdir, &sdin);
		if (!err) {
			sdin.links--;
			err = inode_store(fs, sdir, &sdin, UPD_INODEDEP, &w, NULL);
		}
	} else if (!err && tino && S_ISDIR(tin.mode)) {
		/* a directory replaced in place: its ".." link to ddir goes with it */
		w.n = 0;
		waits_add(&w, inode_last_update(fs, tino));
		err = load_live(fs, ddir, &ddin);
		if (!err) {
			ddin.links--;
			err = inode_store(fs, ddir, &ddin, UPD_INODEDEP, &w, NULL);
		}
	}
	if (!err && sdir != ddir) {
		err = load_live(fs, sdir, &sdin);
		if (!err)
			err = touch_dir(fs, sdir, &sdin, NULL);
	}
	return err;
}

int sufs_rename(struct sufs_fs *fs, uint32_t sdir, const char *sname, size_t slen,
		uint32_t ddir, const char *dname, size_t dlen)
{
	return fs_op_end(fs, do_rename(fs, sdir, sname, slen, ddir, dname, dlen));
}

/* ---- file contents and attributes ---------------------------------------------- */

/*
 * Write len bytes at off.  A new block is filled before the pointer to it
 * is set, and the pointer waits for the block's contents and bitmap bit
 * (rule 1); a block being overwritten is just changed.
 */
static int do_write(struct sufs_fs *fs, uint32_t ino, uint64_t off, const void *buf, size_t len)
{
	struct sufs_inode in;
	struct waits iw = { 0 }, pw;
	const uint8_t *src = buf;
	uint64_t pblk, goal, maxbytes;
	struct buf *b;
	int err = writable(fs);

	if (!err)
		err = load_mutable(fs, ino, &in);
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
		uint64_t lblk = off >> fs->bshift;

		err = bmap_get(fs, &in, lblk, &pblk);
		if (err)
			break;
		if (!pblk) {
			pw.n = 0;
			err = bmap_room(fs, &in, lblk, 1);
			if (!err)
				err = bmap_set(fs, &in, lblk, 0, goal, NULL, &iw, NULL);
			if (!err)
				err = block_new(fs, goal, BUF_DATA, UPD_DATA, &pblk, &b, &pw);
			if (err)
				break;
			memcpy(b->data + boff, src, n); /* part of the new block's update */
			buf_put(fs, b);
			err = bmap_set(fs, &in, lblk, pblk, goal, &pw, &iw, NULL);
		} else {
			err = n == fs->bsize ? buf_get_new(fs, pblk, BUF_DATA, &b)
					     : buf_get(fs, pblk, BUF_DATA, &b);
			if (err)
				break;
			buf_update(fs, b, boff, (uint32_t)n, UPD_DATA, NULL);
			memcpy(b->data + boff, src, n);
			buf_put(fs, b);
		}
		if (err)
			break;
		goal = pblk + 1;
		src += n;
		off += n;
		len -= n;
		if (off > in.size)
			in.size = off;
	}
	/* what was written so far stays written, error or not */
	set_now(fs, &in, 0, 1, 1);
	if (inode_store(fs, ino, &in, UPD_INODEDEP, &iw, NULL) && !err)
		err = -EIO;
	return err;
}

int sufs_write(struct sufs_fs *fs, uint32_t ino, uint64_t off, const void *buf, size_t len)
{
	return fs_op_end(fs, do_write(fs, ino, off, buf, len));
}

/*
 * Cut out of the tree under ptr (an indirect block of the given level
 * mapping logical blocks from base) the blocks of [lo, hi).  Freed blocks
 * go to f; the pointer clearing in this block waits for nothing and goes
 * into w (the frees wait for it).  *whole says the block itself goes too:
 * all it maps lies in the range.  (A truncate cuts [keep, UINT64_MAX).)
 */
static int trunc_tree(struct sufs_fs *fs, uint64_t ptr, int level, uint64_t base,
		      uint64_t lo, uint64_t hi, struct freeing *f, struct waits *w, int *whole)
{
	uint64_t span = 1, child;
	uint32_t i, first = UINT32_MAX, last = 0;
	struct buf *b;
	int err, gone, l;

	for (l = 1; l < level; l++)
		span *= fs->ptrs;
	*whole = base >= lo && hi - base >= span * fs->ptrs;
	if (*whole) {
		struct sufs_inode one = { 0 };
		one.mode = S_IFREG;
		one.block[SUFS_IND + level - 1] = ptr;
		/* the whole subtree: walk it as if it hung from an inode */
		return inode_walk(fs, 0, &one, collect_fn, &f->blocks);
	}
	if (!block_in_range(fs, ptr))
		return -SUFS_ECORRUPT;
	for (i = 0; i < fs->ptrs; i++) {
		uint64_t start = base + i * span;
		if (start + span <= lo || start >= hi)
			continue;
		if (start >= lo && hi - start >= span)
			last = i; /* the last slot wholly in the range */
		err = buf_get(fs, ptr, BUF_IND, &b);
		if (err)
			return err;
		child = get64(b->data + IND_PTR(i));
		buf_put(fs, b);
		if (!child)
			continue;
		if (level == 1) {
			gone = 1;
			err = blist_add(&f->blocks, child);
		} else {
			err = trunc_tree(fs, child, level - 1, start, lo, hi, f, w, &gone);
		}
		if (err)
			return err;
		if (gone && first == UINT32_MAX)
			first = i;
	}
	if (first != UINT32_MAX) {
		err = buf_get(fs, ptr, BUF_IND, &b);
		if (err)
			return err;
		waits_add(w, buf_update(fs, b, IND_PTR(first), IND_PTR(last + 1 - first), UPD_FREEBLKS,
					NULL));
		memset(b->data + IND_PTR(first), 0, IND_PTR(last + 1 - first));
		buf_put(fs, b);
	}
	return 0;
}

/*
 * Free the blocks of logical blocks [lo, hi) of an inode: their pointers
 * are cleared now, the blocks go back once that is on disk (rule 2).  The
 * inode's store (with whatever else the caller changed in it) is part of
 * the same wait.
 */
static int free_range(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, uint64_t lo,
		      uint64_t hi)
{
	uint64_t p = fs->ptrs;
	uint64_t first[3] = { SUFS_NDIR, SUFS_NDIR + p, SUFS_NDIR + p + p * p };
	struct freeing *f = calloc(1, sizeof(*f));
	struct waits w = { 0 };
	upd_id id;
	uint32_t i;
	int err = 0, whole;

	if (!f)
		return -ENOMEM;
	for (i = 0; i < SUFS_NDIR && !err; i++) {
		if (i >= lo && i < hi && in->block[i]) {
			err = blist_add(&f->blocks, in->block[i]);
			in->block[i] = 0;
		}
	}
	for (i = 0; i < 3 && !err; i++) {
		if (!in->block[SUFS_IND + i])
			continue;
		err = trunc_tree(fs, in->block[SUFS_IND + i], (int)i + 1, first[i], lo, hi, f, &w,
				 &whole);
		if (!err && whole)
			in->block[SUFS_IND + i] = 0;
	}
	if (err)
		goto fail;
	in->blocks = in->blocks > f->blocks.n ? in->blocks - f->blocks.n : 0;
	set_now(fs, in, 0, 1, 1);
	err = inode_store(fs, ino, in, UPD_FREEBLKS, NULL, &id);
	if (err)
		goto fail;
	waits_add(&w, id);
	return deps_defer(fs, w.id, w.n, freeing_run, f);
fail:
	free(f->blocks.blk);
	free(f);
	return err;
}

/* Zero bytes [from, to) of the block of lblk, if it has one: a block
 * partly in a range cut out keeps its other bytes. */
static int zero_part(struct sufs_fs *fs, const struct sufs_inode *in, uint64_t lblk,
		     uint32_t from, uint32_t to)
{
	uint64_t pblk;
	struct buf *b;
	int err;

	if (from >= to || bmap_get(fs, in, lblk, &pblk) != 0 || !pblk)
		return 0;
	err = buf_get(fs, pblk, BUF_DATA, &b);
	if (err)
		return err;
	buf_update(fs, b, from, to - from, UPD_DATA, NULL);
	memset(b->data + from, 0, to - from);
	buf_put(fs, b);
	return 0;
}

/*
 * Truncate to size.  Growing leaves a hole.  Shrinking zeroes the tail of
 * the last block kept, clears the pointers to what goes, and frees those
 * blocks only once the cleared pointers are on disk (rule 2).
 */
static int do_truncate(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, uint64_t size)
{
	uint64_t keep = (size + fs->bsize - 1) >> fs->bshift;
	uint32_t tail = (uint32_t)(size & (fs->bsize - 1));
	int err;

	if (size >= in->size) {
		in->size = size;
		return 0;
	}
	if (tail && (err = zero_part(fs, in, keep - 1, tail, fs->bsize)) != 0)
		return err;
	in->size = size;
	return free_range(fs, ino, in, keep, UINT64_MAX);
}

/*
 * Punch a hole: bytes [off, off + len) read as zeros afterwards, the blocks
 * wholly inside go back (once their pointers are cleared on disk), the
 * size stays (fallocate's PUNCH_HOLE | KEEP_SIZE).
 */
static int do_punch(struct sufs_fs *fs, uint32_t ino, uint64_t off, uint64_t len)
{
	struct sufs_inode in;
	uint64_t end, lo, hi, bmask = fs->bsize - 1;
	int err = writable(fs);

	if (!err)
		err = load_mutable(fs, ino, &in);
	if (err)
		return err;
	if (S_ISDIR(in.mode))
		return -EISDIR;
	if (!S_ISREG(in.mode))
		return -EINVAL;
	if (len == 0)
		return 0;
	end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
	if (end > in.size)
		end = in.size; /* nothing past the end to zero */
	if (off >= end)
		return 0;
	lo = (off + bmask) >> fs->bshift;           /* the first whole block */
	hi = end == in.size ? (end + bmask) >> fs->bshift : end >> fs->bshift;
	if ((off >> fs->bshift) == (end >> fs->bshift) && end != in.size) {
		/* within one block */
		err = zero_part(fs, &in, off >> fs->bshift, (uint32_t)(off & bmask),
				(uint32_t)(end & bmask));
	} else {
		if (off & bmask)
			err = zero_part(fs, &in, off >> fs->bshift, (uint32_t)(off & bmask),
					fs->bsize);
		if (!err && (end & bmask) && end != in.size)
			err = zero_part(fs, &in, end >> fs->bshift, 0, (uint32_t)(end & bmask));
	}
	if (err)
		return err;
	return free_range(fs, ino, &in, lo, hi > lo ? hi : lo);
}

int sufs_punch(struct sufs_fs *fs, uint32_t ino, uint64_t off, uint64_t len)
{
	return fs_op_end(fs, do_punch(fs, ino, off, len));
}

/* Free the blocks an inode maps past its size (a leak the background check
 * found: a truncation cut short by a crash). */
int ops_trim_inode(struct sufs_fs *fs, uint32_t ino)
{
	struct sufs_inode in;
	uint64_t size;
	int err = load_live(fs, ino, &in);

	if (err || !(S_ISREG(in.mode) || S_ISDIR(in.mode)))
		return err;
	size = in.size;
	in.size = UINT64_MAX; /* so that everything past size goes */
	return do_truncate(fs, ino, &in, size);
}

static int do_setattr(struct sufs_fs *fs, uint32_t ino, const struct sufs_setattr *sa)
{
	struct sufs_inode in;
	int err = writable(fs);

	if (!err)
		err = load_mutable(fs, ino, &in);
	if (err)
		return err;
	if ((sa->mask & SUFS_SET_ATIME && sa->atime_ns >= 1000000000u) ||
	    (sa->mask & SUFS_SET_MTIME && sa->mtime_ns >= 1000000000u) ||
	    (sa->mask & SUFS_SET_CTIME && sa->ctime_ns >= 1000000000u))
		return -EINVAL;
	if (sa->mask & SUFS_SET_SIZE) {
		if (S_ISDIR(in.mode))
			return -EISDIR;
		if (!S_ISREG(in.mode))
			return -EINVAL;
		if (sa->size > (inode_max_blocks(fs) << fs->bshift))
			return -EFBIG;
		if (sa->size != in.size) {
			err = do_truncate(fs, ino, &in, sa->size);
			if (err)
				return err;
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
	return inode_store(fs, ino, &in, UPD_INODEDEP, NULL, NULL);
}

int sufs_setattr(struct sufs_fs *fs, uint32_t ino, const struct sufs_setattr *sa)
{
	return fs_op_end(fs, do_setattr(fs, ino, sa));
}

int sufs_truncate(struct sufs_fs *fs, uint32_t ino, uint64_t size)
{
	struct sufs_setattr sa = { .mask = SUFS_SET_SIZE, .size = size };
	return sufs_setattr(fs, ino, &sa);
}

/* ---- fsync ---------------------------------------------------------------------------- */

struct idlist {
	upd_id *id;
	size_t n, cap;
};

static int idlist_add(struct idlist *l, upd_id id)
{
	if (l->n == l->cap) {
		size_t cap = l->cap * 2 + 64;
		upd_id *p = realloc(l->id, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		l->id = p;
		l->cap = cap;
	}
	l->id[l->n++] = id;
	return 0;
}

/* Add id unless it is there already (a short list: directories up a path). */
static int idlist_add_new(struct idlist *l, upd_id id)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->id[i] == id)
			return 0;
	return idlist_add(l, id);
}

static int collect_id(void *arg, struct buf *b, uint32_t off, uint32_t len, upd_id id)
{
	(void)b; (void)off; (void)len;
	return idlist_add(arg, id);
}

/* The pending updates of one cached block, or of a byte range of it. */
static int add_block(struct sufs_fs *fs, uint64_t blk, uint32_t off, uint32_t len,
		     struct idlist *l)
{
	struct buf *b = cache_lookup(fs, blk);

	return b ? deps_collect(fs, b, off, len, 0, collect_id, l) : 0;
}

static int fsync_block_fn(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
			  int level, int bad, void *arg)
{
	(void)ino; (void)lblk; (void)level;
	return bad ? 0 : add_block(fs, pblk, 0, fs->bsize, arg);
}

static int add_inode(struct sufs_fs *fs, uint32_t ino, struct idlist *l)
{
	struct sufs_group_layout lay;
	uint32_t g = (ino - 1) / fs->sb.inodes_per_group, idx = (ino - 1) % fs->sb.inodes_per_group;

	sufs_group_layout(&fs->sb, g, &lay);
	return add_block(fs, lay.inode_table + idx / fs->inodes_per_block,
			 (idx % fs->inodes_per_block) * SUFS_INODE_SIZE, SUFS_INODE_SIZE, l);
}

/* What add_names() looks for, and where it puts what it finds. */
struct names_of {
	uint32_t ino, bsize;
	struct idlist *l, *dirs;
};

/* A pending new entry, or a new directory's first block: each entry in its
 * range that names the inode (an inode number lies at an 8-byte boundary)
 * counts, but "." and "..", which do not make it reachable from the root. */
static int name_fn(void *arg, struct buf *b, uint32_t off, uint32_t len, upd_id id)
{
	struct names_of *w = arg;
	uint32_t o;
	int err = 0;

	if (b->type != BUF_DIR || len < 4)
		return 0;
	for (o = off & ~7u; o + 4 <= off + len && !err; o += 8) {
		const uint8_t *de = b->data + o;

		if (o < off || get32(de + DE_INO) != w->ino)
			continue;
		if (o + SUFS_DIRENT_HDR + 2 <= w->bsize && de[DE_NAME] == '.' &&
		    (de[DE_NAMELEN] == 1 || (de[DE_NAMELEN] == 2 && de[DE_NAME + 1] == '.')))
			continue;
		err = idlist_add(w->l, id);
		if (!err && b->owner && b->owner != w->ino)
			err = idlist_add_new(w->dirs, b->owner);
	}
	return err;
}

/*
 * Pending entries that name ino: their updates, and the directories that
 * hold them (to walk up to the root).
 */
static int add_names(struct sufs_fs *fs, uint32_t ino, struct idlist *l, struct idlist *dirs)
{
	struct names_of w = { ino, fs->bsize, l, dirs };

	return deps_collect(fs, NULL, 0, 0, DEPS_KIND(UPD_DIRADD) | DEPS_KIND(UPD_MKDIR),
			    name_fn, &w);
}

/* The directory that dir's ".." names, to walk up to the root, and the
 * pending change of that ".." (the name on disk that ".." confirms is the
 * one fsck keeps). */
static int add_parent(struct sufs_fs *fs, uint32_t dir, struct idlist *l, struct idlist *dirs)
{
	struct sufs_inode din;
	uint32_t up;
	upd_id id = 0;
	int err;

	if (dir == SUFS_ROOT_INO)
		return 0;
	err = load_live(fs, dir, &din);
	if (!err && (!S_ISDIR(din.mode) || din.links == 0))
		return 0; /* a stale hint: the number went to something else */
	if (!err)
		err = dir_lookup(fs, dir, &din, "..", 2, &up);
	if (!err)
		err = dir_entry_pending(fs, dir, &din, "..", 2, &id);
	if (err)
		return err == -ENOENT ? 0 : err;
	if (id && (err = idlist_add(l, id)) != 0)
		return err;
	return idlist_add_new(dirs, up);
}

/* The directory a file was last named in, if it still is a directory. */
static int add_hint(struct sufs_fs *fs, uint32_t dir, struct idlist *dirs)
{
	struct sufs_inode din;

	if (!inode_valid_ino(fs, dir) || load_live(fs, dir, &din) != 0 ||
	    !S_ISDIR(din.mode) || din.links == 0)
		return 0;
	return idlist_add_new(dirs, dir);
}

static int do_fsync(struct sufs_fs *fs, uint32_t ino)
{
	struct sufs_inode in;
	struct idlist l = { 0 }, dirs = { 0 };
	size_t i;
	int err = load_live(fs, ino, &in);

	if (err || !(fs->flags & SUFS_OPEN_RDWR))
		return err;
	if (fs->mode == SUFS_MODE_ASYNC)
		return sufs_sync(fs); /* no ordering to follow: everything */
	err = inode_walk(fs, ino, &in, fsync_block_fn, &l);
	if (!err)
		err = add_inode(fs, ino, &l);
	if (!err)
		err = add_names(fs, ino, &l, &dirs);
	if (!err && S_ISDIR(in.mode))
		err = add_parent(fs, ino, &l, &dirs);
	else if (!err && parent_hint(fs, ino))
		/* its name may be on disk in a directory whose own is not (the
		 * hint may be stale: add_parent() walks up only from a directory) */
		err = add_hint(fs, parent_hint(fs, ino), &dirs);
	/* the directories on the way up to the root: their inodes and their
	 * own names, pending or not (a name on disk may sit in a directory
	 * whose own name is still on its way) */
	for (i = 0; i < dirs.n && !err && i < 4096; i++) {
		err = add_inode(fs, (uint32_t)dirs.id[i], &l);
		if (!err)
			err = add_names(fs, (uint32_t)dirs.id[i], &l, &dirs);
		if (!err)
			err = add_parent(fs, (uint32_t)dirs.id[i], &l, &dirs);
	}
	free(dirs.id);
	if (err) {
		free(l.id);
		return err;
	}
	if (!l.n) {
		free(l.id);
		return 0;
	}
	return deps_flush_set(fs, l.id, l.n);
}

int sufs_fsync(struct sufs_fs *fs, uint32_t ino)
{
	return do_fsync(fs, ino);
}
